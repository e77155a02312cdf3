"""The report: figures, the self-contained HTML file, and that a browser shows it."""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from depgraph import DepgraphError
from depgraph.cli import main
from depgraph.demo import run_story
from depgraph.report import figures, render_html, save_figures, write_report

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.image import imread  # noqa: E402


@pytest.fixture(scope="module")
def story():
    return run_story()


@pytest.fixture(scope="module")
def page(story) -> str:
    """The demo's final report (drawing it takes seconds: once per module)."""
    return render_html(story.chapters[-1].spec, story.graph_after)


def _images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r"<img [^>]*src='data:image/png;base64,([^']+)'", page)]


def test_every_figure_is_drawn_when_its_inputs_exist(story):
    spec = story.chapters[-1].spec
    assert sorted(figures(spec, story.graph_after)) == ["exposure", "folds", "graph", "group_sizes", "time"]
    bare = spec.model_copy(update={"folds": None})
    assert sorted(figures(bare)) == ["group_sizes", "time"]


def test_the_html_is_self_contained_and_every_image_decodes(page):
    # no external resource of any kind: nothing to fetch when opened offline
    assert not re.search(r"(src|href)=['\"](?!data:)", page) and "<link" not in page and "@import" not in page
    images = _images(page)
    assert len(images) == page.count("<img ") == 5
    for png in images:
        pixels = imread(io.BytesIO(png), format="png")
        assert pixels.ndim == 3 and min(pixels.shape[:2]) > 100 and np.ptp(pixels) > 0  # not blank
    # the verdict is ExposureReport.verdict(), the sentence the CLI's check and the demo print
    assert "<p class='ok'>nothing crosses: no dependency of sample_belongs_to_subject, subject_related_to, " \
        "sample_duplicate_of crosses a split</p>" in page  # fmt: skip
    assert "sample_duplicate_of" in page and "Cramér" in page


def test_the_report_is_byte_identical_across_runs(page, tmp_path):
    again = run_story()
    write_report(tmp_path / "again.html", again.chapters[-1].spec, again.graph_after)
    assert (tmp_path / "again.html").read_bytes() == page.encode("utf-8")


def test_leaky_grouping_is_flagged_in_the_report(story, page):
    first = story.chapters[0]  # subject-only grouping judged against the full declaration
    leaky = render_html(first.spec, story.graph_after)
    assert "<p class='error'>dependencies cross a split: subject_related_to (35, not followed), sample_duplicate_of " \
        "(6, not followed); derive with them included (composite mode) to keep them together</p>" in leaky  # fmt: skip
    assert "class='error'" not in page


def test_figures_as_png_and_svg_files(story, tmp_path):
    figs = figures(story.chapters[-1].spec)
    written = save_figures(figs, tmp_path)
    assert sorted(p.name for p in written) == ["folds.png", "folds.svg", "group_sizes.png", "group_sizes.svg",
                                               "time.png", "time.svg"]  # fmt: skip
    assert (tmp_path / "folds.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "folds.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "<dc:date>" not in svg
    with pytest.raises(DepgraphError) as err:
        save_figures(figs, tmp_path / "missing")
    assert err.value.code == "io"
    with pytest.raises(DepgraphError) as err:
        save_figures(figs, tmp_path, formats=("gif",))
    assert err.value.code == "invalid_argument"


def test_report_command(story, tmp_path, capsys):
    from depgraph import write_graph
    from depgraph.spec import write_spec

    write_spec(story.chapters[-1].spec, tmp_path / "spec.json")
    write_graph(story.graph_after, tmp_path / "graph.json")
    (tmp_path / "plots").mkdir()
    code = main(["report", str(tmp_path / "spec.json"), "--graph", str(tmp_path / "graph.json"), "-o",
                 str(tmp_path / "r.html"), "--plots-dir", str(tmp_path / "plots")])  # fmt: skip
    assert code == 0 and "wrote" in capsys.readouterr().out
    assert len(_images((tmp_path / "r.html").read_text())) == 5
    assert len(list((tmp_path / "plots").iterdir())) == 10
    # without the graph: no exposure, no drawing
    assert main(["report", str(tmp_path / "spec.json"), "-o", str(tmp_path / "s.html")]) == 0
    assert len(_images((tmp_path / "s.html").read_text())) == 3
    # a graph that lacks the spec's samples is refused, and nothing is written
    write_graph(story.graph, tmp_path / "other.json")  # still every sample: fine
    from depgraph import from_metadata

    write_graph(from_metadata(story.cohort.metadata.head(5)), tmp_path / "small.json")
    assert main(["report", str(tmp_path / "spec.json"), "--graph", str(tmp_path / "small.json"), "-o",
                 str(tmp_path / "bad.html")]) == 2  # fmt: skip
    assert "reference" in capsys.readouterr().err and not (tmp_path / "bad.html").exists()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None and not os.environ.get("CI"), reason="headless Chromium not installed")
def test_the_report_renders_in_headless_chromium(page, tmp_path):
    """A real browser opens the file offline and every embedded image decodes."""
    browser = _chromium()
    assert browser is not None, "CI must install Debian's chromium package"
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    profile = tmp_path / "profile"
    profile.mkdir()
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", html_file.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    body = re.search(r"<body[^>]*>", result.stdout)
    assert body is not None, result.stdout[:500]
    assert 'data-images="5"' in body.group(0) and 'data-images-ok="true"' in body.group(0), body.group(0)
