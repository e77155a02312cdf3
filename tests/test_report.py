"""The report: figures, the self-contained HTML file, and that a browser shows it."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from unittest import mock

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, add_duplicates, derive, from_metadata, read_graph, write_graph
from depgraph.audit.report import (
    _SCRIPT,
    _STYLE,
    CONTENT_SECURITY_POLICY,
    figures,
    render_html,
    save_figures,
    write_report,
)
from depgraph.cli.demo import run_story
from depgraph.cli.main import main
from depgraph.folds.schemes import assign_folds
from depgraph.spec.balance import balance_metrics
from depgraph.spec.digest import content_digest
from depgraph.spec.files import read_spec, spec_document, spec_from_document
from depgraph.spec.model import SplitSpec

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


@pytest.mark.slow  # ~6 s; CI runs it (--slow)
def test_the_report_is_byte_identical_across_runs(page, tmp_path):
    again = run_story()
    write_report(again.chapters[-1].spec, tmp_path / "again.html", again.graph_after)
    assert (tmp_path / "again.html").read_bytes() == page.encode("utf-8")


def test_write_report_takes_the_spec_then_the_path(story, tmp_path):
    """As write_spec(spec, path) and write_graph(graph, path); the 0.1 order (path, spec) is refused by name."""
    with pytest.raises(DepgraphError) as err:
        write_report(tmp_path / "old.html", story.chapters[-1].spec)  # type: ignore[arg-type]
    assert err.value.code == "invalid_argument" and "write_report(spec, path): the spec must be" in err.value.message
    assert not (tmp_path / "old.html").exists()


@pytest.mark.slow  # ~6 s; CI runs it (--slow)
def test_leaky_grouping_is_flagged_in_the_report(story, page):
    first = story.chapters[0]  # subject-only grouping judged against the full declaration
    leaky = render_html(first.spec, story.graph_after)
    assert "<p class='error'>dependencies cross a split: subject_related_to (35, not followed), sample_duplicate_of " \
        "(6, not followed); derive with them included (composite mode) to keep them together</p>" in leaky  # fmt: skip
    assert "class='error'" not in page


@pytest.mark.slow  # ~7 s; CI runs it (--slow)
def test_the_exposure_table_speaks_plain_words(story, page):
    head = "<th>linked</th><th>kept whole</th><th>spread over groups</th><th>crossing a split</th>"
    assert head in page and "severed" not in page and "exposed" not in page
    assert "<b>kept whole</b> — all their samples in one group, so a split of whole groups cannot cut them" in page
    assert "<b>spread over groups</b> — their samples in two or more groups, so a split may cut them" in page
    # subject grouping never puts two subjects in one group: every related pair is spread over two groups
    leaky = render_html(story.chapters[0].spec, story.graph_after)
    pairs = story.graph_after.relation_counts()["subject_related_to"]
    crossing = int(story.chapters[0].exposure.table.set_index("relation").loc["subject_related_to", "crossing"])
    assert (
        f"<td>subject_related_to</td><td>pairs</td><td>{pairs}</td><td>0</td><td>{pairs}</td><td>{crossing}</td>"
        in leaky
    )


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


@pytest.mark.slow  # the report of a whole study, drawn twice: ~17 s; CI runs it (--slow)
def test_report_command(story, tmp_path, capsys):
    from depgraph import write_graph
    from depgraph.spec.files import write_spec

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


needs_chromium = pytest.mark.skipif(
    _chromium() is None and not os.environ.get("CI"), reason="headless Chromium not installed"
)


def _browser_dom(page: str, tmp_path: Path, name: str = "report") -> str:
    """The DOM a headless Chromium builds from ``page`` opened offline as a file, after its scripts ran."""
    browser = _chromium()
    assert browser is not None, "CI must install Debian's chromium package"
    html_file = tmp_path / f"{name}.html"
    html_file.write_text(page, encoding="utf-8")
    profile = tmp_path / f"{name}-profile"
    profile.mkdir()
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", html_file.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _body_tag(dom: str) -> str:
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None, dom[:500]
    return body.group(0)


@needs_chromium
def test_the_report_renders_in_headless_chromium(page, tmp_path):
    """A real browser opens the file offline, runs the page's own script and every embedded image decodes."""
    body = _body_tag(_browser_dom(page, tmp_path))
    assert 'data-images="5"' in body and 'data-images-ok="true"' in body, body


@needs_chromium
def test_the_browser_enforces_the_content_security_policy(page, tmp_path):
    # The same page with one character of its script changed: the hash in the policy no longer matches, so the
    # browser refuses to run it (the body gets no data-images attribute). The policy is live, not decoration.
    tampered = page.replace("data-images-ok", "data-images-OK")
    assert tampered != page and CONTENT_SECURITY_POLICY in tampered
    assert "data-images" not in _body_tag(_browser_dom(tampered, tmp_path, "tampered"))


# --------------------------------------------------------------------------- pages from crafted files
#: Markup that would run or load something if it reached the page unescaped.
PAYLOADS = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "'><svg onload=alert(3)>",
    "</title></style><iframe src=//evil.example>",
    "$\\frac{x}{$ & &amp;",  # matplotlib mathtext that fails to parse (two dollars), and entities
)
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "table", "tr", "th", "td", "span",
                "ul", "li", "b", "p", "img", "script"}  # fmt: skip
ALLOWED_ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "class", "alt", "src"}


class _Page(HTMLParser):
    """Every tag, attribute and piece of text of a page, as a browser's tokenizer sees them."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._in: str | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in == "script" else self.text).append(data)


def assert_inert(page: str) -> _Page:
    """The page holds only the report's own markup: known tags and attributes, no event handler, images from
    data: URIs only, one script (the page's own), the policy in force."""
    parsed = _Page(page)
    for tag, attrs in parsed.tags:
        assert tag in ALLOWED_TAGS, f"unexpected <{tag}> {attrs}"
        assert set(attrs) <= ALLOWED_ATTRIBUTES, f"unexpected attributes on <{tag}>: {attrs}"
        if tag == "img":
            assert (attrs["src"] or "").startswith("data:image/png;base64,"), attrs
    assert [t for t, _ in parsed.tags].count("script") == 1 and parsed.scripts == [_SCRIPT]
    policies = [
        a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policies == [CONTENT_SECURITY_POLICY]
    return parsed


def test_the_policy_allows_exactly_the_page_s_own_script_and_style(page):
    def source(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    directives = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert directives == {"default-src": "'none'", "script-src": source(_SCRIPT), "style-src": source(_STYLE),
                          "img-src": "data:", "base-uri": "'none'", "form-action": "'none'"}  # fmt: skip
    assert f"<style>{_STYLE}</style>" in page and f"<script>{_SCRIPT}</script>" in page
    # the policy comes before anything it governs
    assert page.index("Content-Security-Policy") < page.index("<style>") < page.index("<script>")
    assert_inert(page)


def _crafted_files(root: Path, text: tuple[str, ...] = PAYLOADS) -> tuple[Path, Path]:
    """A graph and a re-digested spec (with folds) carrying ``text`` in every string field a report shows:
    ids (so group ids, the largest group and exposure examples), the graph name, a sample attribute used as a
    stratum (balance keys and categories), warnings, the fold scheme, its parameters and its balance."""
    a, b = text[0], text[1 % len(text)]
    rows = [
        {"sample_id": f"S{i:02d}{a if i % 3 == 0 else ''}", "subject_id": f"{b}P{i // 2}", "batch_id": f"B{i % 3}{a}",
         "sex": ["f", "m"][i % 2] + text[i % len(text)]}
        for i in range(12)
    ]  # fmt: skip
    graph = from_metadata(pd.DataFrame(rows), name=" ".join(text))
    graph = add_duplicates(graph, pd.DataFrame({"id1": [rows[0]["sample_id"]], "id2": [rows[5]["sample_id"]]}))
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=["sex"])
    planned = assign_folds(spec, "stratified-group-kfold", n_splits=3, stratify="sex")
    doc = spec_document(planned)
    doc["warnings"] = [{"code": "unlinked_samples", "severity": "warning", "message": t, "count": 1, "ids": [t]}
                       for t in text]  # fmt: skip
    # a plan of no depgraph scheme names itself and records what it likes; its balance is what its splits give
    doc["folds"]["scheme"] = " ".join(text)
    doc["folds"]["parameters"] = {t: t for t in text}
    doc["folds"]["seed"] = None
    balance = balance_metrics(planned.samples, planned.folds.splits, ["sex"], None)  # at each split's own fraction
    doc["folds"]["balance"] = orjson.loads(orjson.dumps(balance))
    doc["digest"] = content_digest(doc)
    spec_from_document(doc)  # a spec every reader accepts as verified
    write_graph(graph, root / "graph.json")
    (root / "spec.json").write_bytes(orjson.dumps(doc))
    return root / "graph.json", root / "spec.json"


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("crafted")
    graph_file, spec_file = _crafted_files(root)
    assert main(["report", str(spec_file), "--graph", str(graph_file), "-o", str(root / "r.html")]) == 0
    return root, (root / "r.html").read_text(encoding="utf-8")


@pytest.mark.filterwarnings("ignore:constrained_layout not applied")  # the crafted legend is long, by design
def test_a_crafted_spec_cannot_put_markup_into_the_report(crafted):
    _, page = crafted
    parsed = assert_inert(page)
    text = "".join(parsed.text)
    for payload in PAYLOADS:
        assert payload not in page  # never raw...
        assert html.escape(payload, quote=True) in page  # ...always there, escaped
    shown = {  # the fields that reach the page, each found as text
        "graph name": " ".join(PAYLOADS),
        "scheme": "Folds: " + " ".join(PAYLOADS),
        "largest group": f"largest subject:{PAYLOADS[1]}P0: 2",
        "warning": f"unlinked_samples: {PAYLOADS[0]}",
        "parameters": f"{PAYLOADS[2]}={PAYLOADS[2]}",
        "balance column": "sex: worst test-share deviation",
        "exposure example": PAYLOADS[0],
    }
    for field, expected in shown.items():
        assert expected in text, field
    assert len(_images(page)) == 4  # group sizes, folds, exposure, graph (no time order)


@needs_chromium
def test_a_crafted_report_runs_nothing_in_a_browser(crafted, tmp_path):
    _, page = crafted
    dom = _browser_dom(page, tmp_path, "crafted")
    body = _body_tag(dom)
    assert 'data-images="4"' in body and 'data-images-ok="true"' in body, body
    assert "<iframe" not in dom and "<svg" not in dom and "onerror=" not in dom.replace("onerror=alert(2)&gt;", "")
    assert dom.count("<img ") == 4 and dom.count("<script") == 1


#: Any character ids may hold: control, format (invisible) and line/paragraph separator characters are refused
#: when the metadata is read; lone surrogates are not text a UTF-8 file can hold, and are refused too.
_PRINTABLE_IN_IDS = st.characters(exclude_categories=["Cs", "Cc", "Cf", "Zl", "Zp"])


@pytest.mark.slow  # 25 reports: ~9 s; CI runs it (--slow)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(text=st.lists(st.text(_PRINTABLE_IN_IDS, min_size=1, max_size=40), min_size=2, max_size=4, unique=True))
def test_any_text_in_a_spec_reaches_the_report_as_text(text):
    """Whatever text a spec's fields hold, the page's markup is the report's own and the text is shown as text."""
    with tempfile.TemporaryDirectory() as tmp, mock.patch("depgraph.audit.report._encode", return_value=b"\x89PNG"):
        graph_file, spec_file = _crafted_files(Path(tmp), tuple(text))
        page = render_html(read_spec(spec_file), read_graph(graph_file))
    shown = "".join(assert_inert(page).text)
    for t in text:
        assert t.strip() == "" or _squash(t) in _squash(shown)


def _squash(text: str) -> str:
    # the page is HTML: the parser reads CR and CR LF as LF (text is otherwise kept character for character)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def test_malformed_balance_metrics_are_refused_before_drawing(tmp_path, capsys):
    _, spec_file = _crafted_files(tmp_path, ("a", "b"))
    doc = orjson.loads(spec_file.read_bytes())
    doc["folds"]["balance"]["columns"]["sex"]["worst_proportion_deviation"] = "<b>0.1</b>"
    doc["digest"] = content_digest(doc)
    spec_file.write_bytes(orjson.dumps(doc))
    for command in (["validate", str(spec_file)], ["report", str(spec_file), "-o", str(tmp_path / "r.html")]):
        assert main(command) == 2  # validate refuses what report refuses
        err = capsys.readouterr().err
        assert "folds.balance.columns.sex.worst_proportion_deviation says '<b>0.1</b>'" in err
    assert not (tmp_path / "r.html").exists()
