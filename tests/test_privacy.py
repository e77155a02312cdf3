"""Pseudonymised specs: keyed, stable across sites, no raw ids left."""

from __future__ import annotations

import hashlib
import hmac

import orjson
import pandas as pd
import pytest

from depgraph import DepgraphError, derive, from_metadata
from depgraph.cli import main
from depgraph.privacy import key_fingerprint, key_from_env, pseudonym, pseudonymize
from depgraph.spec import SplitSpec, read_spec

KEY = "a shared consortium secret, 32+ chars"


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
    text = orjson.dumps(hidden.to_json_dict()).decode()
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
    text = orjson.dumps(hidden.to_json_dict()).decode()
    assert "Alice" not in text and "Bob" not in text
    (warning,) = [w for w in hidden.warnings if w.code == "unlinked_samples"]
    assert warning.ids == [pseudonym(KEY, "Bob-1")]
