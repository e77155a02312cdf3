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

import importlib
from types import ModuleType
from typing import Any

from depgraph.errors import DepgraphError

#: Each engine beyond the single machine: the module holding its part of each stage, by the stage's name. A stage's
#: module offers ``<stage>_request(value, request, **engine_options)``.
ENGINES: dict[str, dict[str, str]] = {
    "spark": {
        "derive": "depgraph.spark.derive",
        "assign_folds": "depgraph.spark.spec",
        "write_spec": "depgraph.spark.spec",
        "pseudonymize": "depgraph.spark.privacy",
    },
}


def engine_of(value: Any) -> str | None:
    """The engine a value belongs to (None: the single machine's)."""
    name = getattr(type(value), "__depgraph_engine__", None)
    return name if isinstance(name, str) else None


def stage(engine: str, name: str) -> ModuleType:
    """The module of ``engine``'s part of stage ``name``, loaded now; ``engine`` when it has none."""
    module = ENGINES.get(engine, {}).get(name)
    if module is None:
        raise DepgraphError("engine", f"the {engine} engine has no {name} stage")
    return importlib.import_module(module)
