"""Pseudonymised specs: keyed, stable across sites, no raw ids left."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import math
import random
import re
import secrets
import string
from pathlib import Path

import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, derive, from_metadata
from depgraph.cli.main import main
from depgraph.spec.files import read_spec, spec_document
from depgraph.spec.model import Constraint, SpecWarning, SplitSpec
from depgraph.spec.privacy import (
    MIN_KEY_BITS,
    check_key,
    identifying_attributes,
    key_bits,
    key_fingerprint,
    key_from_env,
    pseudonym,
    pseudonymize,
)

#: 32 random bytes in hex, as `python -c "import secrets; print(secrets.token_hex(32))"` writes them.
KEY = "9c4f0e8b2d7a61f35e0c9b8a7d6f5e4c3b2a19080f1e2d3c4b5a69788796a5b4"


def test_pseudonym_is_hmac_sha256_truncated_to_128_bits():
    expected = hmac.new(KEY.encode(), b"S1", hashlib.sha256).hexdigest()[:32]
    assert pseudonym(KEY, "S1") == expected
    assert pseudonym(KEY, "S1") != pseudonym(KEY + "x", "S1")
    assert key_fingerprint(KEY) == pseudonym(KEY, "depgraph pseudonymization key fingerprint", 16)


@pytest.fixture
def spec(family_meta):
    g = from_metadata(family_meta)
    return SplitSpec.from_partition(derive(g, "batch", samples=[s for s in family_meta["sample_id"]]), g)


def test_ids_are_replaced_and_groups_preserved(spec):
    hidden = pseudonymize(spec, KEY)
    text = orjson.dumps(spec_document(hidden)).decode()
    for raw in ("P1-T0", "batch:B1", "P5-T1"):
        assert raw not in text
    assert hidden.samples["group_id"].str.startswith("batch:").all()
    before = spec.samples.groupby("group_id")["sample_id"].apply(frozenset)
    after = hidden.samples.groupby("group_id")["sample_id"].apply(frozenset)
    mapped = {frozenset(pseudonym(KEY, s) for s in members) for members in before}
    assert mapped == set(after)
    assert hidden.pseudonymization.key_fingerprint == key_fingerprint(KEY)
    assert hidden.digest == hidden.compute_digest() != spec.digest


def test_two_sites_with_one_key_agree(family_meta):
    g1 = from_metadata(family_meta)
    g2 = from_metadata(family_meta.sample(frac=1, random_state=1))
    a = pseudonymize(SplitSpec.from_partition(derive(g1, "subject"), g1), KEY)
    b = pseudonymize(SplitSpec.from_partition(derive(g2, "subject"), g2), KEY)
    assert a.groups() == b.groups() and a.digest == b.digest


def test_key_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("DEPGRAPH_PSEUDONYM_KEY", raising=False)
    with pytest.raises(DepgraphError) as err:
        key_from_env()
    assert err.value.code == "invalid_argument" and "DEPGRAPH_PSEUDONYM_KEY" in err.value.message
    monkeypatch.setenv("DEPGRAPH_PSEUDONYM_KEY", "short")
    with pytest.raises(DepgraphError):
        key_from_env()


def test_cli_derive_pseudonymizes(tmp_path, family_meta, monkeypatch, capsys):
    family_meta.to_csv(tmp_path / "meta.csv", index=False)
    assert main(["build", str(tmp_path / "meta.csv"), "-o", str(tmp_path / "g.json")]) == 0
    monkeypatch.delenv("SITE_KEY", raising=False)
    assert main(["derive", str(tmp_path / "g.json"), "--mode", "subject", "--pseudonymize-ids", "--key-env",
                 "SITE_KEY", "-o", str(tmp_path / "s.json")]) == 2  # fmt: skip
    assert not (tmp_path / "s.json").exists()
    monkeypatch.setenv("SITE_KEY", KEY)
    assert main(["derive", str(tmp_path / "g.json"), "--mode", "subject", "--pseudonymize-ids", "--key-env",
                 "SITE_KEY", "-o", str(tmp_path / "s.json")]) == 0  # fmt: skip
    spec = read_spec(tmp_path / "s.json")
    assert spec.pseudonymization is not None and pseudonym(KEY, "P1-T0") in set(spec.samples["sample_id"])
    capsys.readouterr()


def test_pseudonymising_twice_is_refused(spec):
    with pytest.raises(DepgraphError):
        pseudonymize(pseudonymize(spec, KEY), KEY)


def test_warnings_carry_no_raw_ids():
    meta = pd.DataFrame({"sample_id": ["Alice-1", "Bob-1"], "batch_id": ["B1", None]})
    g = from_metadata(meta)
    hidden = pseudonymize(SplitSpec.from_partition(derive(g, "batch"), g), KEY)
    text = orjson.dumps(spec_document(hidden)).decode()
    assert "Alice" not in text and "Bob" not in text
    (warning,) = [w for w in hidden.warnings if w.code == "unlinked_samples"]
    assert warning.ids == [pseudonym(KEY, "Bob-1")]


# --------------------------------------------------------------------------- key strength
def _reference_bits(key: str) -> float:
    """docs/spec.md's estimate written out the slow, obvious way (the expected value of key_bits)."""
    text = key
    stripped = text.rstrip("=")
    unpadded = stripped if len(text) - len(stripped) <= 2 else text
    if unpadded and all(c in string.hexdigits for c in unpadded):
        text, alphabet = unpadded, 16
    elif unpadded and all(c in string.ascii_letters + string.digits + "+/-_" for c in unpadded):
        text, alphabet = unpadded, 64
    else:
        alphabet = 95 + len({c for c in text if not 32 <= ord(c) <= 126})
    n = len(text)
    if n == 0:
        return 0.0
    entropy = -sum(text.count(c) / n * math.log2(text.count(c) / n) for c in set(text))
    period = next(p for p in range(1, n + 1) if all(text[i] == text[i - p] for i in range(p, n)))
    steps = [ord(b) - ord(a) for a, b in itertools.pairwise(text)]
    runs = len([k for k, _ in itertools.groupby(steps)])
    return max(0.0, min(math.log2(alphabet), entropy)) * min(period, runs + 1)


@settings(max_examples=300, deadline=None)
@given(
    key=st.text(max_size=80) | st.text(alphabet="0123456789abcdef", max_size=80) | st.text(alphabet="ab=", max_size=9)
)
def test_key_bits_is_the_documented_estimate(key):
    assert key_bits(key) == pytest.approx(_reference_bits(key), abs=1e-9)


@pytest.mark.parametrize(
    ("key", "accepted"),
    [
        pytest.param("a" * 64, False, id="one-repeated-character"),
        pytest.param("ab" * 32, False, id="two-characters-alternating"),
        pytest.param("0123456789abcdef" * 4, False, id="hex-alphabet-repeated"),
        pytest.param(string.ascii_letters + string.digits, False, id="alphabet-walk"),
        pytest.param("correct horse battery", False, id="short-passphrase"),
        pytest.param(KEY, True, id="32-random-bytes-hex"),
        pytest.param(base64.urlsafe_b64encode(bytes.fromhex(KEY)).decode().rstrip("="), True, id="token-urlsafe-32"),
        pytest.param(base64.b64encode(bytes.fromhex(KEY)).decode(), True, id="base64-with-padding"),
    ],
)
def test_weak_keys_are_refused_and_random_ones_accepted(key, accepted):
    if accepted:
        assert check_key(key) == key.encode() and key_bits(key) >= MIN_KEY_BITS
    else:
        with pytest.raises(DepgraphError) as err:
            check_key(key)
        assert err.value.code == "invalid_argument" and "too weak" in err.value.message
        assert key not in err.value.message  # the message gives the estimate, never the key


def test_fresh_random_keys_of_32_bytes_always_pass():
    rng = random.Random(20261130)
    for _ in range(500):
        raw = rng.randbytes(32)
        assert key_bits(raw.hex()) >= MIN_KEY_BITS
        assert key_bits(base64.urlsafe_b64encode(raw).decode().rstrip("=")) >= MIN_KEY_BITS  # token_urlsafe(32)
    assert key_bits(secrets.token_hex(32)) >= MIN_KEY_BITS and key_bits(secrets.token_urlsafe(32)) >= MIN_KEY_BITS


@settings(max_examples=300, deadline=None)
@given(key=st.text(min_size=1, max_size=26))
def test_no_key_of_26_characters_or_fewer_reaches_128_bits(key):
    # H <= log2(length): 26 characters give at most 26 * log2(26) = 122 bits, whatever the characters
    with pytest.raises(DepgraphError):
        check_key(key)


def test_a_random_16_character_printable_key_is_refused():
    rng = random.Random(7)
    printable = [chr(c) for c in range(32, 127)]
    for _ in range(200):
        key = "".join(rng.choice(printable) for _ in range(16))
        assert key_bits(key) < MIN_KEY_BITS
        with pytest.raises(DepgraphError):
            check_key(key)


def test_weak_keys_are_refused_from_the_environment_and_by_pseudonymize(monkeypatch, spec):
    monkeypatch.setenv("SITE_KEY", "x" * 100)
    with pytest.raises(DepgraphError) as err:
        key_from_env("SITE_KEY")
    assert err.value.code == "invalid_argument" and "SITE_KEY" in err.value.message and "x" * 10 not in str(err.value)
    monkeypatch.setenv("SITE_KEY", KEY)
    assert key_from_env("SITE_KEY") == KEY.encode()
    with pytest.raises(DepgraphError) as err:
        pseudonymize(spec, "consortium-key")
    assert err.value.code == "invalid_argument" and "too weak" in err.value.message


def test_bytes_keys_are_judged_as_bytes():
    raw = random.Random(3).randbytes(32)
    assert key_bits(raw) >= MIN_KEY_BITS  # not UTF-8: one character per byte, alphabet 256
    assert key_bits(b"\x00" * 64) == 0.0
    assert check_key(raw) == raw


# --------------------------------------------------------------------------- what a pseudonymised spec carries
def _cohort(tmp_path: Path) -> Path:
    meta = pd.DataFrame(
        {
            "sample_id": ["Alice-1", "Alice-2", "Bob-1", "Carol-1", "Dave-1", "Erin-1", "Frank-1", "Grace-1"],
            "subject_id": ["alice", "alice", "bob", "carol", "dave", "erin", "frank", None],
            "batch_id": ["B1", "B1", "B1", "B2", "B2", "B2", "B1", "B2"],
            "sex": ["f", "f", "m", "f", "m", "f", "m", "f"],
            "mrn": ["m-0001", "m-0002", "m-0003", "m-0004", "m-0005", "m-0006", "m-0007", "m-0008"],
            "patient": ["alice", "alice", "bob", "carol", "dave", "erin", "frank", None],
        }
    )
    meta.to_csv(tmp_path / "meta.csv", index=False)
    pd.DataFrame({"id1": ["alice", "zoe"], "id2": ["bob", "yann"], "kinship": [0.25, 0.3]}).to_csv(
        tmp_path / "kin.csv", index=False
    )
    assert main(["build", str(tmp_path / "meta.csv"), "--kinship", str(tmp_path / "kin.csv"), "--kinship-threshold",
                 "first", "--unknown", "ignore", "-o", str(tmp_path / "g.json")]) == 0  # fmt: skip
    return tmp_path / "g.json"


RAW = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "alice", "bob", "carol", "dave", "erin", "frank",
       "zoe", "yann")  # fmt: skip


@pytest.mark.parametrize("mode", ["subject", "relatedness", "batch", "composite"])
def test_no_raw_id_anywhere_in_a_pseudonymised_spec(tmp_path, monkeypatch, capsys, mode):
    graph = _cohort(tmp_path)
    monkeypatch.setenv("SITE_KEY", KEY)
    via = ["--via", "subject,relatedness"] if mode == "composite" else []
    assert main(["derive", str(graph), "--mode", mode, *via, "--pseudonymize-ids", "--key-env", "SITE_KEY",
                 "--attributes", "sex", "-o", str(tmp_path / "s.json")]) == 0  # fmt: skip
    text = (tmp_path / "s.json").read_text()
    spec = read_spec(tmp_path / "s.json")
    assert spec.warnings or mode == "batch", "the cohort gives findings whose messages would name ids"
    for raw in RAW:
        assert raw not in text, raw
    # what is kept is what the docs say is kept
    assert set(spec.samples.columns) <= {"sample_id", "group_id", "batch_group", "sex"}
    for w in spec.warnings:
        assert w.message.endswith("(message withheld: ids pseudonymised)")
        assert all(re.fullmatch(r"([a-z]+:)?[0-9a-f]{32}", i) for i in w.ids)
    assert re.fullmatch(r"[a-z]+:[0-9a-f]{32}", spec.summary.largest_group)
    capsys.readouterr()


def test_attributes_all_with_pseudonymised_ids_is_refused(tmp_path, monkeypatch, capsys):
    graph = _cohort(tmp_path)
    monkeypatch.setenv("SITE_KEY", KEY)
    args = ["derive", str(graph), "--mode", "subject", "--pseudonymize-ids", "--key-env", "SITE_KEY", "-o",
            str(tmp_path / "s.json")]  # fmt: skip
    capsys.readouterr()
    assert main([*args, "--attributes", "all"]) == 2
    assert "--attributes all with --pseudonymize-ids" in capsys.readouterr().err
    for column, why in (("mrn", "no other sample holds"), ("patient", "their own sample id or group key")):
        assert main([*args, "--attributes", f"sex,{column}"]) == 2
        err = capsys.readouterr().err
        assert f"'{column}' (" in err and why in err and "'sex'" not in err
    assert not (tmp_path / "s.json").exists()
    assert main([*args, "--attributes", "sex"]) == 0
    assert read_spec(tmp_path / "s.json").samples["sex"].notna().all()
    # without pseudonymisation every attribute may travel: the ids are in clear anyway
    assert main(["derive", str(graph), "--mode", "subject", "--attributes", "all", "-o", str(tmp_path / "a.json")]) == 0
    assert {"mrn", "patient", "sex"} <= set(read_spec(tmp_path / "a.json").samples.columns)


def test_identifying_attributes_rule():
    n = 10
    frame = pd.DataFrame(
        {
            "sample_id": [f"S{i}" for i in range(n)],
            "group_id": [f"subject:P{i // 2}" for i in range(n)],
            "batch_group": [f"B{i}" for i in range(n)],  # the spec's own column: not judged
            "half_unique": [f"v{i}" if i < 5 else "same" for i in range(n)],  # 5 of 10 alone: identifying
            "under_half": [f"v{i}" if i < 4 else "same" for i in range(n)],  # 4 of 10: kept
            "copy_of_subject": [f"P{i // 2}" for i in range(n)],
            "sparse_unique": ["x"] + [None] * (n - 1),  # 1 of 1 sample with a value
            "numbers": [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 3.0, None, None, None],
        }
    )
    assert sorted(identifying_attributes(frame)) == ["copy_of_subject", "half_unique", "sparse_unique"]


def test_a_key_weaker_than_the_rule_is_refused_before_anything_is_read(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SITE_KEY", "consortium-key-2026")
    code = main(["derive", str(tmp_path / "missing.json"), "--mode", "subject", "--pseudonymize-ids", "--key-env",
                 "SITE_KEY", "-o", str(tmp_path / "s.json")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "the key in the environment variable SITE_KEY is too weak" in err
    assert "consortium-key-2026" not in err and not any(tmp_path.iterdir())


def test_warning_sentences_without_a_colon_are_withheld_too():
    # splitGraph warnings are sentences; ids may come before any colon, so no clause of them is kept
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": ["Alice-1", "Bob-1"], "group_id": ["subject:alice", "subject:bob"]}),
        constraint=Constraint(mode="subject", parameters={"add_kinship": [{"unknown_ids": ["zoe"], "pairs_kept": 1}]}),
        recommended_resampling="grouped_cv",
        warnings=[
            SpecWarning(code="splitgraph_warning", message="Sample Alice-1 of subject alice is unlinked", count=1),
            SpecWarning(code="single_group", message="mode subject puts all 2 samples in one group (subject:alice)"),
        ],
    )
    text = orjson.dumps(spec_document(pseudonymize(spec, KEY))).decode()
    for raw in ("Alice", "alice", "Bob", "zoe"):
        assert raw not in text, raw
    assert "every sample is in one group: no split is possible (message withheld: ids pseudonymised)" in text
    assert '"pairs_kept":1' in text  # counts stay


# --------------------------------------------------------------------------- no folder in what is recorded
KING_FILE = "FID1\tID1\tFID2\tID2\tN_SNP\tHetHet\tIBS0\tKinship\nF1\tP1\tF1\tP2\t5000\t0.11\t0.001\t0.2461\n"


def _inputs(folder: Path, family_meta: pd.DataFrame) -> None:
    folder.mkdir(parents=True)
    family_meta.to_csv(folder / "meta.csv", index=False)
    (folder / "family.kin0").write_text(KING_FILE)
    pd.DataFrame({"sample_id": family_meta["sample_id"], "x": range(10), "y": 0.0}).to_csv(
        folder / "xy.csv", index=False
    )
    pd.DataFrame({"id1": ["P1-T0"], "id2": ["P5-T1"]}).to_csv(folder / "dups.csv", index=False)


def _build_and_derive(where: Path, prefix: str, capsys) -> tuple[bytes, str]:
    def at(name: str) -> str:
        return f"{prefix}{name}"

    assert main(["build", at("meta.csv"), "--kinship", at("family.kin0"), "--kinship-threshold", "first",
                 "--coords", at("xy.csv"), "--radius", "1.5", "--duplicates", at("dups.csv"),
                 "-o", str(where / "g.json")]) == 0  # fmt: skip
    assert main(["derive", str(where / "g.json"), "--mode", "composite", "--via", "relatedness,spatial,duplicate",
                 "-o", str(where / "s.json")]) == 0  # fmt: skip
    capsys.readouterr()
    return (where / "g.json").read_bytes(), read_spec(where / "s.json").digest


def test_the_same_files_in_two_folders_give_the_same_graph_and_spec(tmp_path, family_meta, monkeypatch, capsys):
    a, b = tmp_path / "site-a" / "data", tmp_path / "elsewhere" / "b"
    _inputs(a, family_meta)
    _inputs(b, family_meta)
    monkeypatch.chdir(a)
    graph_a, digest_a = _build_and_derive(a, "", capsys)  # relative paths, from inside the folder
    monkeypatch.chdir(tmp_path)
    graph_b, digest_b = _build_and_derive(b, f"{b}/", capsys)  # absolute paths
    graph_c, digest_c = _build_and_derive(tmp_path, "elsewhere/b/", capsys)  # relative paths through folders
    assert graph_a == graph_b == graph_c and digest_a == digest_b == digest_c
    history = orjson.loads(graph_a)["history"]
    assert [h["step"] for h in history] == ["from_metadata", "add_kinship", "add_spatial", "add_duplicates"]
    assert history[1]["source"] == "family.kin0"  # the file is still named
    for text in (graph_a.decode(), (a / "s.json").read_text(), (b / "s.json").read_text()):
        assert str(tmp_path) not in text and "site-a" not in text and "elsewhere" not in text
    assert read_spec(a / "s.json").constraint.parameters["add_kinship"][0]["source"] == "family.kin0"
