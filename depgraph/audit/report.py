"""Plots and a self-contained HTML report a reviewer can open offline.

:func:`figures` draws, with matplotlib (part of the base install):

* ``group_sizes`` — how many groups hold 1, 2, 3… samples;
* ``folds`` — train / test / excluded samples per split and, with a stratum,
  each split's test share of every category against the whole;
* ``exposure`` — per declared relation, the dependencies kept whole, spread
  over groups, and crossing a split (needs the graph);
* ``graph`` — a drawing of the study graph, for graphs of at most
  ``DRAW_LIMIT`` nodes;
* ``time`` — samples per ``order_rank``, split into the first split's roles.

:func:`write_report` writes one HTML file with every figure embedded as a
PNG data URI, the spec's summary, warnings, fold balance and the exposure
tables; :func:`save_figures` writes the figures as PNG and SVG files.

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abc"), "group_id": list("xxy")}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> sorted(figures(spec))
['group_sizes']
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import io
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from depgraph.audit.composition import factor_columns, fold_composition
from depgraph.audit.evaluation import ALL_BLOCKS, EvaluationReport
from depgraph.audit.exposure import ExposureReport, exposure
from depgraph.common.arguments import instance
from depgraph.errors import DepgraphError
from depgraph.graph.model import StudyGraph
from depgraph.io.outputs import Outputs, atomic_write_bytes
from depgraph.spec.model import ROLES, FoldPlan, SplitSpec
from depgraph.vocab import NodeType

DRAW_LIMIT = 500
ROLE_COLOURS = {"train": "#4C72B0", "test": "#DD8452", "excluded": "#B0B0B0"}
TYPE_COLOURS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C",
                "#CCB974", "#64B5CD", "#2F4B7C"]  # fmt: skip


def _matplotlib() -> Any:
    """matplotlib, loaded when the first figure is drawn so that ``import depgraph`` stays quick. It is a
    dependency of depgraph's base install: without it the install is broken, and the error says how to mend it."""
    try:
        import matplotlib
        import matplotlib.figure
    except ImportError as exc:
        raise DepgraphError(
            "invalid_argument",
            "the report's figures need matplotlib, which depgraph's install includes: pip install matplotlib",
        ) from exc
    return matplotlib


def _figure(width: float = 7.0, height: float = 3.6) -> Any:
    return _matplotlib().figure.Figure(figsize=(width, height), layout="constrained")


def figures(
    spec: SplitSpec,
    graph: StudyGraph | None = None,
    report: ExposureReport | None = None,
    evaluation: EvaluationReport | None = None,
) -> dict[str, Any]:
    """The report's matplotlib figures, by name (see the module docs). Text from the spec or the
    graph is drawn as written: ``$`` starts no formula (a crafted label cannot break the drawing).

    The spec comes first, though ``exposure(graph, spec)`` puts the graph first: a report is of a spec, and the
    graph is an optional addition (its exposure and drawing), so it follows as an argument one may leave out."""
    with _plain_text():
        out = _figures(spec, graph, report)
        if evaluation is not None and len(evaluation.scores):
            out["scores"] = _scores(evaluation)
            if evaluation.probabilities:
                out["reliability"] = _reliability(evaluation)
        return out


@contextlib.contextmanager
def _plain_text() -> Iterator[None]:
    """Matplotlib reads ``$…$`` in any label as mathtext and fails on a malformed one; names,
    categories and titles from a file are text, never formulas."""
    with _matplotlib().rc_context({"text.parse_math": False}):
        yield


def _figures(spec: SplitSpec, graph: StudyGraph | None, report: ExposureReport | None) -> dict[str, Any]:
    out = {"group_sizes": _group_sizes(spec)}
    if spec.folds is not None:
        out["folds"] = _folds(spec)
    if graph is not None:
        report = report or exposure(graph, spec)
        if len(report.table):
            out["exposure"] = _exposure(report)
        if graph.n_nodes <= DRAW_LIMIT:
            out["graph"] = _graph(graph, spec)
    if "order_rank" in spec.samples.columns and spec.samples["order_rank"].notna().any():
        out["time"] = _time(spec)
    return out


def _group_sizes(spec: SplitSpec) -> Any:
    sizes = spec.samples.groupby("group_id").size()
    counts = sizes.value_counts().sort_index()
    fig = _figure()
    ax = fig.add_subplot()
    ax.bar(counts.index.astype(str), counts.to_numpy(), color="#4C72B0")
    ax.set_xlabel("samples in the group")
    ax.set_ylabel("groups")
    ax.set_title(f"{len(sizes)} groups for {spec.n_samples} samples ({spec.constraint.mode})")
    if len(counts) > 25:
        ax.set_xticks(ax.get_xticks()[:: max(1, len(counts) // 20)])
    return fig


def split_label(split: Any, plan: Any) -> str:
    """A split as a reader names it: ``fold 2``, or ``repeat 1, fold 2`` when the plan repeats (numbers as in the
    spec and the fold table, from 0)."""
    repeated = any(s.repeat for s in plan.splits)
    return f"repeat {split.repeat}, fold {split.fold}" if repeated else f"fold {split.fold}"


def _folds(spec: SplitSpec) -> Any:
    plan = spec.folds
    labels = [split_label(s, plan) for s in plan.splits]
    strata = balance_columns(plan)
    column = next(iter(strata), None)
    fig = _figure(8, 3.8 if column is None else 6.5)
    ax = fig.add_subplot(1 if column is None else 2, 1, 1)
    bottom = np.zeros(len(labels))
    for role in ROLES:
        values = np.array([getattr(s, f"n_{role}") for s in plan.splits])
        ax.bar(labels, values, bottom=bottom, label=role, color=ROLE_COLOURS[role])
        bottom += values
    ax.tick_params(axis="x", labelrotation=30 if len(labels) > 6 else 0)
    ax.set_ylabel("samples")
    ax.set_title(f"{plan.scheme}: {len(labels)} split(s)")
    ax.legend(fontsize=8, **OUTSIDE)
    if column is not None:
        metrics = strata[column]
        ax2 = fig.add_subplot(2, 1, 2)
        shares = np.array(metrics["test_proportion"])
        x = np.arange(len(labels))
        width = 0.8 / max(1, shares.shape[1])
        for k, category in enumerate(metrics["categories"]):
            ax2.bar(x + k * width, shares[:, k], width, label=str(category))
            ax2.axhline(metrics["overall"][k], color="black", linewidth=0.6, linestyle="--")
        ax2.set_xticks(x + 0.4 - width / 2, labels)
        ax2.set_ylabel(f"test share of {column}")
        ax2.set_title(f"worst deviation from the whole (dashed): {metrics['worst_proportion_deviation']}")
        ax2.legend(fontsize=7, ncols=max(1, len(metrics["categories"]) // 12), **OUTSIDE)
    return fig


def _scores(evaluation: EvaluationReport) -> Any:
    """Test scores per block, negatives beside positives, and the range of the splits' training thresholds: a
    block whose scores sit apart from the others' shows here even when its AUC is high."""
    scores = evaluation.scores
    blocks = sorted(scores["block"].unique().tolist())
    fig = _figure(max(5.0, 1.2 + 1.1 * len(blocks)), 3.8)
    ax = fig.add_subplot()
    for offset, positive, colour in ((-0.18, False, "#4C72B0"), (0.18, True, "#DD8452")):
        data = [scores["score"][(scores["block"] == b) & (scores["positive"] == positive)].to_numpy() for b in blocks]
        drawn = [i for i, d in enumerate(data) if len(d)]
        if drawn:
            parts = ax.boxplot(
                [data[i] for i in drawn], positions=np.array(drawn) + offset, widths=0.3, patch_artist=True,
                showfliers=False, manage_ticks=False,
            )  # fmt: skip
            for box in parts["boxes"]:
                box.set_facecolor(colour)
        ax.plot([], [], color=colour, linewidth=6, label="positive" if positive else "negative")
    low, high = evaluation.table["threshold"].min(), evaluation.table["threshold"].max()
    if high > low:
        ax.axhspan(low, high, color="#C44E52", alpha=0.15)
    else:
        ax.axhline(low, color="#C44E52")
    ax.plot([], [], color="#C44E52", label="training threshold(s)")
    ax.set_xticks(range(len(blocks)), blocks, rotation=30 if len(blocks) > 6 else 0)
    ax.set_ylabel("test score")
    ax.set_title(f"Test scores per {evaluation.by or 'split side'}")
    ax.legend(fontsize=8, **OUTSIDE)
    return fig


#: Where every legend goes: beside the axes, never over the data.
OUTSIDE: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.02, 1), "borderaxespad": 0}
#: The reliability curve's bins of predicted probability.
RELIABILITY_BINS = 10
#: At most this many blocks' curves are drawn (the title says when there are more).
RELIABILITY_BLOCKS = 12


def _reliability(evaluation: EvaluationReport) -> Any:
    """Observed share of positives against the mean predicted probability, in tenths of the probability, per
    block (every split's test rows pooled): a well-calibrated block follows the diagonal."""
    scores = evaluation.scores
    fig = _figure(5.5, 4.2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8, label="perfect calibration")
    bins = np.minimum((scores["score"].to_numpy() * RELIABILITY_BINS).astype(int), RELIABILITY_BINS - 1)
    blocks = sorted(scores["block"].unique().tolist())
    for block in blocks[:RELIABILITY_BLOCKS]:
        at = (scores["block"] == block).to_numpy()
        per_bin = pd.DataFrame({"bin": bins[at], "p": scores["score"][at], "y": scores["positive"][at]})
        curve = per_bin.groupby("bin").agg(p=("p", "mean"), y=("y", "mean"))
        # matplotlib leaves a label starting with "_" out of the legend: a space keeps the block named
        label = f" {block}" if str(block).startswith("_") else str(block)
        ax.plot(curve["p"], curve["y"], marker="o", markersize=3, linewidth=1, label=label)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability (tenths)")
    ax.set_ylabel("observed share of positives")
    shown = f" (the first {RELIABILITY_BLOCKS} of {len(blocks)})" if len(blocks) > RELIABILITY_BLOCKS else ""
    ax.set_title(f"Reliability per {evaluation.by or 'split side'}{shown}, test rows pooled")
    # beside the axes, never over the curves
    ax.legend(fontsize=7, **OUTSIDE)
    return fig


def _comparison(table: pd.DataFrame) -> Any:
    """Each grouping's number of groups and its largest group's share of the samples, side by side."""
    fig = _figure(8, 3.4)
    names = [str(g) for g in table["grouping"]]
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    left.bar(names, table["groups"], color="#4C72B0")
    left.set_ylabel("groups")
    left.set_title("groups per grouping")
    right.bar(names, table["largest_share"], color="#DD8452")
    right.set_ylim(0, 1)
    right.set_ylabel("share of the samples")
    right.set_title("the largest group's share")
    for ax in (left, right):
        ax.tick_params(axis="x", labelrotation=30 if len(names) > 3 else 0)
    return fig


def _exposure(report: ExposureReport) -> Any:
    table = report.table
    fig = _figure(8, 0.5 + 0.45 * len(table))
    ax = fig.add_subplot()
    y = np.arange(len(table))
    ax.barh(y, table["kept_whole"], color="#55A868", label="kept whole (one group)")
    spread = table["spread_over_groups"]
    ax.barh(y, spread, left=table["kept_whole"], color="#DD8452", label="spread over groups (may cross)")
    if table["crossing"].notna().any():
        ax.scatter(
            table["crossing"].fillna(0), y, color="#C44E52", marker="|", s=300, label="crossing a split", zorder=3
        )
    ax.set_yticks(y, table["relation"])
    ax.invert_yaxis()
    ax.set_xlabel("dependencies (entities or pairs linking ≥ 2 samples)")
    ax.legend(fontsize=8, **OUTSIDE)
    return fig


def _graph(graph: StudyGraph, spec: SplitSpec) -> Any:
    import networkx as nx

    view = graph.to_networkx().to_undirected()
    positions = nx.spring_layout(view, seed=1, k=1 / np.sqrt(max(1, view.number_of_nodes())))
    types = list(dict.fromkeys(data["type"] for _, data in view.nodes(data=True)))
    fig = _figure(8, 6)
    ax = fig.add_subplot()
    nx.draw_networkx_edges(view, positions, ax=ax, width=0.5, alpha=0.4)
    for k, node_type in enumerate(types):
        nodes = [n for n, data in view.nodes(data=True) if data["type"] == node_type]
        size = 25 if node_type == NodeType.SAMPLE.value else 45  # samples are many: smaller
        nx.draw_networkx_nodes(view, positions, nodelist=nodes, ax=ax, node_size=size,
                               node_color=TYPE_COLOURS[k % len(TYPE_COLOURS)], label=node_type)  # fmt: skip
    ax.legend(fontsize=7, markerscale=0.8, **OUTSIDE)
    ax.set_axis_off()
    ax.set_title(f"study graph: {graph.n_nodes} nodes, {graph.n_edges} edges")
    return fig


def _time(spec: SplitSpec) -> Any:
    rank = spec.samples["order_rank"]
    known = rank.notna().to_numpy()
    fig = _figure()
    ax = fig.add_subplot()
    levels = np.sort(rank[known].astype(int).unique())
    if spec.folds is not None and spec.folds.splits:
        role = spec.folds.splits[0].roles(spec.n_samples)
        bottom = np.zeros(len(levels))
        for code, name in enumerate(ROLES):
            counts = pd.Series(rank[known & (role == code)].astype(int)).value_counts().reindex(levels, fill_value=0)
            ax.bar(levels.astype(str), counts.to_numpy(), bottom=bottom, color=ROLE_COLOURS[name], label=name)
            bottom += counts.to_numpy()
        ax.legend(fontsize=8, **OUTSIDE)
        ax.set_title("samples per order_rank, roles in the first split")
    else:
        counts = pd.Series(rank[known].astype(int)).value_counts().reindex(levels, fill_value=0)
        ax.bar(levels.astype(str), counts.to_numpy(), color="#4C72B0")
        ax.set_title("samples per order_rank")
    ax.set_xlabel("order_rank")
    ax.set_ylabel("samples")
    return fig


def _encode(fig: Any, fmt: str = "png") -> bytes:
    """The figure's bytes, the same for the same figure: no creation date, a
    fixed salt for SVG element ids (matplotlib would otherwise pick both anew)."""
    matplotlib = _matplotlib()
    buffer = io.BytesIO()
    metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    with matplotlib.rc_context({"svg.hashsalt": "depgraph", "svg.fonttype": "path", "text.parse_math": False}):
        fig.savefig(buffer, format=fmt, dpi=110, metadata=metadata)
    return buffer.getvalue()


def save_figures(
    figs: dict[str, Any], directory: str | os.PathLike[str], formats: tuple[str, ...] = ("png", "svg")
) -> list[Path]:
    """Write each figure as ``<name>.<format>`` into ``directory``, all or none: a failure leaves none."""
    unknown = sorted(set(formats) - {"png", "svg"})
    if unknown:
        raise DepgraphError("invalid_argument", f"figures are written as png or svg, not {', '.join(unknown)}")
    target = Path(directory)
    written = []
    with Outputs() as plan:  # within a command's plan, the figures commit with the command's other outputs
        plan.directory(target, "plot directory")
        for name, fig in figs.items():
            for fmt in formats:
                atomic_write_bytes(target / f"{name}.{fmt}", _encode(fig, fmt))
                written.append(target / f"{name}.{fmt}")
    return written


# --------------------------------------------------------------------------- HTML
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:980px;color:#222;
line-height:1.45}h1{font-size:1.5rem}h2{font-size:1.15rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;
margin-top:2rem}table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}td,th{border:1px solid #ddd;
padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f4f4f4}img{max-width:100%;height:auto}
.warning{color:#8a5300}.advisory{color:#2a5d84}.error{color:#a00}.ok{color:#1d7a35}.mono{font-family:ui-monospace,
monospace;font-size:.8rem}
"""
# A reader (or a test in a headless browser) can see that every image decoded.
_SCRIPT = (
    "window.addEventListener('load',function(){var i=[].slice.call(document.images);"
    "document.body.setAttribute('data-images',i.length);document.body.setAttribute('data-images-ok',"
    "i.every(function(x){return x.complete&&x.naturalWidth>0}));});"
)


def _csp_hash(text: str) -> str:
    """A Content-Security-Policy source allowing exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


#: The page runs its one inline script and applies its one inline style (both by hash), shows images only
#: from data: URIs, and loads, submits or embeds nothing else: markup that slipped into the page could
#: neither run nor fetch anything.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; script-src {_csp_hash(_SCRIPT)}; style-src {_csp_hash(_STYLE)}; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


def render_html(
    spec: SplitSpec,
    graph: StudyGraph | None = None,
    title: str | None = None,
    evaluation: EvaluationReport | None = None,
    comparison: pd.DataFrame | None = None,
) -> str:
    """The report as one HTML document (images embedded, no external resource). ``comparison``: groupings side by
    side (what :func:`depgraph.compare` returns), shown as a table and a figure.

    Every value read from the spec or the graph (names, ids, messages, scheme, parameters, columns,
    balance keys and values, exposure examples) is HTML-escaped, and a Content-Security-Policy
    (:data:`CONTENT_SECURITY_POLICY`) forbids any script but the page's own.
    """
    instance(spec, SplitSpec, "the report's spec")
    instance(title, (str, type(None)), "title")
    instance(evaluation, (EvaluationReport, type(None)), "the report's evaluation")
    instance(comparison, (pd.DataFrame, type(None)), "the report's comparison")
    report = exposure(graph, spec) if graph is not None else None
    figs = figures(spec, graph, report, evaluation)
    if comparison is not None:
        with _plain_text():
            figs["comparison"] = _comparison(comparison)
    c = spec.constraint
    how = f"{c.mode}/{c.strategy}" if c.strategy else c.mode
    title = title or f"depgraph report: {spec.graph_name or 'study'} ({how})"
    parts = [f"<h1>{_e(title)}</h1>", _summary_table(spec, how)]
    if spec.warnings:
        items = "".join(
            f"<li class='{_e(w.severity)}'><b>{_e(w.code)}</b>: {_e(w.message)}</li>" for w in spec.warnings
        )
        parts.append(f"<h2>Findings of the derivation</h2><ul>{items}</ul>")
    parts.append("<h2>Group sizes</h2>" + _img(figs["group_sizes"], "group sizes") + _largest_groups(spec))
    if spec.folds is not None:
        parts.append(_folds_section(spec, figs["folds"]))
    if report is not None:
        parts.append(_exposure_section(report, figs.get("exposure")))
    if comparison is not None:
        parts.append(_comparison_section(comparison, figs["comparison"]))
    if evaluation is not None:
        parts.append(_evaluation_section(evaluation, figs))
    if "time" in figs:
        parts.append("<h2>Time ordering</h2>" + _img(figs["time"], "samples per order rank"))
    if "graph" in figs:
        parts.append("<h2>The study graph</h2>" + _img(figs["graph"], "study graph"))
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CONTENT_SECURITY_POLICY}\">"
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>{body}<script>{_SCRIPT}</script>"
        "</body></html>"
    )


def _summary_table(spec: SplitSpec, how: str) -> str:
    """The spec at a glance: mode, samples, groups, relations, recommended resampling, format and digest."""
    c, s = spec.constraint, spec.summary
    groups = f"{s.n_groups:,} (largest {s.largest_group}: {s.largest_group_size:,}; {s.singletons:,} single-sample)"
    rows = [
        ("mode", _e(how)),
        ("samples", _e(f"{s.n_samples:,}")),
        ("groups", _e(groups)),
        ("relations followed", _e(", ".join(c.relations) or "—")),
        ("recommended resampling", _e(spec.recommended_resampling)),
        ("spec", f"format {_e(spec.format_version)}, digest <span class='mono'>{_e(spec.digest or '')}</span>"),
    ]
    return "<table>" + _rows(rows) + "</table>"


def balance_columns(plan: FoldPlan) -> dict[str, Mapping[str, Any]]:
    """A fold plan's balance metrics per column, checked before anything is drawn or shown from them.

    A spec is data: ``folds.balance`` of an edited spec may hold anything. Each column's metrics must be an
    object with numeric ``worst_proportion_deviation`` and ``worst_scaled_difference``, a non-empty
    ``categories`` list, ``overall`` (one share per category) and ``test_proportion`` (one row of shares per
    split); anything else is refused (``schema``) by name rather than drawn wrong.
    """
    columns = plan.balance.get("columns", {})
    if not isinstance(columns, Mapping):
        raise _malformed("columns", f"is {type(columns).__name__}, not an object of per-column metrics")
    for name, metrics in columns.items():
        where = f"columns[{name!r}]"
        if not isinstance(metrics, Mapping):
            raise _malformed(where, f"is {type(metrics).__name__}, not an object")
        for key in ("worst_proportion_deviation", "worst_scaled_difference"):
            if not _finite_numbers([metrics.get(key)]):
                raise _malformed(f"{where}.{key}", f"is {metrics.get(key)!r}, not a finite number")
        categories = metrics.get("categories")
        if not isinstance(categories, list) or not categories:
            raise _malformed(f"{where}.categories", "is not a non-empty list")
        overall = metrics.get("overall")
        if not isinstance(overall, list) or len(overall) != len(categories) or not _finite_numbers(overall):
            raise _malformed(f"{where}.overall", f"is not {len(categories)} finite number(s), one per category")
        rows = metrics.get("test_proportion")
        if (
            not isinstance(rows, list)
            or len(rows) != len(plan.splits)
            or not all(isinstance(r, list) and len(r) == len(categories) and _finite_numbers(r) for r in rows)
        ):
            raise _malformed(
                f"{where}.test_proportion",
                f"is not {len(plan.splits)} row(s) (one per split) of {len(categories)} finite number(s)",
            )
    return dict(columns)


def plan_findings(plan: FoldPlan) -> list[str]:
    """What a plan's balance says beyond its columns, as sentences for the report: how strongly the folds follow
    the outcome (hash folds on a key, covariate bins) and how balanced the joint cells of the balance columns are
    (balanced holdout). Checked like :func:`balance_columns`: a value of the wrong kind is refused (``schema``)."""
    lines = []
    association = plan.balance.get("association")
    if association is not None:
        if not isinstance(association, Mapping):
            raise _malformed("association", f"is {type(association).__name__}, not an object")
        v = association.get("cramers_v")
        if v is None:
            lines.append(f"fold–outcome association: not measured ({association.get('note', 'no outcome')})")
        elif not _finite_numbers([v]) or not isinstance(association.get("strong"), bool):
            raise _malformed("association", "holds no finite cramers_v and boolean strong")
        else:
            verdict = (
                "strong: each model is tested on an outcome mix unlike its training data, so the estimate is "
                "pessimistic"
                if association["strong"]
                else "weak"
            )
            lines.append(f"fold–outcome association (bias-corrected Cramér's V): {v} — {verdict}")
    cells = plan.balance.get("joint_cells")
    if cells is not None:
        keys = ("mean_abs_scaled_difference", "worst_abs_scaled_difference")
        mean, worst = (cells.get(k) if isinstance(cells, Mapping) else None for k in keys)
        if not all(isinstance(x, list) and len(x) == len(plan.splits) and _finite_numbers(x) for x in (mean, worst)):
            raise _malformed(
                "joint_cells", f"does not hold one mean and one worst number per split ({len(plan.splits)})"
            )
        lines += [
            f"split {i}: {cells.get('cells_summarised')} joint cells (pairs of categories of ≥ "
            f"{cells.get('min_samples')} samples): mean |scaled difference| {m}, worst {w}"
            for i, (m, w) in enumerate(zip(mean, worst, strict=True))
        ]
    return lines


def _finite_numbers(values: list[Any]) -> bool:
    return all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)  # JSON true is not a share
        for v in values
    )


def _malformed(field: str, problem: str) -> DepgraphError:
    return DepgraphError("schema", f"spec folds.balance.{field} {problem}", field=f"folds.balance.{field}")


def _folds_section(spec: SplitSpec, fig: Any) -> str:
    plan = spec.folds
    rows = "".join(
        f"<tr><td>{s.repeat}</td><td>{s.fold}</td><td>{s.n_train:,}</td><td>{s.n_test:,}</td><td>{s.n_excluded:,}</td></tr>"
        for s in plan.splits[:50]
    )
    more = f"<p>… and {len(plan.splits) - 50} more splits</p>" if len(plan.splits) > 50 else ""
    balance = "".join(
        f"<li>{_e(col)}: worst test-share deviation {_e(m['worst_proportion_deviation'])}, "
        f"worst scaled difference {_e(m['worst_scaled_difference'])}</li>"
        for col, m in balance_columns(plan).items()
    )
    balance += "".join(f"<li>{_e(line)}</li>" for line in plan_findings(plan))
    params = ", ".join(f"{k}={v}" for k, v in plan.parameters.items())
    return (
        f"<h2>Folds: {_e(plan.scheme)}</h2><p>{_e(params)}; seed {_e(plan.seed)}</p>"
        f"{_img(fig, 'fold sizes and balance')}<ul>{balance}</ul>"
        "<table><tr><th>repeat</th><th>fold</th><th>train</th><th>test</th><th>excluded</th></tr>"
        f"{rows}</table>{more}{_composition_section(spec)}"
    )


#: The composition tables show at most this many categories of a column (the largest), the rest summed as "other".
COMPOSITION_CATEGORIES = 8


#: The report lists this many of the largest groups with their make-up.
LARGEST_GROUPS = 10


def _distinct_with_unknown(values: pd.Series) -> int:
    return int(values.nunique(dropna=False))


def _largest_groups(spec: SplitSpec) -> str:
    """The largest groups' make-up, readable at any cohort size: samples, share of the cohort, and how many
    distinct values of each declared block each spans (a missing value counts as one: unknown is not none)."""
    columns = [c for c in factor_columns(spec.samples.columns) if c != "stratum"]
    table = spec.samples.groupby("group_id", sort=True).agg(
        samples=("sample_id", "size"),
        **{c.removesuffix("_group") + "s": (c, lambda v: v.nunique(dropna=False)) for c in columns},
    )
    table = table.sort_values("samples", ascending=False, kind="stable").head(LARGEST_GROUPS)
    table.insert(1, "share", [f"{n / spec.n_samples:.1%}" for n in table["samples"]])
    return f"<h3>The {len(table)} largest groups</h3>" + _html_table(table.reset_index(), LARGEST_GROUPS)


def _composition_section(spec: SplitSpec) -> str:
    """What each fold tests: samples and groups, the share of each category of the outcome and of each declared
    block, and Cramér's V between fold and block (:func:`~depgraph.audit.composition.fold_composition`)."""
    found = fold_composition(spec, warn=False)
    if found.association.empty and found.shares.empty:
        return ""
    lines = "".join(
        f"<li class='{'warning' if tracks else ''}'>{_e(line.strip())}</li>"
        for line, tracks in zip(found.lines(), found.association["tracks"], strict=True)
    )
    tables = "".join(
        f"<p><b>Share of each {_e(column)} among a fold's tests</b></p>"
        + _html_table(_top_shares(found.wide(column)), 50)
        for column in dict.fromkeys(found.shares["column"])
    )
    return (
        f"<h3>What each fold holds</h3><ul>{lines}</ul>"
        + _html_table(found.sizes, 50) + tables
    )  # fmt: skip


def _top_shares(wide: pd.DataFrame) -> pd.DataFrame:
    """The largest categories' shares as percentages, one column each, the others summed in ``other``."""
    order = wide.sum().sort_values(ascending=False, kind="stable").index
    shown = wide[order[:COMPOSITION_CATEGORIES]].copy()
    if len(order) > COMPOSITION_CATEGORIES:
        shown["(other categories)"] = wide[order[COMPOSITION_CATEGORIES:]].sum(axis=1)
    shown = (shown * 100).round(1).astype(str) + " %"
    return shown.reset_index()


def _comparison_section(table: pd.DataFrame, fig: Any) -> str:
    return (
        "<h2>Groupings compared</h2><p>Each grouping derived from the graph: its groups, its largest group, the folds "
        "it allows (⌊samples / largest⌋), the samples whose group differs from the first grouping's, and what it "
        "leaves exposed.</p>" + _img(fig, "groupings compared") + _html_table(table, 50)
    )


def _evaluation_section(evaluation: EvaluationReport, figs: dict[str, Any]) -> str:
    shown = evaluation.shown()
    pooled = evaluation.table["block"] != ALL_BLOCKS if evaluation.by else np.ones(len(shown), dtype=bool)
    flagged = shown["flags"] != ""
    flags = evaluation.flags
    verdict = (
        f"<p class='error'>{len(flags)} flag(s):</p>" + _html_table(flags[["split", "repeat", "fold", "block", "rule",
                                                                        "statistic", "value", "detail"]], 50)
        if len(flags)
        else "<p class='ok'>No flag.</p>"
    )  # fmt: skip
    rules = "<ul>" + "".join(f"<li>{_e(rule)}</li>" for rule in evaluation.rules()) + "</ul>"
    images = "".join(
        _img(figs[name], alt) for name, alt in (("scores", "test scores per block"),
                                                ("reliability", "reliability curves per block")) if name in figs
    )  # fmt: skip
    agreement = (
        f"<h3>Agreement across {_e(evaluation.by)} blocks</h3><p>Each repeat's test rows pooled; Cochran's Q and I² "
        "on the logit scale.</p>" + _html_table(evaluation.shown_heterogeneity(), 50)
        if len(evaluation.heterogeneity)
        else ""
    )
    return (
        f"<h2>Evaluation of predictions</h2><p>{_e(evaluation.summary())}</p>{verdict}{rules}{images}{agreement}"
        f"<h3>Per split and block</h3>{_html_table(shown[pooled], 50, flagged[pooled].to_numpy())}"
    )


def _html_table(table: pd.DataFrame, limit: int, flagged: np.ndarray | None = None) -> str:
    """A table's first ``limit`` rows as HTML (rows in ``flagged`` marked), and how many more there are."""
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    marks = np.zeros(len(table), dtype=bool) if flagged is None else flagged
    body = "".join(
        ("<tr class='error'>" if mark else "<tr>") + "".join(f"<td>{_e(_cell(v))}</td>" for v in row) + "</tr>"
        for row, mark in zip(table.head(limit).itertuples(index=False), marks[:limit], strict=True)
    )
    more = f"<p>… and {len(table) - limit} more rows</p>" if len(table) > limit else ""
    return f"<table><tr>{head}</tr>{body}</table>{more}"


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and not np.isfinite(value)) or value is pd.NA:
        return "-"
    return f"{value:.3g}" if isinstance(value, float) else value


def _exposure_section(report: ExposureReport, fig: Any) -> str:
    # the verdict is ExposureReport's own sentence: the CLI's check and the demo print the same words
    leaks = report.leaking_relations()
    spread = [r for r in report.crossing_relations() if r not in leaks]
    verdict = f"<p class='{'ok' if report.nothing_crosses else 'error'}'>{_e(report.verdict())}</p>"
    if spread:
        verdict += (
            f"<p>Blocks spread across splits, as expected when the grouping does not follow them: "
            f"{_e(', '.join(spread))}.</p>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("relation", "unit", "linked", "kept whole", "spread over groups", "crossing a split", "examples")
    )
    rows = "".join(
        f"<tr><td>{_e(r.relation)}{' ✓' if r.followed else ''}</td><td>{_e(r.unit)}</td><td>{r.linked:,}</td>"
        f"<td>{r.kept_whole:,}</td>"
        f"<td>{r.spread_over_groups:,}</td><td>{_count(r.crossing)}</td><td class='mono'>{_e(r.examples)}</td></tr>"
        for r in report.table.itertuples(index=False)
    )
    blocks = ""
    if len(report.blocks):
        block_rows = "".join(
            f"<tr><td>{_e(b.relation)}</td><td>{b.blocks}</td><td>{b.splits}</td><td>{b.chi2:.1f}</td><td>{b.dof}</td>"
            f"<td>{b.p_value:.3g}</td><td>{b.cramers_v:.3f}</td></tr>"
            for b in report.blocks.itertuples(index=False)
        )
        blocks = (
            "<h3>Blocks across folds</h3><p>Test fold against block (first repeat): a small Cramér's V means the "
            "folds mix the blocks evenly; a large one means folds follow blocks.</p><table><tr><th>relation</th>"
            "<th>blocks</th><th>folds</th><th>χ²</th><th>dof</th><th>p</th><th>Cramér's V</th></tr>"
            f"{block_rows}</table>"
        )
    image = _img(fig, "exposure per relation") if fig is not None else ""
    legend = (
        "<p>Per declared relation (✓: the grouping follows it), the dependencies that link at least two samples: "
        "<b>kept whole</b> — all their samples in one group, so a split of whole groups cannot cut them; "
        "<b>spread over groups</b> — their samples in two or more groups, so a split may cut them; "
        "<b>crossing a split</b> — a sample on the train side and one on the test side of at least one split "
        "(— without folds).</p>"
    )
    return (
        f"<h2>Exposure of declared dependencies</h2>{verdict}{image}{legend}<table><tr>{head}</tr>{rows}</table>"
        f"{blocks}"
    )


def _count(value: Any) -> str:
    return "—" if value is None or value != value else f"{int(value):,}"


def _img(fig: Any, alt: str) -> str:
    data = base64.b64encode(_encode(fig)).decode()
    return f"<img alt='{_e(alt)}' src='data:image/png;base64,{data}'>"


def _rows(pairs: list[tuple[str, str]]) -> str:
    """Table rows of a heading and a cell that is already HTML (every value in it escaped by the caller)."""
    return "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def _e(text: Any) -> str:
    """``text`` safe in HTML text and in a quoted attribute (``& < > " '`` escaped)."""
    return html.escape(str(text), quote=True)


def write_report(
    spec: SplitSpec,
    path: str | os.PathLike[str],
    graph: StudyGraph | None = None,
    *,
    title: str | None = None,
    evaluation: EvaluationReport | None = None,
    comparison: pd.DataFrame | None = None,
) -> None:
    """Write the HTML report of ``spec`` (and ``graph``, for exposure and the drawing) to ``path``, atomically.

    The spec comes first, then where it goes, as in ``write_spec(spec, path)`` and ``write_graph(graph, path)``;
    the graph, which a report may do without, comes after (as in :func:`figures`). With ``evaluation`` (what
    :func:`~depgraph.audit.evaluation.evaluate` returns) the report adds the predictions' metrics per split and
    block, the blocks flagged for a score shift, and the test scores per block beside the training thresholds. With
    ``comparison`` (what :func:`depgraph.compare` returns) it adds the groupings compared.
    """
    instance(spec, SplitSpec, "write_report(spec, path): the spec")
    atomic_write_bytes(path, render_html(spec, graph, title, evaluation, comparison).encode("utf-8"))
