"""The commands' ``--engine`` choice and, with ``--engine spark``, the Spark session they run in: its options
(``--master``, ``--spark-conf``), and one line (code ``engine``) for a failure of Spark rather than of the input."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import typer

from depgraph.cli.commandline import canonical, refuse_given, stage
from depgraph.engines import ENGINE_NAMES
from depgraph.errors import DepgraphError, missing_extra

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


def spark_settings(pairs: list[str] | None) -> dict[str, str]:
    """``--spark-conf key=value`` options as settings; each a ``spark.*`` key given once."""
    settings: dict[str, str] = {}
    for item in pairs or []:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key.startswith("spark.") or not value:
            raise DepgraphError("invalid_argument", f"--spark-conf takes spark.key=value, got {item!r}")
        if key in settings:
            raise DepgraphError("invalid_argument", f"--spark-conf sets {key} twice ({settings[key]!r}, {value!r})")
        settings[key] = value
    return settings


class SparkRun:
    """A command's run on Spark: the session it starts (or spark-submit's), sized to the data unless
    ``--spark-conf`` sizes it, and the step it is at, so a failure of Spark is one line naming the step::

        with SparkRun(command, master, settings) as run:
            with run.step("read graph.dggraph", "reading graph.dggraph in Spark"):
                ...
    """

    def __init__(self, command: str, master: str | None, settings: dict[str, str]) -> None:
        self.command, self.master, self.settings = command, master, settings
        self.doing = "start"
        self.session: Any = None

    def __enter__(self) -> SparkRun:
        try:  # the optional extra, loaded only for this engine
            from depgraph.spark.session import local_session, submitted
        except ModuleNotFoundError as exc:
            missing = missing_extra(f"{self.command} --engine spark", "spark", exc)
            if missing is exc:
                raise
            raise DepgraphError("engine", str(missing)) from None
        if self.master or not submitted():
            self.doing = f"start on {self.master or 'local[2]'}"
        try:  # a failure here never reaches __exit__
            with self.step(self.doing, "starting Spark"):
                self.session = local_session(self.master, self.settings, quiet=True)
        except Exception as exc:
            self.__exit__(type(exc), exc, None)
            raise
        return self

    @contextmanager
    def step(self, doing: str, label: str) -> Iterator[None]:
        """A step of the run: what a failure of Spark says it could not do, and the stage the CLI shows."""
        self.doing = doing
        with stage(label):
            yield

    def fit(self, n_samples: int) -> None:
        """Size the shuffle partitions to ``n_samples`` for a session the command started, unless set."""
        from depgraph.spark.session import fit_partitions, submitted

        if not submitted() and "spark.sql.shuffle.partitions" not in self.settings:
            fit_partitions(self.session, n_samples)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        if exc is None:
            return
        from depgraph.spark.session import failure

        reason = failure(exc)  # Spark's own failures as one line; depgraph's and Python's pass as they are
        if reason is not None:
            raise DepgraphError("engine", f"Spark could not {self.doing}: {reason}") from None
