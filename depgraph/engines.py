"""The engines a stage can run on, and where each engine's part of each stage lives.

One public function per stage (``depgraph.derive``, ``depgraph.assign_folds``, ``depgraph.write_spec``) serves
every engine: it checks its arguments once, then hands
the checked request to the engine of the value it was given, as networkx dispatches on a graph's backend. A value
says its engine with ``__depgraph_engine__`` (a :class:`~depgraph.spark.graph.SparkGraph` and a
:class:`~depgraph.spark.spec.SparkSpec` say ``"spark"``; a :class:`~depgraph.graph.model.StudyGraph` and a
:class:`~depgraph.spec.model.SplitSpec`, the single-machine engine's, say nothing). The engine's module is loaded
by name when a value of it is met, so no stage imports a later layer, and the single machine never loads pyspark.

>>> engine_of(object()) is None
True
>>> ENGINES["spark"]["derive"]
'depgraph.spark.derive'
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from depgraph.errors import EXTRAS, DepgraphError, missing_extra

#: Each engine beyond the single machine: the module holding its part of each stage, by the stage's name. A stage's
#: module offers ``<stage>_request(value, request, **engine_options)``.
ENGINES: dict[str, dict[str, str]] = {
    "spark": {
        "derive": "depgraph.spark.derive",
        "assign_folds": "depgraph.spark.spec",
        "write_spec": "depgraph.spark.spec",
        "pseudonymize": "depgraph.spark.privacy",
        "spec": "depgraph.spark.spec",
        "graph": "depgraph.spark.graph",
        "session": "depgraph.spark.session",
        "read_graph": "depgraph.spark.graph",
        "read_spec": "depgraph.spark.spec",
        "exposure": "depgraph.spark.exposure",
        "fold_composition": "depgraph.spark.composition",
        "validate": "depgraph.spark.validation",
        **dict.fromkeys(
            ["from_metadata", "add_kinship", "add_duplicates", "add_relations", "add_spatial"], "depgraph.spark.tables"
        ),
    },
}
#: The engine of a table a library holds, by the library's top-level package: a Spark DataFrame's is Spark.
TABLE_ENGINES: dict[str, str] = {"pyspark": "spark"}
#: The engines a user names: ``engine = "spark"`` in a study file, ``--engine spark`` on the command line.
ENGINE_NAMES: tuple[str, ...] = ("single", *ENGINES)


def engine_of(value: Any) -> str | None:
    """The engine a value belongs to (None: the single machine's)."""
    name = getattr(type(value), "__depgraph_engine__", None)
    return name if isinstance(name, str) else None


def checked_engine(engine: Any) -> str:
    """``engine`` as a name of :data:`ENGINE_NAMES` (any case); ``invalid_argument`` for anything else.

    >>> checked_engine("Spark")
    'spark'
    """
    name = engine.lower() if isinstance(engine, str) else engine
    names = ("single", *ENGINES)  # (read now: an engine may be added after import, as the tests' stand-in is)
    if name not in names:
        raise DepgraphError("invalid_argument", f"engine is {' or '.join(map(repr, names))}, not {engine!r}")
    return name


def engine_of_table(table: Any) -> str | None:
    """The engine a table belongs to (None: the single machine's, which reads every other table and file).

    >>> engine_of_table("metadata.csv") is None
    True
    """
    return TABLE_ENGINES.get(type(table).__module__.partition(".")[0])


def stage(engine: str, name: str) -> ModuleType:
    """The module of ``engine``'s part of stage ``name``, loaded now; ``engine`` when it has none."""
    module = ENGINES.get(engine, {}).get(name)
    if module is None:
        raise DepgraphError("engine", f"the {engine} engine has no {name} stage")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:  # the engine's optional extra (pyspark) not installed: a user's to fix
        missing = missing_extra(f"the {engine} engine", engine, exc) if engine in EXTRAS else exc
        if missing is exc:
            raise
        raise DepgraphError("engine", str(missing)) from None


@dataclass
class EngineRun:
    """An engine started for several stages (``depgraph run``, ``derive``, ``folds``): the options its stages take
    (``options``: none on the single machine; Spark's session), and the step it is at (``doing``: what a failure of
    the engine itself says it could not do)."""

    engine: str
    options: dict[str, Any] = field(default_factory=dict)
    doing: str = "start"

    @contextlib.contextmanager
    def step(self, doing: str) -> Iterator[None]:
        """A step of the run, named for a failure of the engine in it: ``Spark could not <doing>: …``."""
        self.doing = doing
        yield


@contextlib.contextmanager
def running(engine: str, settings: dict[str, Any] | None = None) -> Iterator[EngineRun]:
    """``engine`` started for a run of several stages, with ``settings`` (Spark's ``master`` and ``conf``); a
    failure of the engine itself, not of the input, is raised as ``engine`` naming the step it could not do."""
    run = EngineRun(engine)
    if engine == "single":
        yield run
        return
    with stage(engine, "session").session_request(run, **(settings or {})):
        yield run


def graph_on(graph: Any, engine: str, **options: Any) -> Any:
    """``graph`` (a :class:`~depgraph.graph.model.StudyGraph`, built and validated here) as a graph of ``engine``,
    which the stages after it then run on."""
    if engine == "single":
        return graph
    return stage(engine, "graph").graph_request(graph, **options)
