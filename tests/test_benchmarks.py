"""The benchmark scripts keep working (run tiny here; the measurements live in benchmarks/ and docs/performance.md)."""

from __future__ import annotations

import pytest

from benchmarks.bench_spec import measure


def test_spec_benchmark_runs_and_round_trips():
    row = measure(2000)
    assert row["n_samples"] == 2000 and row["read_s"] >= 0 and row["read_cpu_s"] >= 0 and row["file_mb"] > 0


def test_graph_read_benchmark_runs_on_the_pipeline_cohort(tmp_path):
    from benchmarks.bench_spec import measure_graph

    row = measure_graph(2000, repeats=2, workdir=tmp_path)
    assert row["n_samples"] == 2000 and row["n_nodes"] > 2000 and row["n_edges"] > 2000 and row["read_s"] >= 0


def test_pipeline_benchmark_runs_at_1e4(tmp_path):
    from benchmarks.cohort import make_cohort
    from benchmarks.run import STAGES, TARGET, measure

    make_cohort(10_000, tmp_path)
    row = measure(10_000, tmp_path)
    assert set(row["seconds"]) == set(STAGES) and row["n_samples"] == 10_000
    assert row["target_seconds"] == round(sum(row["seconds"][s] for s in TARGET), 3)
    assert row["kinship_pairs"] > 0 and row["adjacent_pairs"] > 0


def test_audit_benchmark_runs_and_finds_the_redeposits():
    from benchmarks.bench_audit import measure

    rows = measure(2000, 20, ("exact", "lsh"))
    assert [r["method"] for r in rows] == ["exact", "lsh"]
    assert all(r["recall"] == 1.0 and r["false_hits"] == 0 for r in rows)


def test_pipeline_runner_takes_medians_over_fresh_processes(tmp_path):
    from benchmarks.run import STAGES, TARGET, run_size

    row = run_size(10_000, tmp_path, repeats=2)
    assert row["repeats"] == 2 and set(row["seconds"]) == set(STAGES)
    assert row["target_seconds"] == round(sum(row["seconds"][s] for s in TARGET), 3)
    assert (tmp_path / "10000" / "metadata.csv").exists()  # --keep keeps the cohort


def test_formula_benchmark_runs_and_finds_every_formula_like_id():
    from benchmarks.bench_formulas import measure

    row = measure(5000)
    assert row["n_ids"] == 5000 and row["formula_like_arrow_s"] >= 0 and row["for_spreadsheets_s"] >= 0


def test_table_layout_benchmark_reads_every_layout_alike(tmp_path):
    from benchmarks.bench_tables import LAYOUTS, measure

    rows = measure(500, tmp_path, repeats=1)
    assert [r["file"] for r in rows] == list(LAYOUTS)
    assert len({r["n_nodes"] for r in rows}) == 1 and rows[0]["n_nodes"] > 500


def test_holdout_replay_runs_and_keeps_returning_patients():
    from benchmarks.bench_holdout import replay

    result = replay(trials=2, n_patients=1000)
    assert result["second_batch"]["returning_patients_kept_their_side"] is True
    first = result["first_batch"]
    joint, margins = first["depgraph joint (joint=2)"], first["depgraph margins (joint=1)"]
    baseline = first["per-stratum random"]
    assert joint["cells"]["mean"] < min(margins["cells"]["mean"], baseline["cells"]["mean"])
    assert joint["categories"]["mean"] < baseline["categories"]["mean"]


@pytest.mark.slow  # fresh processes: ~13 s; CI runs it (--slow)
def test_cli_benchmark_runs_the_users_path_in_both_forms(tmp_path):
    from benchmarks.run import CLI_FILES, CLI_STEPS, run_cli

    row = run_cli(2000, tmp_path, repeats=1)
    for form in CLI_FILES:
        assert all(row["seconds"][f"{form} {step}"] > 0 for step in CLI_STEPS)
        assert row[f"{form}_total_seconds"] == round(sum(row["seconds"][f"{form} {s}"] for s in CLI_STEPS), 3)
    assert row["floor_seconds"] > 0 and row["in_process_target_seconds"] > 0 and row["seconds"]["depgraph --help"] > 0
    assert (tmp_path / "cli-2000" / "folds.dgspec" / "manifest.json").is_file()  # the columnar files were written
    assert (tmp_path / "cli-2000" / "folds.json").is_file()


def test_study_benchmark_runs_the_three_paths_on_one_cohort(tmp_path):
    from benchmarks.bench_study import measure
    from benchmarks.cohort import make_cohort

    make_cohort(2000, tmp_path)
    row = measure(2000, tmp_path, repeats=1)
    assert set(row["seconds"]) == {"floor", "run", "library"} and row["run_peak_memory_gb"] > 0
    assert (tmp_path / "study.dgspec" / "manifest.json").is_file() and (tmp_path / "library.dgspec").is_dir()


@pytest.mark.slow  # seven commands in fresh processes: ~8 s; CI runs it (--slow)
def test_explain_benchmark_asks_its_questions_of_the_pipeline_cohort(tmp_path):
    from benchmarks.bench_explain import measure

    row = measure(2000, tmp_path, repeats=1)
    lines = row["first_lines"]
    assert len(row["seconds"]) == 8 and all(s > 0 for s in row["seconds"].values())
    assert lines["compare: subject, relatedness, batch"].startswith("subject: ")
    assert "never apart" in lines["why: related, --mode relatedness"]
    assert "free to be apart" in lines["why: not connected, --mode relatedness"]
    assert "(2000 samples; 100 %" in lines["explain: the whole cohort, every relation"]
