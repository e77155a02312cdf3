"""Long text arrays parsed by Arrow (depgraph.io.textarrays) read exactly what the usual JSON path reads.

A large graph or spec file has its long arrays of ids cut apart at their quotes (where written compactly without
escapes) or parsed by ``pyarrow.json``, instead of by orjson; the quote cutting is also held to orjson directly.
Here the size thresholds are lowered to nothing, so small documents take that path, and every outcome is compared
with the usual path's: the same graph or spec (same bytes, same digest) when a file is accepted, the same error
code and message when it is refused. The documents are written as depgraph writes them (each array of scalars on
one line), then damaged: bytes flipped inside and around the long lines, array elements changed to other types or
to text JSON must escape, keys repeated on a long line, whole members moved onto one line.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import derive, from_metadata
from depgraph.errors import DepgraphError
from depgraph.graph.files import graph_from_document, read_graph, write_graph
from depgraph.io import files, textarrays
from depgraph.io.files import TextArrayDocument, read_json
from depgraph.spec.files import read_spec, spec_bytes, spec_from_document, write_spec
from depgraph.spec.model import SplitSpec
from tests.test_fuzz_documents import FUZZ, ODD_VALUES, _bases, _container, _paths_of, damaged


def _layout(value: Any, level: int = 0) -> str:
    """``value`` as depgraph lays documents out: objects indented, every array of scalars on one line."""
    pad = "  " * (level + 1)
    if isinstance(value, dict) and value:
        inner = ",\n".join(
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_layout(v, level + 1)}" for k, v in value.items()
        )
        return "{\n" + inner + "\n" + "  " * level + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(pad + _layout(v, level + 1) for v in value) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _outcome(path: Path, kind: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """What the reader makes of ``path`` with the Arrow path on (every size) or off: the file's bytes written
    again, or the error's code and message."""
    _arrow_path(monkeypatch, fast)
    try:
        if kind == "graph":
            graph = read_graph(path)
            written = path.with_suffix(".again.json")
            write_graph(graph, written)
            return written.read_bytes()
        spec = read_spec(path)
        return spec_bytes(spec), spec.digest
    except DepgraphError as err:
        return err.code, err.message


def _arrow_path(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    """Long text arrays read through Arrow in documents of every size and every line length (``on``), or never."""
    monkeypatch.setattr(files, "TEXT_ARRAYS_FROM", 0 if on else 1 << 62)
    monkeypatch.setattr(textarrays, "LONG_LINE", 0)


def _same_either_way(tmp_path: Path, text: bytes, kind: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    path = tmp_path / "document.json"
    path.write_bytes(text)
    fast = _outcome(path, kind, True, monkeypatch)
    assert fast == _outcome(path, kind, False, monkeypatch)
    return fast


def _kind(name: str) -> str:
    return "graph" if name == "graph" else "spec"


@pytest.mark.parametrize("name", ["spec", "related", "pseudonymized", "graph"])
def test_a_document_as_depgraph_lays_it_out_takes_the_arrow_path(tmp_path, name, monkeypatch):
    path = tmp_path / "document.json"
    path.write_text(_layout(_bases()[name]), encoding="utf-8")
    _arrow_path(monkeypatch, True)
    doc = read_json(path, text_arrays=True)
    assert isinstance(doc, TextArrayDocument)
    assert any(hasattr(v, "to_pylist") for v in _leaves(doc))  # some arrays came from Arrow
    exact = json.loads(path.read_bytes())
    assert _as_lists(doc) == exact
    if name == "graph":  # read from the Arrow arrays themselves (no second reading hides a failure)
        assert graph_from_document(doc).equals(graph_from_document(exact))
    else:
        spec, expected = spec_from_document(doc), spec_from_document(exact)
        assert (spec_bytes(spec), spec.digest) == (spec_bytes(expected), expected.digest)
    outcome = _same_either_way(tmp_path, path.read_bytes(), _kind(name), monkeypatch)
    assert isinstance(outcome[0] if name != "graph" else outcome, bytes)  # accepted, not an error


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _as_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_lists(v) for v in value]
    return value.to_pylist() if hasattr(value, "to_pylist") else value


@settings(FUZZ, max_examples=150)
@given(
    name=st.sampled_from(["spec", "pseudonymized", "graph"]),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=3),
    cut=st.sampled_from([None, "delete", "insert"]),
)
def test_flipped_bytes_read_the_same_either_way(tmp_path, monkeypatch, name, flips, cut):
    _same_either_way(tmp_path, damaged(_layout(_bases()[name]).encode("utf-8"), flips, cut), _kind(name), monkeypatch)


#: Elements a text array may be given: other JSON types, and text JSON escapes or Arrow might spell its own way.
ODD_ELEMENTS = [*ODD_VALUES, 'a"b', "a\\b", "tab\there", "nul\x00", "\u2028", "é", "😀", "\x7f", " ", "S01 "]


@settings(FUZZ, max_examples=200)
@given(name=st.sampled_from(["spec", "related", "pseudonymized", "graph"]), data=st.data())
def test_changed_elements_read_the_same_either_way(tmp_path, monkeypatch, name, data):
    doc = copy.deepcopy(_bases()[name])
    text_lists = [p for p in _paths_of(name) if _is_text_list(doc, p)]
    for _ in range(data.draw(st.integers(1, 3))):
        holder, key = _container(doc, data.draw(st.sampled_from(text_lists)))
        values = holder[key]
        if isinstance(values, list) and values:
            values[data.draw(st.integers(0, len(values) - 1))] = copy.deepcopy(data.draw(st.sampled_from(ODD_ELEMENTS)))
    _same_either_way(tmp_path, _layout(doc).encode("utf-8"), _kind(name), monkeypatch)


def _is_text_list(doc: Any, path: tuple) -> bool:
    holder, key = _container(doc, path)
    value = holder[key]
    return isinstance(value, list) and bool(value) and isinstance(value[0], str)


@settings(FUZZ, max_examples=100)
@given(name=st.sampled_from(["spec", "pseudonymized", "graph"]), data=st.data())
def test_members_run_together_on_a_long_line_read_the_same_either_way(tmp_path, monkeypatch, name, data):
    """A text array's line also holding a repeated key, another member or the object's end."""
    text = _layout(_bases()[name])
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if '": ["' in line]
    i = data.draw(st.sampled_from(candidates))
    line = lines[i].rstrip(",")
    key = line.strip().split(":", 1)[0]
    tail = data.draw(st.sampled_from([f', {key}: ["x"]', ', "other": ["x"]', ', "n": 1', " ]", "}", "", ' , "x"']))
    lines[i] = line + tail + ("," if lines[i].endswith(",") else "")
    _same_either_way(tmp_path, "\n".join(lines).encode("utf-8"), _kind(name), monkeypatch)


ids = st.text(st.characters(codec="utf-8", exclude_characters="\ud800"), min_size=1, max_size=8)


@settings(FUZZ, max_examples=40)
@given(samples=st.lists(ids, min_size=2, max_size=12, unique=True), data=st.data())
def test_any_ids_a_graph_and_its_spec_hold_read_the_same_either_way(tmp_path, monkeypatch, samples, data):
    subjects = [data.draw(st.sampled_from(samples[:3])) for _ in samples]
    table = pd.DataFrame({"sample_id": samples, "subject_id": subjects})
    try:
        graph = from_metadata(table)
        spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    except DepgraphError:
        return  # ids depgraph refuses to build with (control characters, Unicode twins): nothing is written
    write_graph(graph, tmp_path / "g.json")
    write_spec(spec, tmp_path / "s.json")
    graph_read = _same_either_way(tmp_path, (tmp_path / "g.json").read_bytes(), "graph", monkeypatch)
    spec_read = _same_either_way(tmp_path, (tmp_path / "s.json").read_bytes(), "spec", monkeypatch)
    assert graph_read == (tmp_path / "g.json").read_bytes()
    assert spec_read[1] == spec.digest


# --------------------------------------------------------------------------- arrays cut apart at their quotes
def _quote_split(span: bytes) -> list[str] | None:
    array = textarrays.plain_text_array(np.frombuffer(span, dtype=np.uint8))
    return None if array is None else array.to_pylist()


def _json_text_list(span: bytes) -> list[str] | None:
    """What a JSON parser makes of ``span``: the list, when it is a list of text; None otherwise."""
    try:
        value = orjson.loads(span)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


any_text = st.text(st.characters(codec="utf-8", exclude_characters="\ud800"), max_size=6)


@settings(FUZZ, max_examples=300)
@given(values=st.lists(any_text, min_size=1, max_size=8))
def test_a_compact_array_of_text_is_cut_apart_at_its_quotes_exactly(values):
    span = orjson.dumps(values)
    escaped = b"\\" in span  # quotes, backslashes, control characters: the JSON reader's case
    assert _quote_split(span) == (None if escaped else values)


@settings(FUZZ, max_examples=500)
@given(
    values=st.lists(st.text(st.sampled_from('ab,"[] \\\x01é'), max_size=4), min_size=1, max_size=5),
    data=st.data(),
)
def test_a_damaged_array_is_cut_apart_only_when_a_json_parser_reads_the_same_text(values, data):
    span = bytearray(orjson.dumps(values))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(span)))
        edit = data.draw(st.sampled_from(["insert", "replace", "delete"]))
        byte = data.draw(st.sampled_from(list(b'",[] \\a\x00\x1f\xc3\xa9\xed\xa0\x80\xff')))
        if edit == "insert":
            span.insert(at, byte)
        elif at < len(span):
            span[at : at + 1] = bytes([byte]) if edit == "replace" else b""
    found = _quote_split(bytes(span))
    if found is not None:  # never a list a JSON parser does not read, never another list than it reads
        assert found == _json_text_list(bytes(span))


@pytest.mark.parametrize(
    "span",
    [b'["a" ,"b"]', b'["a",,"b"]', b'["a""b"]', b'["a",1]', b'["a",null]', b'["a","b",]', b'["a"],["b"]',
     b'["a\\"b"]', b'["a\x01"]', b'["\xed\xa0\x80"]', b'["\xc3"]', b'["a"]]', b'[["a"]]', b'["a"'],
)  # fmt: skip
def test_what_is_not_a_compact_array_of_text_is_left_to_the_json_reader(span):
    assert _quote_split(span) is None


@pytest.mark.parametrize("name", ["spec", "graph"])
def test_a_tampered_document_is_refused_after_one_parse(tmp_path, monkeypatch, name):
    """A large file that fails a check is refused by the Arrow path's own check, never parsed a second time to
    word the refusal (a tampered million-sample spec would cost its whole parse again)."""
    doc = copy.deepcopy(_bases()[name])
    if name == "spec":
        doc["samples"]["group_id"][0] += "x"  # the digest no longer matches
    else:
        doc["nodes"]["Sample"][0] = doc["nodes"]["Sample"][1]  # a repeated sample id
    path = tmp_path / "document.json"
    path.write_text(_layout(doc), encoding="utf-8")
    _arrow_path(monkeypatch, True)
    parses = []
    monkeypatch.setattr(files, "_parsed", lambda *a, _real=files._parsed, **k: parses.append(1) or _real(*a, **k))
    with pytest.raises(DepgraphError) as err:
        read_graph(path) if name == "graph" else read_spec(path)
    assert err.value.code == ("integrity" if name == "spec" else "duplicate_id"), err.value
    assert len(parses) == 1  # the remainder around the Arrow arrays, once
    assert (err.value.code, err.value.message) == _outcome(path, _kind(name), False, monkeypatch)
