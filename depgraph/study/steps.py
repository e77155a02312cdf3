"""The step-by-step commands' work, one function each, on either engine: ``depgraph derive``
(:func:`derive_file`) and ``depgraph folds`` (:func:`fold_file`) read their input file, run their stage and write
their output, as :func:`~depgraph.study.run.run_declaration` does for a whole declaration. A command parses its
options and calls one of these.

On the single machine a file is read and written in either form (JSON, columnar). With ``engine="spark"`` the input
is read by Spark from its columnar form (a graph every element checked in Spark; a spec checked on the driver by the
single-machine reader, then its sample columns read by Spark), the stage runs in Spark, and Spark writes the output
in the columnar form: the file the single machine writes, with the same digest and signature. Each step is named
for a failure of the engine in it (``Spark could not derive relatedness groups: …``, code ``engine``) and shown by
``progress`` (the command line's progress line) while it runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from depgraph.audit.composition import fold_composition
from depgraph.common.display import Progress, quietly
from depgraph.engines import running
from depgraph.errors import DepgraphError
from depgraph.folds.parameters import PARAMETERS_BY_NAME
from depgraph.folds.schemes import assign_folds
from depgraph.io.outputs import Outputs
from depgraph.spec.digest import signing_key_fingerprint
from depgraph.spec.files import read_spec, write_spec


class Written(NamedTuple):
    """What a step wrote: its ``result`` (``derive``: the partition; ``folds``: the plan's outline, as
    :meth:`~depgraph.spec.model.FoldPlan.outline` gives it) and the fingerprint of the key that signed it (None:
    unsigned)."""

    result: Any
    key_fingerprint: str | None


def derive_file(
    graph_file: str | os.PathLike[str], output: str | os.PathLike[str], mode: str, *, plan: Outputs, form: str,
    samples: str | os.PathLike[str] | None = None, encoding: str | None = None,
    attributes: str | list[str] | None = None, pseudonym_key: bytes | None = None, sign_key: bytes | None = None,
    engine: str = "single", settings: dict[str, Any] | None = None, progress: Progress = quietly, **options: Any,
) -> Written:  # fmt: skip
    """``depgraph derive``: the graph at ``graph_file`` read, one group per sample derived in ``mode`` (``options``:
    :func:`~depgraph.derivation.groups.derive`'s) for every sample or those the ``samples`` list names, and the spec
    — carrying ``attributes``, its ids pseudonymised under ``pseudonym_key``, signed with ``sign_key`` — written to
    ``output`` in ``form``, declared in ``plan`` (checked before any work)."""
    # loaded here, not with the module: depgraph folds derives nothing, and starts without scipy
    from depgraph.derivation.groups import derive, selected_samples
    from depgraph.graph.files import read_graph
    from depgraph.ingest.samplelists import read_sample_list, refuse_headerless
    from depgraph.spec.privacy import derived_spec

    _columnar_on(engine, form)
    graph_file, output = Path(graph_file), Path(output)
    subset, header = read_sample_list(samples, encoding) if samples is not None else (None, None)
    with running(engine, settings) as run:
        on = _where(engine)
        with run.step(f"read {graph_file.name}"), progress(f"reading {graph_file.name}{on}"):
            graph = read_graph(graph_file, engine=engine, **run.options)
        with run.step(f"derive {mode} groups"), progress(f"deriving {mode} groups{on}"):
            if samples is not None:  # its unknown ids named with the file they came from, once
                refuse_headerless(graph, Path(samples), header)
                selected_samples(graph, subset, what=f"samples file {str(samples)!r}")
            partition = derive(graph, mode, samples=subset, **options)
        with run.step(f"write {output.name}"), progress(f"writing {output.name}"), plan:
            write_spec(derived_spec(partition, graph, attributes, pseudonym_key), output, form, sign_key)
    return _written(partition, sign_key)


def fold_file(
    spec_file: str | os.PathLike[str], output: str | os.PathLike[str], scheme: str, parameters: dict[str, Any], *,
    plan: Outputs, form: str, sign_key: bytes | None = None, engine: str = "single",
    settings: dict[str, Any] | None = None, progress: Progress = quietly,
) -> Written:  # fmt: skip
    """``depgraph folds``: the spec at ``spec_file`` read (every check of a reader), folds of ``scheme`` assigned
    with ``parameters`` (:func:`~depgraph.folds.schemes.assign_folds`'; a parameter taking a spec, ``prior``, may be
    given its path: it is read on this machine with every check), and the spec carrying them, signed with
    ``sign_key``, written to ``output`` in ``form``, declared in ``plan`` (checked before any work)."""
    parameters = {name: _read_if_spec(name, value) for name, value in parameters.items()}  # refused first
    _columnar_on(engine, form)
    spec_file, output = Path(spec_file), Path(output)
    with running(engine, settings) as run:
        on = _where(engine)
        with run.step(f"read {spec_file.name}"), progress(f"reading {spec_file.name}{on}"):
            spec = read_spec(spec_file, engine=engine, **run.options)
        with run.step(f"assign {scheme} folds"), progress(f"assigning {scheme} folds{on}"):
            planned = assign_folds(spec, scheme, **parameters)
        with run.step(f"write {output.name}"), progress(f"writing {output.name}"), plan:
            write_spec(planned, output, form, sign_key)
    outline = planned.folds.outline()
    outline["composition"] = fold_composition(planned).lines()  # the factors the folds track are warned about
    return _written(outline, sign_key)


def _read_if_spec(name: str, value: Any) -> Any:
    """A fold parameter's value, read when it names the file of a spec the parameter takes."""
    known = PARAMETERS_BY_NAME.get(name)  # an unknown one is refused by assign_folds, naming the scheme's
    if known is not None and known.reads == "spec" and isinstance(value, (str, os.PathLike)):
        return read_spec(value)
    return value


def _columnar_on(engine: str, form: str) -> None:
    if engine != "single" and form != "parquet":
        raise DepgraphError(
            "invalid_argument", f"the {engine} engine writes the columnar form: name the output S.dgspec"
        )


def _where(engine: str) -> str:
    """How a progress line says where a step runs: nothing on this machine, `` in Spark`` on Spark."""
    return "" if engine == "single" else f" in {engine.capitalize()}"


def _written(result: Any, sign_key: bytes | None) -> Written:
    return Written(result, None if sign_key is None else signing_key_fingerprint(sign_key))
