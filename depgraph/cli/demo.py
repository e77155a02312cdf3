"""The bundled example: a synthetic family cohort, and the whole story run on it.

:func:`demo_cohort` builds, deterministically, what a family study hands
over: families of two siblings, each seen at three visits, samples processed
in six batches, a kinship table in which siblings are first-degree relatives,
a feature matrix (one row per sample), and a few specimens re-deposited under
new sample *and* subject ids — technical replicates whose features differ
only by measurement noise. Nobody declared the re-deposits: ``duplicates``
holds them only so tests can check that the audit finds exactly these.

:func:`run_story` walks the loop the tool exists for: subject grouping leaks
siblings; relatedness fixes that but cannot see re-deposits; the duplicate
audit finds them in the features, they are written back into the graph, and
composite/strict grouping over relatedness and duplicates leaves nothing
crossing any fold.

:func:`leakage_cohort` simulates the three-layer leakage study (a family-level
outcome the features predict, an external cohort of new families), and
:func:`honest_estimates` runs the story's designs, plus row-wise folds, on it:
each design's CV AUC beside the external AUC (the demo's last step;
``benchmarks/honest_cv.py`` runs the study over replicates).

>>> cohort = demo_cohort(n_families=4, n_redeposits=2)
>>> len(cohort.metadata), len(cohort.kinship), len(cohort.duplicates), cohort.features.shape  # sample_id + 64
(26, 4, 2, (26, 65))
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer
from rich.console import Console

from depgraph.adapters.frames import write_table
from depgraph.audit.duplicates import audit_duplicates
from depgraph.audit.exposure import ExposureReport, exposure
from depgraph.cli.commandline import (
    Command,
    out,
    print_graph,
    print_report,
    styled,
)
from depgraph.cli.specs import SIGN_HELP, signing_key
from depgraph.derivation.groups import Partition, derive
from depgraph.folds.schemes import assign_folds
from depgraph.graph.model import StudyGraph
from depgraph.ingest.builders import add_duplicates, add_kinship
from depgraph.ingest.metadata import from_metadata
from depgraph.io.outputs import Outputs, atomic_write_bytes
from depgraph.spec.model import SplitSpec
from depgraph.study.model import Study
from depgraph.validation.rules import ValidationReport, validate
from depgraph.vocab import RelationName

N_BATCHES = 6
N_FEATURES = 64
VISITS = (("V0", 0), ("V1", 6), ("V2", 12))  # months since baseline
AUDIT_THRESHOLD = 0.995


@dataclass(frozen=True)
class DemoCohort:
    """The tables a study team would hand over, and the truth about re-deposits."""

    metadata: pd.DataFrame
    kinship: pd.DataFrame
    features: pd.DataFrame  # sample_id + f0..f63
    duplicates: pd.DataFrame  # the injected re-deposit pairs (never declared in the story)


def demo_cohort(n_families: int = 40, n_redeposits: int = 6, seed: int = 7) -> DemoCohort:
    """A family cohort with kinship, features and re-deposited samples (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for f in range(1, n_families + 1):
        site = "north" if f % 2 else "south"
        family = rng.normal(size=N_FEATURES)
        for sib in ("a", "b"):
            subject = f"F{f:03d}{sib}"
            person = family + rng.normal(size=N_FEATURES)  # siblings share a family component
            for visit, month in VISITS:
                rows.append(
                    {
                        "sample_id": f"S-{subject}-{visit}",
                        "subject_id": subject,
                        "family": f"F{f:03d}",
                        "batch_id": f"B{rng.integers(1, N_BATCHES + 1)}",
                        "site_id": site,
                        "timepoint_id": visit,
                        "time_index": month,
                        "outcome_id": "case" if rng.random() < 0.35 else "control",
                    }
                )
                vectors.append(person + 0.6 * rng.normal(size=N_FEATURES))  # visits differ biologically
    metadata = pd.DataFrame(rows)
    # Re-deposits: the same specimen uploaded again with a new sample id and a new subject id.
    picked = np.sort(rng.choice(len(metadata), size=n_redeposits, replace=False))
    copies = metadata.iloc[picked].copy()
    copies["sample_id"] = [f"R{i:03d}" for i in range(1, n_redeposits + 1)]
    copies["subject_id"] = [f"X{i:03d}" for i in range(1, n_redeposits + 1)]
    copies["batch_id"] = [f"B{b}" for b in rng.integers(1, N_BATCHES + 1, size=n_redeposits)]
    for i in picked:  # measured again: tiny technical noise only
        vectors.append(vectors[i] + 0.01 * rng.normal(size=N_FEATURES))
    metadata = pd.concat([metadata, copies], ignore_index=True)
    families = metadata.drop_duplicates("family")["family"]
    kinship = pd.DataFrame(
        {
            "id1": [f"{fam}a" for fam in families],
            "id2": [f"{fam}b" for fam in families],
            "kinship": np.round(rng.normal(0.25, 0.02, size=len(families)).clip(0.19, 0.31), 4),
        }
    )
    features = pd.DataFrame(np.round(np.array(vectors), 5), columns=[f"f{k}" for k in range(N_FEATURES)])
    features.insert(0, "sample_id", metadata["sample_id"].to_numpy())
    duplicates = pd.DataFrame({"id1": metadata["sample_id"].to_numpy()[picked], "id2": copies["sample_id"].to_numpy()})
    return DemoCohort(metadata.reset_index(drop=True), kinship, features, duplicates)


@dataclass(frozen=True)
class Chapter:
    """One step of the story: its partition, spec (with 5 folds) and exposure."""

    title: str
    partition: Partition
    spec: SplitSpec
    exposure: ExposureReport


@dataclass(frozen=True)
class Story:
    cohort: DemoCohort
    graph: StudyGraph  # metadata + kinship
    validation: ValidationReport
    audited: pd.DataFrame  # pairs the audit found
    graph_after: StudyGraph  # with the audited duplicates written back
    chapters: tuple[Chapter, ...]


def _chapter(title: str, graph: StudyGraph, partition: Partition, judged_by: StudyGraph) -> Chapter:
    spec = assign_folds(SplitSpec.from_partition(partition, graph), "stratified-group-kfold", n_splits=5, seed=0)
    return Chapter(title, partition, spec, exposure(judged_by, spec))


def run_story(cohort: DemoCohort | None = None) -> Story:
    """Subject → relatedness → audit → write back → composite/strict, each with folds and exposure.

    Exposure is always judged against the truth-bearing graph (with the
    audited duplicates written back), so earlier chapters show what they leak.
    """
    cohort = cohort or demo_cohort()
    graph = add_kinship(from_metadata(cohort.metadata, name="demo family cohort"), cohort.kinship, "first")
    audited = audit_duplicates(cohort.features, threshold=AUDIT_THRESHOLD)
    after = add_duplicates(graph, audited, similarity_column="similarity", provenance="audit")
    chapters = (
        _chapter("subject grouping", graph, derive(graph, "subject"), after),
        _chapter("relatedness", graph, derive(graph, "relatedness"), after),
        _chapter(
            "relatedness + audited duplicates (composite/strict)",
            after,
            derive(after, "composite", strategy="strict", via=["relatedness", "duplicate"]),
            after,
        ),
    )
    return Story(cohort, graph, validate(graph), audited, after, chapters)


# --------------------------------------------------------------------------- the leakage study's cohort
#: The three-layer leakage study: families of siblings seen at visits, batches, undeclared re-deposits.
STUDY_VISITS = 3
STUDY_FEATURES = 30
STUDY_SIGNAL = 3  # features on which cases are shifted
STUDY_SHIFT = 1.2
STUDY_PREVALENCE = 0.3  # of families: the outcome is a family trait


@dataclass(frozen=True)
class LeakageCohort:
    """A development cohort (with re-deposits), its kinship, and an external cohort from the same process.

    ``features`` rows follow ``metadata`` rows; ``outcome`` is 1 for cases.
    ``duplicates`` holds the injected re-deposit pairs (original, copy) —
    the truth the audit is judged against, never declared.
    """

    metadata: pd.DataFrame  # sample_id, subject_id, family, batch_id, outcome_id
    kinship: pd.DataFrame  # id1, id2, kinship (siblings)
    features: np.ndarray
    outcome: np.ndarray
    duplicates: pd.DataFrame  # id1 (original), id2 (re-deposit)
    external_features: np.ndarray
    external_outcome: np.ndarray

    def feature_table(self) -> pd.DataFrame:
        """``features`` as the table the duplicate audit reads (sample_id + f0..f29)."""
        table = pd.DataFrame(self.features, columns=[f"f{k}" for k in range(self.features.shape[1])])
        table.insert(0, "sample_id", self.metadata["sample_id"].to_numpy())
        return table


def _family_samples(
    rng: np.random.Generator, n_families: int, batch_effects: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, outcome and batch of ``n_families`` × 2 siblings × 3 visits, one row per visit."""
    n_features = batch_effects.shape[1]
    cases = np.zeros(n_families, dtype=bool)  # exactly round(0.3 n) case families, so no draw lacks a class
    cases[rng.choice(n_families, size=round(STUDY_PREVALENCE * n_families), replace=False)] = True
    family_of_subject = np.repeat(np.arange(n_families), 2)
    subject_of_sample = np.repeat(np.arange(2 * n_families), STUDY_VISITS)
    family_of_sample = family_of_subject[subject_of_sample]
    batch = rng.integers(0, len(batch_effects), size=len(subject_of_sample))
    features = (
        rng.normal(0.0, 1.0, (n_families, n_features))[family_of_sample]
        + rng.normal(0.0, 0.7, (2 * n_families, n_features))[subject_of_sample]
        + batch_effects[batch]
        + rng.normal(0.0, 0.5, (len(subject_of_sample), n_features))
    )
    outcome = cases[family_of_sample].astype(int)
    features[:, :STUDY_SIGNAL] += STUDY_SHIFT * outcome[:, None]
    return features, outcome, batch


def leakage_cohort(
    n_families: int = 40, n_redeposits: int = 24, n_external_families: int = 400, seed: int | np.random.Generator = 0
) -> LeakageCohort:
    """Issue 13's data-generating process, deterministic for a seed.

    Features = family N(0,1) + subject N(0,0.7²) + batch N(0,0.5²) (6 batches) + noise N(0,0.5²); case
    families (30 %) shifted +1.2 on 3 of 30 features. ``n_redeposits`` samples are uploaded again under new
    sample and subject ids, with technical noise N(0,0.02²) and a redrawn batch label. The external cohort
    (``n_external_families`` new families, no re-deposits) comes from the same process and the same batches.

    >>> c = leakage_cohort(n_families=4, n_redeposits=2, n_external_families=5)
    >>> len(c.metadata), c.features.shape, len(c.duplicates), c.external_features.shape
    (26, (26, 30), 2, (30, 30))
    """
    rng = np.random.default_rng(seed)
    batch_effects = rng.normal(0.0, 0.5, (N_BATCHES, STUDY_FEATURES))
    features, outcome, batch = _family_samples(rng, n_families, batch_effects)
    families = [f"F{f:03d}" for f in range(1, n_families + 1)]
    family = np.repeat(families, 2 * STUDY_VISITS)
    subject = np.char.add(family, np.tile(np.repeat(["a", "b"], STUDY_VISITS), n_families))
    visit = np.tile([f"-V{v}" for v in range(STUDY_VISITS)], 2 * n_families)
    picked = np.sort(rng.choice(len(outcome), size=n_redeposits, replace=False))
    copies = [f"R{i:03d}" for i in range(1, n_redeposits + 1)]
    sample_id = np.concatenate([np.char.add(np.char.add("S-", subject), visit), copies])
    metadata = pd.DataFrame(
        {
            "sample_id": sample_id,
            "subject_id": np.concatenate([subject, [f"X{i:03d}" for i in range(1, n_redeposits + 1)]]),
            "family": np.concatenate([family, family[picked]]),
            "batch_id": np.char.add(
                "B", (np.concatenate([batch, rng.integers(0, N_BATCHES, n_redeposits)]) + 1).astype(str)
            ),
            "outcome_id": np.where(np.concatenate([outcome, outcome[picked]]) == 1, "case", "control"),
        }
    )
    features = np.vstack([features, features[picked] + rng.normal(0.0, 0.02, (n_redeposits, STUDY_FEATURES))])
    kinship = pd.DataFrame({"id1": [f + "a" for f in families], "id2": [f + "b" for f in families], "kinship": 0.25})
    external_features, external_outcome, _ = _family_samples(rng, n_external_families, batch_effects)
    return LeakageCohort(
        metadata,
        kinship,
        features,
        np.concatenate([outcome, outcome[picked]]),
        pd.DataFrame({"id1": sample_id[picked], "id2": copies}),
        external_features,
        external_outcome,
    )


#: The demo's leakage study: one draw, logistic regression only, so the step takes well under a second.
HONEST_SEED = 3  # a draw whose one fold plan shows the ordering the 30-replicate study finds on average


def honest_estimates(cohort: LeakageCohort | None = None) -> pd.DataFrame:
    """Per design: the mean-of-folds CV AUC of a logistic regression beside its AUC on the external cohort.

    The designs are row-wise folds, then the story's three chapters (subject,
    relatedness, relatedness + audited duplicates) run on a
    :func:`leakage_cohort`, each with its 5 stratified grouped folds; the
    external AUC is that of the model fitted on all development samples, the
    same for every design. Needs scikit-learn (imported here: an optional
    extra). ``benchmarks/honest_cv.py`` runs the full study over replicates.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from depgraph.adapters.sklearn import SpecCV

    cohort = cohort or leakage_cohort(seed=HONEST_SEED)
    meta = cohort.metadata
    story = run_story(DemoCohort(meta, cohort.kinship, cohort.feature_table(), cohort.duplicates))
    one_per_row = from_metadata(meta.assign(subject_id=meta["sample_id"]), name="row-wise")
    designs = [_chapter("row-wise", one_per_row, derive(one_per_row, "subject"), story.graph_after), *story.chapters]
    X, y, ids = cohort.features, cohort.outcome, meta["sample_id"].tolist()
    model = LogisticRegression(solver="newton-cholesky", max_iter=200)
    external = roc_auc_score(cohort.external_outcome, model.fit(X, y).predict_proba(cohort.external_features)[:, 1])
    cv = [
        np.mean(
            [
                roc_auc_score(y[test], model.fit(X[train], y[train]).predict_proba(X[test])[:, 1])
                for train, test in SpecCV(chapter.spec, ids=ids).split(X)
            ]
        )
        for chapter in designs
    ]
    return pd.DataFrame({"design": [c.title for c in designs], "cv_auc": cv, "external_auc": external}).assign(
        optimism=lambda t: t["cv_auc"] - t["external_auc"]
    )


# --------------------------------------------------------------------------- the command
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def _print_honest_estimates(out: Console, honest_estimates: Callable[[], pd.DataFrame]) -> None:
    """The demo's last step: each design's CV AUC beside the external AUC (needs scikit-learn)."""
    out.print(
        styled(
            "\n",
            ("6. honest estimates", "bold"),
            ": on a simulated study with an outcome (40 families, 24 re-deposits), each design's CV AUC of a logistic "
            "regression beside its AUC on 400 new families",
        )
    )
    if importlib.util.find_spec("sklearn") is None:
        out.print("  skipped: scikit-learn is not installed (pip install 'depgraph[sklearn]')")
        return
    for row in honest_estimates().itertuples(index=False):
        out.print(
            f"  {row.design}: CV {row.cv_auc:.2f} vs external {row.external_auc:.2f} (optimism {row.optimism:+.2f})"
        )
    out.print(
        "Only the last design's estimate is near the external one: docs/honest-estimates.md has the study over 30 "
        "replicates and two models."
    )


@app.command("demo", cls=Command, short_help="The bundled family cohort, end to end, with its report.")
def demo(
    output_dir: Annotated[
        Path,
        typer.Option("--output-dir", "-o", help="Where to write the cohort, graph, spec and report.", readable=False),
    ] = Path("depgraph-demo"),
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP)] = None,
) -> None:
    """The bundled family cohort, end to end: subject grouping → relatedness → duplicate audit →
    write back → composite/strict, each with folds and exposure; writes the tables, graph, spec and report."""
    signing_key(sign_key_env)  # checked before any work: the demo's study file signs with it
    plan = Outputs()
    plan.directory(output_dir, create=True)  # made, with its files, only when everything is written
    story = run_story()
    _tell_story(story)
    _print_honest_estimates(out, honest_estimates)
    existed = output_dir.exists()
    meta = story.cohort.metadata
    with plan:
        for table_name, frame in (
            ("metadata", meta),
            ("kinship", story.cohort.kinship),
            ("features", story.cohort.features),
            ("audited_duplicates", story.audited),
        ):
            write_table(frame, output_dir / f"{table_name}.csv")
        atomic_write_bytes(output_dir / "study.toml", demo_study(sign_key_env).encode())
    _run_demo_study(output_dir, existed)
    out.print(
        f"\nwrote metadata.csv, kinship.csv, features.csv, audited_duplicates.csv and study.toml to {output_dir}; "
        "'depgraph run study.toml' wrote spec.json, graph.json and report.html from them, in one process "
        f"(check it again with: depgraph run --check {output_dir / 'study.toml'})"
    )


def _tell_story(story: Story) -> None:
    """Steps 1 to 3 of the demo's story: the cohort, the graph, its validation, the duplicate audit."""
    meta = story.cohort.metadata
    out.rule(styled(("depgraph demo: a family cohort", "bold")))
    out.print(
        f"{meta['family'].nunique()} families × 2 siblings × 3 visits, {meta['batch_id'].nunique()} batches, and "
        f"{len(story.cohort.duplicates)} specimens re-deposited under new sample and subject ids that nobody "
        f"declared — {len(meta)} samples with {story.cohort.features.shape[1] - 1} features each.\n"
    )
    out.print(
        styled(("1. build", "bold"), " the graph from the metadata and the kinship table (first degree, ≥ 0.177)")
    )
    print_graph(story.graph, "study graph")
    out.print(styled("\n", ("2. validate", "bold"), " the declaration"))
    print_report(story.validation)
    out.print(
        styled(
            "\n",
            ("3. audit", "bold"),
            f" the features for undeclared duplicates (cosine ≥ {AUDIT_THRESHOLD}): "
            f"{len(story.audited)} pair(s) found, written back as sample_duplicate_of",
        )
    )
    for row in story.audited.itertuples(index=False):
        out.print(f"  {row.id1} ~ {row.id2}  similarity {row.similarity:.5f}")
    _tell_chapters(story)


def _tell_chapters(story: Story) -> None:
    """Steps 4 and 5: each design's groups and what crosses its folds, then the verdict on the last."""
    out.print(styled("\n", ("4. derive", "bold"), " groups and 5 stratified folds, and check what crosses the folds"))
    for number, chapter in enumerate(story.chapters, start=1):
        table = chapter.exposure.table.set_index("relation")
        related, duplicates = (
            int(table.loc[r, "crossing"]) for r in (RelationName.SUBJECT_RELATED_TO, RelationName.SAMPLE_DUPLICATE_OF)
        )
        out.print(
            f"  {number}) {chapter.title}: {chapter.partition.n_groups} groups — related subject pairs crossing a "
            f"fold: {related}, duplicate pairs crossing: {duplicates}"
        )
    last = story.chapters[-1]
    colour = "green" if last.exposure.nothing_crosses else "red"
    out.print(styled("\n", ("5. verdict", "bold"), f" for {last.title}: ", (last.exposure.verdict(), colour)))
    if last.exposure.nothing_crosses:
        out.print(
            "With relatedness and the audited duplicates declared, every family, with its re-deposits, stays on one "
            "side of every fold (batches and sites still mix, as blocks should)."
        )
    else:
        out.print(styled(("A declared dependency still crosses a fold: the plan is wrong.", "red")))


def demo_study(sign_key_env: str | None = None) -> str:
    """The demo's study file: the story's last design, declared once (what ``depgraph init`` would start and a
    study team would settle on), beside the tables the demo writes."""
    signed = f'\nsign_key_env = "{sign_key_env}"' if sign_key_env else ""
    return f"""\
# The demo's study file: the family cohort, declared once. Run it with 'depgraph run study.toml'.
version = 1
name = "demo family cohort"

[metadata]
path = "metadata.csv"

[metadata.columns]
sample_id = "sample_id"
subject_id = "subject_id"
batch_id = "batch_id"
timepoint_id = "timepoint_id"
time_index = "time_index"
site_id = "site_id"
outcome_id = "outcome_id"
# not mapped: "family" (siblings are related through [kinship])

[kinship]
path = "kinship.csv"
format = "pairs"
threshold = "first"

[duplicates]  # the re-deposited specimens nobody declared: found by auditing the features
features = "features.csv"
threshold = {AUDIT_THRESHOLD}

[grouping]
mode = "composite"
strategy = "strict"
via = ["relatedness", "duplicate"]

[folds]
scheme = "stratified-group-kfold"
n_splits = 5
seed = 0

[outputs]
spec = "spec.json"
graph = "graph.json"
report = "report.html"{signed}
"""


def _run_demo_study(output_dir: Path, existed: bool) -> None:
    """Run the demo's study file; if it fails, take back what the demo wrote (a failing command leaves nothing)."""
    written = [output_dir / name for name in ("metadata.csv", "kinship.csv", "features.csv",
                                              "audited_duplicates.csv", "study.toml")]  # fmt: skip
    try:
        Study.read(output_dir / "study.toml").run()
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        if not existed:
            output_dir.rmdir()
        raise
