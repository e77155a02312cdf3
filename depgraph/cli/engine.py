"""The commands' ``--engine`` choice and, with ``--engine spark``, the options of the Spark session they run in
(``--master``, ``--spark-conf``): parsed here, the session started by :func:`depgraph.engines.running` (a failure of
Spark rather than of the input is one line, code ``engine``)."""

from __future__ import annotations

from typing import Any

import typer

from depgraph.cli.commandline import canonical, refuse_given
from depgraph.engines import ENGINE_NAMES
from depgraph.errors import DepgraphError

ENGINE_OPTION = typer.Option(
    metavar="single|spark", help="single (this process) or spark (Apache Spark: .dggraph and .dgspec files)."
)
MASTER_OPTION = typer.Option(
    metavar="URL", help="With --engine spark: the Spark master (default local[2]; spark-submit's own)."
)
SPARK_CONF_OPTION = typer.Option(
    "--spark-conf", metavar="KEY=VALUE",
    help="With --engine spark: a Spark setting, repeatable (e.g. spark.driver.memory=4g).",
)  # fmt: skip


def chosen_engine(ctx: typer.Context, engine: str) -> str:
    """``--engine``, checked (``--master`` and ``--spark-conf`` only with spark)."""
    chosen = canonical(engine, "_")
    if chosen not in ENGINE_NAMES:
        raise DepgraphError("invalid_argument", f"--engine is {' or '.join(ENGINE_NAMES)}, not {engine!r}")
    if chosen != "spark":
        refuse_given(ctx, "without --engine spark", "master", "spark_conf")
    return chosen


def spark_settings(master: str | None, pairs: list[str] | None) -> dict[str, Any]:
    """``--master`` and the ``--spark-conf key=value`` options, as :func:`depgraph.engines.running` takes them;
    each setting a ``spark.*`` key given once."""
    settings: dict[str, str] = {}
    for item in pairs or []:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key.startswith("spark.") or not value:
            raise DepgraphError("invalid_argument", f"--spark-conf takes spark.key=value, got {item!r}")
        if key in settings:
            raise DepgraphError("invalid_argument", f"--spark-conf sets {key} twice ({settings[key]!r}, {value!r})")
        settings[key] = value
    return {"master": master, "conf": settings}
