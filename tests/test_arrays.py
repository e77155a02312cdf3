"""Array helpers: sorted key codes agree with Arrow's string order, whatever the keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph.common.arrays import PACKED_KEY_BYTES, distinct, sorted_codes

short = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF), max_size=12)
any_text = st.text(max_size=40)  # NUL bytes and keys longer than PACKED_KEY_BYTES take Arrow's path


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(short, any_text), min_size=1, max_size=60), st.integers(0, 5))
def test_sorted_codes_rank_keys_as_arrow_sorts_them(values, start):
    keys = pa.array(["pad"] * start + values, type=pa.string()).slice(start)  # a sliced array has an offset
    codes, first = sorted_codes(keys)
    vocab = keys.take(pa.array(first))
    distinct_keys = pa.array(list(dict.fromkeys(values)), type=pa.string())
    assert vocab.to_pylist() == distinct_keys.take(pc.sort_indices(distinct_keys)).to_pylist()  # Arrow's order
    assert vocab.take(pa.array(codes)).to_pylist() == values  # each key's code names it
    assert all(values.index(v) == i for v, i in zip(vocab.to_pylist(), first.tolist(), strict=True))  # first row


def test_long_keys_and_nul_bytes_fall_back_to_arrow():
    long = ["x" * (PACKED_KEY_BYTES + 1) + "b", "x" * (PACKED_KEY_BYTES + 1) + "a"]
    assert sorted_codes(pa.array(long))[0].tolist() == [1, 0]
    assert sorted_codes(pa.array(["a\0", "a", ""]))[0].tolist() == [2, 1, 0]


def test_distinct_is_sorted_and_unique():
    assert distinct(np.array([5, 3, 5, 1])).tolist() == [1, 3, 5]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=" \t\n\u00a0\u3000ab1-é", max_size=6)), min_size=1, max_size=30))
def test_arrow_keys_follow_the_identifier_rules(values):
    """key_array (Arrow, skips trimming when no key needs it) = normalise_keys (pandas, Python's strip)."""
    from depgraph.common.identifiers import key_array, normalise_keys

    for series in (pd.Series(values, dtype="string"), pd.Series(values, dtype=object)):
        assert key_array(series).to_pylist() == normalise_keys(series).tolist()


def test_read_table_strips_only_what_needs_it(tmp_path):
    from depgraph.io.files import read_table

    path = tmp_path / "meta.csv"
    path.write_text("sample_id,subject_id,x\n S1 ,NA,1\nS2,\u00a0P2\t,N/A\nS3, null ,<NA>\n", encoding="utf-8")
    frame = read_table(path)
    assert frame["sample_id"].tolist() == ["S1", "S2", "S3"]
    assert frame["subject_id"].isna().tolist() == [True, False, True] and frame["subject_id"][1] == "P2"
    assert frame["x"].isna().tolist() == [False, True, True]
    clean = tmp_path / "clean.csv"
    clean.write_text("sample_id\nS1\nS2\n", encoding="utf-8")
    assert read_table(clean)["sample_id"].tolist() == ["S1", "S2"]
