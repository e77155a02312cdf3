"""Relatedness files as the tools write them, filtered to pairs at or above a threshold.

Every fixture is written the way its tool writes it (KING: tab-separated, from
its fprintf formats; plink2: tab-separated with a '#' header; PLINK 1.9
--genome: right-aligned columns padded with spaces; GCTA: float32 lower
triangle and a two-column id file). The expected pairs are worked out by hand
in the comments.
"""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from depgraph import add_kinship
from depgraph.errors import DepgraphError
from depgraph.ingest import matrices as matrices_module
from depgraph.ingest.kinship import KINSHIP_FORMATS, detect_format, read_kinship

# KING --kinship within-family .kin, as KING writes it: tabs, %.3lf/%.4lf numbers.
KING_KIN = (
    "FID\tID1\tID2\tN_SNP\tZ0\tPhi\tHetHet\tIBS0\tKinship\tError\n"
    "F1\tP1\tP2\t512000\t0.000\t0.2500\t0.112\t0.0012\t0.2461\t0\n"  # parent-offspring: kept
    "F1\tP1\tP3\t512000\t0.000\t0.2500\t0.108\t0.0009\t0.2514\t0\n"  # kept
    "F1\tP2\tP3\t512000\t1.000\t0.0000\t0.061\t0.0290\t-0.0112\t0\n"  # negative: below any threshold
    "F2\tQ1\tQ2\t511871\t0.500\t0.1250\t0.081\t0.0101\t0.0884\t0\n"  # exactly 'second' (0.0884): kept
    "F2\tQ1\tQ3\t511871\t0.750\t0.0625\t0.070\t0.0180\t0.0441\t0.5\n"  # just below 'second'
)

# KING between-family .kin0 as the KING manual prints it: columns aligned with runs of spaces.
KING_KIN0_ALIGNED = (
    "FID1     ID1     FID2     ID2     N_SNP   HetHet  IBS0    Kinship\n"
    "F1       P1      F2       Q1      511034  0.0581  0.0287  -0.0213\n"  # unrelated, negative
    "F1       P2      F3       R1      511911  0.1171  0.0000  0.3542\n"  # duplicate-like: kept
    "F2       Q2      F3       R2      510002  0.0903  0.0061  0.1770\n"  # exactly 'first' (0.177): kept
    "F2       Q3      F3       R3      510877  0.0801  0.0111  0.1769\n"  # just below 'first'
)

# KING --related .kin0: more columns, kinship in the middle; read by name.
KING_RELATED_KIN0 = (
    "FID1\tID1\tFID2\tID2\tN_SNP\tHetHet\tIBS0\tHetConc\tHomIBS0\tKinship\tIBD1Seg\tIBD2Seg\tPropIBD\tInfType\n"
    "F1\tP1\tF2\tQ1\t511034\t0.1101\t0.0012\t0.4002\t0.0101\t0.2400\t0.9512\t0.0000\t0.4756\tPO\n"
    "F1\tP1\tF3\tR1\t511034\t0.0601\t0.0300\t0.2102\t0.1101\t0.0100\t0.0000\t0.0000\t0.0000\tUN\n"
)

# plink2 --make-king-table: '#'-prefixed header, tabs; FID columns present.
PLINK2_KIN0 = (
    "#FID1\tIID1\tFID2\tIID2\tNSNP\tHETHET\tIBS0\tKINSHIP\n"
    "F1\tP2\tF1\tP1\t498812\t0.112013\t0.00121\t0.246104\n"  # kept ('first')
    "F2\tQ1\tF1\tP1\t498801\t0.058102\t0.02871\t-0.0213\n"
    "F2\tQ1\tF1\tP2\t498799\t0.09021\t0.00612\t0.177\n"  # exactly 'first': kept
    "F2\tQ2\tF2\tQ1\t498700\t0.08011\t0.01103\t0.0884\n"  # kept only with 'second'
)

# plink2 when every FID is 0: the FID columns are left out.
PLINK2_KIN0_NO_FID = (
    "#IID1\tIID2\tNSNP\tHETHET\tIBS0\tKINSHIP\n"
    "P2\tP1\t498812\t0.112013\t0.00121\t0.246104\n"
    "Q1\tP1\t498801\t0.058102\t0.02871\t-0.0213\n"
)

# PLINK 1.9 --genome: right-aligned, space-padded, leading spaces; EZ and RATIO may be NA.
GENOME = (
    " FID1     IID1 FID2     IID2 RT    EZ      Z0      Z1      Z2  PI_HAT PHE       DST     PPC   RATIO\n"
    "   F1       P1   F1       P2 PO   0.5  0.0000  1.0000  0.0000  0.5000  -1  0.839212  1.0000 27.5000\n"
    "   F1       P1   F2       Q1 UN    NA  0.6460  0.3540  0.0000  0.1770  -1  0.760034  0.9781  2.6923\n"
    "   F1       P2   F2       Q1 UN    NA  0.2920  0.7080  0.0000  0.3540  -1  0.780112  1.0000  8.1000\n"
    "   F2       Q1   F2       Q2 UN    NA  1.0000  0.0000  0.0000  0.0000  -1  0.701208  0.1021      NA\n"
)
# kinship = PI_HAT / 2: P1-P2 0.25, P1-Q1 0.0885, P2-Q1 0.177, Q1-Q2 0.


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def as_records(frame):
    return [(r.id1, r.id2, r.kinship) for r in frame.itertuples()]


def error_of(call, *args, **kwargs) -> DepgraphError:
    with pytest.raises(DepgraphError) as info:
        call(*args, **kwargs)
    return info.value


# --------------------------------------------------------------------------- KING
def test_king_kin_within_family(tmp_path):
    path = write(tmp_path, "king.kin", KING_KIN)
    pairs, record = read_kinship(path, "king", "second")
    assert as_records(pairs) == [("P1", "P2", 0.2461), ("P1", "P3", 0.2514), ("Q1", "Q2", 0.0884)]
    assert record["pairs_read"] == 5 and record["pairs_kept"] == 3 and record["pairs_missing"] == 0
    assert record["threshold"] == 0.0884 and record["threshold_name"] == "second" and record["inclusive"] is True
    assert record["format"] == "king" and record["scale"] == "Kinship" and record["path"] == "king.kin"
    assert list(record)[:10] == [
        "format",
        "path",
        "pairs_read",
        "pairs_kept",
        "pairs_missing",
        "threshold",
        "threshold_name",
        "inclusive",
        "scale",
        "id_template",
    ]


def test_king_kin_fid_applies_to_both_ids(tmp_path):
    path = write(tmp_path, "king.kin", KING_KIN)
    pairs, _ = read_kinship(path, "king", 0.2, id_template="{FID}_{IID}")
    assert as_records(pairs) == [("F1_P1", "F1_P2", 0.2461), ("F1_P1", "F1_P3", 0.2514)]


def test_king_kin0_aligned_with_spaces_and_threshold_inclusive(tmp_path):
    path = write(tmp_path, "king.kin0", KING_KIN0_ALIGNED)
    pairs, record = read_kinship(path, "king", "first", id_template="{FID}:{IID}")
    assert as_records(pairs) == [("F1:P2", "F3:R1", 0.3542), ("F2:Q2", "F3:R2", 0.177)]
    assert record["pairs_read"] == 4
    dup, _ = read_kinship(path, "king", "duplicate")
    assert as_records(dup) == [("P2", "R1", 0.3542)]


def test_king_negative_estimates_never_kept_even_at_zero(tmp_path):
    path = write(tmp_path, "king.kin0", KING_KIN0_ALIGNED)
    pairs, _ = read_kinship(path, "king", 0.0)
    assert len(pairs) == 3 and (pairs["kinship"] >= 0).all()


def test_king_related_kin0_reads_kinship_by_name(tmp_path):
    path = write(tmp_path, "king.kin0", KING_RELATED_KIN0)
    pairs, _ = read_kinship(path, "king", "first")
    assert as_records(pairs) == [("P1", "Q1", 0.24)]


def test_king_without_family_columns(tmp_path):
    # e.g. the UK Biobank relatedness file: ID1 ID2 HetHet IBS0 Kinship
    path = write(tmp_path, "rel.dat", "ID1 ID2 HetHet IBS0 Kinship\n1000025 2025656 0.045 0.0144 0.261\n")
    pairs, _ = read_kinship(path, "king", "first")
    assert as_records(pairs) == [("1000025", "2025656", 0.261)]
    err = error_of(read_kinship, path, "king", "first", id_template="{FID}_{IID}")
    assert err.code == "invalid_argument" and "family-id" in err.message and "rel.dat" in err.message


def test_ids_keep_their_spelling(tmp_path):
    path = write(
        tmp_path, "k.kin0", "FID1\tID1\tFID2\tID2\tN_SNP\tHetHet\tIBS0\tKinship\n0\t007\t0\t0100\t5\t0.1\t0\t0.3\n"
    )
    pairs, _ = read_kinship(path, "king", 0.1, id_template="{FID}-{IID}")
    assert as_records(pairs) == [("0-007", "0-0100", 0.3)]


# --------------------------------------------------------------------------- plink2
def test_plink2_king_table(tmp_path):
    path = write(tmp_path, "plink2.kin0", PLINK2_KIN0)
    pairs, record = read_kinship(path, "plink2-king", "first", id_template="{FID}_{IID}")
    assert as_records(pairs) == [("F1_P2", "F1_P1", 0.246104), ("F2_Q1", "F1_P2", 0.177)]
    assert record["scale"] == "KINSHIP" and record["pairs_read"] == 4
    second, _ = read_kinship(path, "plink2-king", "second")
    assert [(a, b) for a, b, _ in as_records(second)] == [("P2", "P1"), ("Q1", "P2"), ("Q2", "Q1")]


def test_plink2_without_fid_columns(tmp_path):
    path = write(tmp_path, "plink2.kin0", PLINK2_KIN0_NO_FID)
    pairs, _ = read_kinship(path, "plink2-king", 0.1)
    assert as_records(pairs) == [("P2", "P1", 0.246104)]
    err = error_of(read_kinship, path, "plink2-king", 0.1, id_template="{FID}_{IID}")
    assert err.code == "invalid_argument" and "every family id is 0" in err.message


def test_plink2_before_alpha3_header_with_id1(tmp_path):
    path = write(
        tmp_path, "old.kin0", "#FID1\tID1\tFID2\tID2\tNSNP\tHETHET\tIBS0\tKINSHIP\nF\tA\tG\tB\t10\t0.1\t0\t0.3\n"
    )
    pairs, _ = read_kinship(path, "plink2-king", 0.25)
    assert as_records(pairs) == [("A", "B", 0.3)]


# --------------------------------------------------------------------------- PLINK 1.9 --genome
def test_plink_genome_pi_hat_halved(tmp_path):
    path = write(tmp_path, "plink.genome", GENOME)
    pairs, record = read_kinship(path, "plink-genome", "first")
    # PI_HAT 0.5000 -> 0.25 and PI_HAT 0.3540 -> 0.177 (exactly 'first'); 0.1770 -> 0.0885 is not first-degree
    assert as_records(pairs) == [("P1", "P2", 0.25), ("P2", "Q1", 0.177)]
    assert record["scale"] == "PI_HAT / 2" and record["pairs_read"] == 4
    second, _ = read_kinship(path, "plink-genome", "second", id_template="{FID}/{IID}")
    assert as_records(second) == [("F1/P1", "F1/P2", 0.25), ("F1/P1", "F2/Q1", 0.0885), ("F1/P2", "F2/Q1", 0.177)]


def test_plink_genome_gzipped(tmp_path):
    path = tmp_path / "plink.genome.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(GENOME)
    assert detect_format(path) == "plink-genome"
    pairs, _ = read_kinship(path, "plink-genome", "first")
    assert len(pairs) == 2


# --------------------------------------------------------------------------- chunking
@pytest.mark.parametrize(
    ("name", "fmt", "text"),
    [
        ("a.kin", "king", KING_KIN),
        ("a.kin0", "king", KING_KIN0_ALIGNED),
        ("b.kin0", "plink2-king", PLINK2_KIN0),
        ("a.genome", "plink-genome", GENOME),
    ],
)
@pytest.mark.parametrize("threshold", [0.0, "third", "first"])
def test_chunked_reading_equals_one_chunk(tmp_path, name, fmt, text, threshold):
    path = write(tmp_path, name, text)
    whole, record_whole = read_kinship(path, fmt, threshold, id_template="{FID}_{IID}")
    for chunk_rows in (1, 2, 3):
        chunked, record = read_kinship(path, fmt, threshold, id_template="{FID}_{IID}", chunk_rows=chunk_rows)
        pd.testing.assert_frame_equal(chunked, whole)
        assert record.pop("individuals_ids").tolist() == record_whole["individuals_ids"].tolist()
        assert record == {k: v for k, v in record_whole.items() if k != "individuals_ids"}


def test_output_types_and_empty_result(tmp_path):
    path = write(tmp_path, "king.kin", KING_KIN)
    pairs, _ = read_kinship(path, "king", "third")
    assert pairs.columns.tolist() == ["id1", "id2", "kinship"]
    assert pairs.dtypes.tolist() == [object, object, np.float64]
    assert pairs.index.tolist() == list(range(len(pairs)))
    none, record = read_kinship(path, "king", 0.9)
    assert len(none) == 0 and none.dtypes.tolist() == [object, object, np.float64] and record["pairs_kept"] == 0
    header_only = write(tmp_path, "empty.kin0", PLINK2_KIN0.splitlines()[0] + "\n")
    none, record = read_kinship(header_only, "plink2-king", 0.0)
    assert len(none) == 0 and record["pairs_read"] == 0


def test_missing_kinship_is_counted_not_kept(tmp_path):
    text = PLINK2_KIN0_NO_FID + "R1\tR2\t0\t0\t0\tnan\nR3\tR4\t0\t0\t0\tNA\n"
    pairs, record = read_kinship(write(tmp_path, "p.kin0", text), "plink2-king", 0.0, chunk_rows=2)
    assert as_records(pairs) == [("P2", "P1", 0.246104)]
    assert record["pairs_read"] == 4 and record["pairs_missing"] == 2


def test_blank_lines_are_skipped_and_lines_still_counted(tmp_path):
    text = KING_KIN.replace("\nF2\tQ1\tQ2", "\n\nF2\tQ1\tQ2") + "F3\tX\tY\t5\t0\t0\t0\t0\toops\t0\n"
    err = error_of(read_kinship, write(tmp_path, "k.kin", text), "king", 0.1, chunk_rows=2)
    assert err.code == "invalid_value" and "line 8" in err.message and err.details["lines"] == [8]


# --------------------------------------------------------------------------- GCTA GRM
def write_grm(tmp_path, grm, fids, iids, prefix="cohort"):
    n = len(iids)
    rows, cols = np.tril_indices(n)  # row-major lower triangle with the diagonal: (0,0) (1,0) (1,1) (2,0)...
    grm.astype("<f4")[rows, cols].tofile(tmp_path / f"{prefix}.grm.bin")
    (tmp_path / f"{prefix}.grm.id").write_text("".join(f"{f}\t{i}\n" for f, i in zip(fids, iids, strict=True)))
    return tmp_path / prefix


def random_grm(n, seed=7):
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, 0.12, size=(n, n))
    grm = (noise + noise.T) / 2
    np.fill_diagonal(grm, 1.0 + rng.normal(0, 0.02, n))
    return grm.astype(np.float32)


def brute_force(grm, ids, threshold):
    kin = grm.astype(np.float64) / 2
    i, j = np.triu_indices(len(ids), k=1)
    keep = kin[i, j] >= threshold
    return sorted((ids[a], ids[b], kin[a, b]) for a, b in zip(i[keep], j[keep], strict=True))


def test_grm_equals_brute_force_with_tiny_blocks(tmp_path):
    n = 41
    grm = random_grm(n)
    grm[3, 17] = grm[17, 3] = 0.5  # kinship exactly 0.25 (exact in float32): kept at 0.25
    ids = np.array([f"S{k:02d}" for k in range(n)], dtype=object)
    prefix = write_grm(tmp_path, grm, ["0"] * n, ids)
    for threshold in (0.0, 0.05, 0.25):
        expected = brute_force(grm, ids, threshold)
        for chunk in (1, 7, 100, 10**6):
            pairs, record = read_kinship(f"{prefix}.grm.bin", "gcta-grm", threshold, chunk_rows=chunk)
            assert sorted(as_records(pairs)) == expected
            assert record["pairs_read"] == n * (n - 1) // 2 and record["pairs_kept"] == len(expected)
            assert record["individuals"] == n and record["scale"] == "GRM / 2"
    exact, _ = read_kinship(prefix, "gcta-grm", 0.25)
    assert ("S03", "S17", 0.25) in as_records(exact)


def test_grm_pair_order_and_diagonal_ignored(tmp_path):
    # 3 individuals; the diagonal (self-relatedness ~1, kinship 0.5) is never a pair
    grm = np.array([[1.0, 0.6, -0.1], [0.6, 1.02, 0.2], [-0.1, 0.2, 0.98]], dtype=np.float32)
    prefix = write_grm(tmp_path, grm, ["F1", "F1", "F2"], ["A", "B", "C"])
    pairs, _ = read_kinship(f"{prefix}.grm.id", "gcta-grm", 0.1, id_template="{FID}_{IID}")
    assert as_records(pairs) == [("F1_A", "F1_B", pytest.approx(0.3)), ("F1_B", "F2_C", pytest.approx(0.1))]


def test_grm_reads_bounded_blocks(tmp_path, monkeypatch):
    n = 60
    grm = random_grm(n, seed=3)
    prefix = write_grm(tmp_path, grm, ["0"] * n, [f"S{k}" for k in range(n)])
    sizes = []
    real = matrices_module.grm_blocks

    def spy(*args):
        for block in real(*args):
            sizes.append(block[3].size)
            yield block

    monkeypatch.setattr(matrices_module, "grm_blocks", spy)
    read_kinship(prefix, "gcta-grm", 0.05, chunk_rows=100)
    assert sum(sizes) == n * (n + 1) // 2  # every cell read exactly once
    assert max(sizes) <= 100 and len(sizes) > 15


def test_grm_nan_is_missing(tmp_path):
    grm = np.array([[1.0, np.nan], [np.nan, 1.0]], dtype=np.float32)
    prefix = write_grm(tmp_path, grm, ["0", "0"], ["A", "B"])
    pairs, record = read_kinship(prefix, "gcta-grm", 0.0)
    assert len(pairs) == 0 and record["pairs_missing"] == 1 and record["pairs_read"] == 1


# --------------------------------------------------------------------------- pairs tables
def test_pairs_csv_and_tsv(tmp_path):
    csv = write(tmp_path, "pairs.csv", "id1,id2,kinship\nA,B,0.25\nA,C,0.0884\nB,C,0.01\nC,D,NA\n")
    pairs, record = read_kinship(csv, "pairs", "second")
    assert as_records(pairs) == [("A", "B", 0.25), ("A", "C", 0.0884)]
    assert record["pairs_read"] == 4 and record["pairs_missing"] == 1 and record["scale"] == "kinship"
    # a generic pair table holds coefficients in [0, 1], as add_kinship's do (README design notes)
    negative = write(tmp_path, "negative.csv", "id1,id2,kinship\nA,B,0.25\nB,C,-0.01\n")
    err = error_of(read_kinship, negative, "pairs", "second")
    assert err.code == "invalid_value" and "line 3" in err.message and "-0.01" in err.message
    tsv = write(tmp_path, "pairs.tsv", "id1\tid2\tkinship\nA\tB\t0.25\n")
    pairs, _ = read_kinship(tsv, "pairs", 0.2, id_template="sub-{IID}")
    assert as_records(pairs) == [("sub-A", "sub-B", 0.25)]


def test_pairs_parquet_names_rows(tmp_path):
    path = tmp_path / "pairs.parquet"
    pd.DataFrame({"id1": ["A", "A"], "id2": ["B", "C"], "kinship": ["0.3", "x"]}).to_parquet(path)
    err = error_of(read_kinship, path, "pairs", 0.1)
    assert err.code == "invalid_value" and "row 2" in err.message
    pd.DataFrame({"id1": [1, 2], "id2": [3, 4], "kinship": [0.3, 0.01]}).to_parquet(path)
    pairs, _ = read_kinship(path, "pairs", 0.1)
    assert as_records(pairs) == [("1", "3", 0.3)]


def test_pairs_errors(tmp_path):
    bad = write(tmp_path, "pairs.csv", "id1,id2,kinship\nA,B,0.25\nA,C,high\n")
    err = error_of(read_kinship, bad, "pairs", 0.1)
    assert err.code == "invalid_value" and "line 3" in err.message and "'high'" in err.message
    no_col = write(tmp_path, "nocol.csv", "id1,id2,phi\nA,B,0.25\n")
    err = error_of(read_kinship, no_col, "pairs", 0.1)
    assert err.code == "schema" and "kinship" in err.message and "nocol.csv" in err.message
    fine = write(tmp_path, "fine.csv", "id1,id2,kinship\nA,B,0.25\n")
    assert error_of(read_kinship, fine, "pairs", 0.1, id_template="{FID}{IID}").code == "invalid_argument"


# --------------------------------------------------------------------------- detect_format
def test_detect_format(tmp_path):
    assert detect_format(write(tmp_path, "a.kin", KING_KIN)) == "king"
    assert detect_format(write(tmp_path, "a.kin0", KING_KIN0_ALIGNED)) == "king"
    assert detect_format(write(tmp_path, "b.kin0", PLINK2_KIN0)) == "plink2-king"
    assert detect_format(write(tmp_path, "c.kin0", PLINK2_KIN0_NO_FID)) == "plink2-king"
    assert detect_format(write(tmp_path, "d.kin0", "FID1\tIID1\tFID2\tIID2\tN_SNP\tKinship\n")) == "king"
    assert detect_format(write(tmp_path, "x.genome", GENOME)) == "plink-genome"
    prefix = write_grm(tmp_path, random_grm(3), ["0"] * 3, ["A", "B", "C"])
    for name in (f"{prefix}.grm.bin", f"{prefix}.grm.id", f"{prefix}.grm.N.bin", f"{prefix}.grm", prefix):
        assert detect_format(name) == "gcta-grm", name
    # unknown suffixes: recognised by header, else a pairs table
    assert detect_format(write(tmp_path, "rel.txt", PLINK2_KIN0)) == "plink2-king"
    assert detect_format(write(tmp_path, "rel2.txt", GENOME)) == "plink-genome"
    assert detect_format(write(tmp_path, "rel3.txt", KING_KIN)) == "king"
    assert detect_format(write(tmp_path, "pairs.csv", "id1,id2,kinship\nA,B,0.3\n")) == "pairs"
    assert error_of(detect_format, tmp_path / "nowhere.kin0").code == "io"
    # GCTA's text GRM and PLINK 2's KING matrices are read (tests/test_real_tools.py reads the tools' own files)
    for name in ("text.grm.gz", "text.grm.zst", "list.grm"):
        assert detect_format(tmp_path / name) == "gcta-grm", name
    for name in ("m.king", "m.king.zst", "m.king.bin", "m.king.id"):
        assert detect_format(tmp_path / name) == "plink2-king-matrix", name


def test_every_detected_format_reads(tmp_path):
    files = {"a.kin": KING_KIN, "b.kin0": PLINK2_KIN0, "c.genome": GENOME}
    for name, text in files.items():
        path = write(tmp_path, name, text)
        fmt = detect_format(path)
        assert fmt in KINSHIP_FORMATS
        assert len(read_kinship(path, fmt, "third")[0]) > 0


# --------------------------------------------------------------------------- errors
def test_missing_files_are_io_errors(tmp_path):
    for fmt in KINSHIP_FORMATS:
        err = error_of(read_kinship, tmp_path / "absent.kin0", fmt, 0.1)
        assert err.code == "io" and "absent" in err.message, fmt
    prefix = write_grm(tmp_path, random_grm(3), ["0"] * 3, ["A", "B", "C"])
    (tmp_path / "cohort.grm.id").unlink()
    err = error_of(read_kinship, f"{prefix}.grm.bin", "gcta-grm", 0.1)
    assert err.code == "io" and "cohort.grm.id" in err.message
    assert error_of(read_kinship, tmp_path, "king", 0.1).code == "io"  # a directory


def test_unknown_format_and_bad_arguments(tmp_path):
    path = write(tmp_path, "king.kin", KING_KIN)
    err = error_of(read_kinship, path, "king-robust", 0.1)
    assert err.code == "invalid_argument" and "plink-genome" in err.message
    for threshold in (-0.1, 1.5, float("nan"), "cousins"):
        assert error_of(read_kinship, path, "king", threshold).code == "invalid_argument", threshold
    for template in ("{FID}", "{ID}", "{IID:>5}", "{IID", 7):
        assert error_of(read_kinship, path, "king", 0.1, id_template=template).code == "invalid_argument", template
    for chunk_rows in (0, -1, 2.5, True):
        assert error_of(read_kinship, path, "king", 0.1, chunk_rows=chunk_rows).code == "invalid_argument"


@pytest.mark.parametrize(
    ("fmt", "text", "absent"),
    [
        ("king", "FID1 ID1 FID2 ID2 N_SNP HetHet IBS0\nF A G B 1 0 0\n", "Kinship"),
        ("king", "FID1 IDX FID2 ID2 Kinship\nF A G B 0.3\n", "ID1"),
        ("plink2-king", "#FID1\tIID1\tFID2\tIID2\tNSNP\tKING\nF\tA\tG\tB\t1\t0.3\n", "KINSHIP"),
        ("plink-genome", GENOME.replace("PI_HAT", "PIHAT"), "PI_HAT"),
        ("plink-genome", KING_KIN, "IID1"),  # a KING file read as --genome
    ],
)
def test_header_lacking_columns_is_a_schema_error(tmp_path, fmt, text, absent):
    path = write(tmp_path, "rel.txt", text)
    err = error_of(read_kinship, path, fmt, 0.1)
    assert err.code == "schema" and absent in err.message and "rel.txt" in err.message
    assert absent in err.details["columns"]


def test_non_numeric_kinship_names_the_line(tmp_path):
    text = GENOME.replace("0.1770  -1", "  high  -1")  # data line 2 is file line 3
    path = write(tmp_path, "bad.genome", text)
    for chunk_rows in (1, 2, 100):
        err = error_of(read_kinship, path, "plink-genome", 0.1, chunk_rows=chunk_rows)
        assert err.code == "invalid_value" and "line 3" in err.message and "'high'" in err.message
        assert "PI_HAT" in err.message and "bad.genome" in err.message and err.details["lines"] == [3]


def test_infinite_kinship_is_an_error(tmp_path):
    path = write(tmp_path, "inf.kin0", PLINK2_KIN0_NO_FID.replace("0.246104", "inf"))
    err = error_of(read_kinship, path, "plink2-king", 0.1)
    assert err.code == "invalid_value" and "line 2" in err.message


def test_truncated_line_is_a_parse_error(tmp_path):
    text = KING_KIN0_ALIGNED + "F9       Z1      F8       Z2      510877\n"  # cut mid-line: file line 6
    err = error_of(read_kinship, write(tmp_path, "cut.kin0", text), "king", 0.1, chunk_rows=2)
    assert err.code == "parse" and "line 6" in err.message


def test_missing_id_in_a_kept_pair(tmp_path):
    text = "#IID1\tIID2\tNSNP\tHETHET\tIBS0\tKINSHIP\n\tP1\t10\t0.1\t0\t0.3\n"
    err = error_of(read_kinship, write(tmp_path, "gap.kin0", text), "plink2-king", 0.1)
    assert err.code == "missing_id" and "line 2" in err.message


def test_empty_files(tmp_path):
    assert error_of(read_kinship, write(tmp_path, "e.kin0", ""), "king", 0.1).code == "empty_input"
    assert error_of(read_kinship, write(tmp_path, "e.csv", ""), "pairs", 0.1).code == "empty_input"


def test_grm_of_the_wrong_size(tmp_path):
    prefix = write_grm(tmp_path, random_grm(4), ["0"] * 4, list("ABCD"))
    with open(f"{prefix}.grm.bin", "ab") as handle:
        handle.write(b"\0\0\0\0")  # one float too many
    err = error_of(read_kinship, prefix, "gcta-grm", 0.1)
    assert err.code == "schema" and "40" in err.message and "44" in err.message  # 4*5/2 cells * 4 bytes
    assert err.details["expected_bytes"] == 40 and err.details["actual_bytes"] == 44
    (tmp_path / "cohort.grm.id").write_text("0\tA\n0\tB\n0\tC\n")  # now 3 ids for a 4-individual matrix
    assert error_of(read_kinship, prefix, "gcta-grm", 0.1).code == "schema"


def test_grm_double_precision_is_named(tmp_path):
    grm = random_grm(3).astype(np.float64)
    rows, cols = np.tril_indices(3)
    grm[rows, cols].astype("<f8").tofile(tmp_path / "d.grm.bin")
    (tmp_path / "d.grm.id").write_text("0\tA\n0\tB\n0\tC\n")
    err = error_of(read_kinship, tmp_path / "d", "gcta-grm", 0.1)
    assert err.code == "schema" and "double-precision" in err.message


def test_grm_repeated_ids(tmp_path):
    prefix = write_grm(tmp_path, random_grm(3), ["F1", "F2", "F1"], ["A", "A", "A"])
    err = error_of(read_kinship, prefix, "gcta-grm", 0.1)
    assert err.code == "duplicate_id" and "A" in err.details["ids"] and "{FID}_{IID}" in err.message
    assert err.details["lines"] == [1, 2, 3]
    err = error_of(read_kinship, prefix, "gcta-grm", 0.1, id_template="{FID}_{IID}")
    assert err.code == "duplicate_id" and err.details["ids"] == ["F1_A"] and err.details["lines"] == [1, 3]


def test_add_kinship_reads_tool_files_and_the_cli_builds_with_them(tmp_path, capsys):
    import pandas as pd

    from depgraph import derive, from_metadata
    from depgraph.cli.main import main

    kin0 = tmp_path / "study.kin0"
    kin0.write_text(
        "FID1\tID1\tFID2\tID2\tN_SNP\tHetHet\tIBS0\tKinship\n"
        "F1\tA\tF1\tB\t10000\t0.1\t0.001\t0.2480\n"
        "F2\tC\tF3\tD\t10000\t0.1\t0.05\t-0.0120\n"
        "F9\tX\tF9\tY\t10000\t0.1\t0.001\t0.0100\n"
    )
    meta = pd.DataFrame({"sample_id": ["s1", "s2", "s3", "s4"], "subject_id": ["A", "B", "C", "D"]})
    graph = add_kinship(from_metadata(meta), kin0, "first")  # format detected; X/Y are below threshold
    assert derive(graph, "relatedness").n_groups == 3
    step = graph.history[-1]
    assert step["format"] == "king" and step["pairs_kept"] == 1 and graph.edges["provenance"].iloc[-1] == "kinship:king"
    meta.to_csv(tmp_path / "meta.csv", index=False)
    code = main(["build", str(tmp_path / "meta.csv"), "--kinship", str(kin0), "--kinship-format", "king",
                 "--kinship-threshold", "0.2", "-o", str(tmp_path / "g.json")])  # fmt: skip
    assert code == 0 and "subject_related_to" in capsys.readouterr().out


# --------------------------------------------------------------------------- tool tables saved as CSV (issue 11)
# What a tool wrote, opened in a spreadsheet or pandas and saved again: commas, a European Excel's semicolons with
# decimal commas, tabs, each with or without a UTF-8 byte-order mark, under the tool's suffix or as .csv / .txt.
# The pairs expected at 'second' (0.0884) are worked out by hand from the fixtures' comments.
SAVED_LAYOUTS = [
    pytest.param("cohort.kin", KING_KIN, "king",
                 [("P1", "P2", 0.2461), ("P1", "P3", 0.2514), ("Q1", "Q2", 0.0884)], id="king-kin"),
    pytest.param("cohort.kin0", KING_KIN0_ALIGNED, "king",
                 [("P2", "R1", 0.3542), ("Q2", "R2", 0.177), ("Q3", "R3", 0.1769)], id="king-kin0"),
    pytest.param("cohort.kin0", KING_RELATED_KIN0, "king", [("P1", "Q1", 0.24)], id="king-related"),
    pytest.param("cohort.kin0", PLINK2_KIN0, "plink2-king",
                 [("P2", "P1", 0.246104), ("Q1", "P2", 0.177), ("Q2", "Q1", 0.0884)], id="plink2"),
    pytest.param("cohort.kin0", PLINK2_KIN0_NO_FID, "plink2-king", [("P2", "P1", 0.246104)], id="plink2-no-fid"),
    pytest.param("cohort.genome", GENOME, "plink-genome",
                 [("P1", "P2", 0.25), ("P1", "Q1", 0.0885), ("P2", "Q1", 0.177)], id="plink-genome"),
]  # fmt: skip


def saved_as(text: str, delimiter: str, decimal_comma: bool) -> str:
    """The tool's table as a spreadsheet saves it: fields split on tabs or runs of blanks, joined by ``delimiter``;
    with ``decimal_comma`` every decimal number written with a comma (0.2461 -> 0,2461)."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if decimal_comma:
            fields = [f.replace(".", ",") if f.replace(".", "", 1).lstrip("-").isdigit() else f for f in fields]
        rows.append(delimiter.join(fields))
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize(("name", "text", "fmt", "expected"), SAVED_LAYOUTS)
@pytest.mark.parametrize(
    ("delimiter", "decimal_comma"),
    [(",", False), (";", True), (";", False), ("\t", False), ("|", False)],
    ids=["comma", "semicolon-decimal-comma", "semicolon", "tab", "pipe"],
)
@pytest.mark.parametrize("bom", [False, True], ids=["utf8", "bom"])
@pytest.mark.parametrize("suffix", ["tool", ".csv", ".txt"])
def test_a_tool_table_saved_as_csv_is_still_its_format(
    tmp_path, name, text, fmt, expected, delimiter, decimal_comma, bom, suffix
):
    path = tmp_path / (name if suffix == "tool" else f"relatedness{suffix}")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + saved_as(text, delimiter, decimal_comma).encode())
    assert detect_format(path) == fmt
    pairs, record = read_kinship(path, fmt, "second")
    assert as_records(pairs) == expected
    assert record["pairs_read"] == len(text.splitlines()) - 1


def test_a_semicolon_tool_table_mixing_decimal_commas_and_points_is_refused(tmp_path):
    text = saved_as(PLINK2_KIN0, ";", True).replace("0,177\n", "0.177\n")
    err = error_of(read_kinship, write(tmp_path, "rel.csv", text), "plink2-king", "second")
    assert err.code == "ambiguity" and "KINSHIP" in err.message
    assert "line 2" in err.message and "line 4" in err.message and err.details["lines"] == [2, 4]


def test_a_tool_table_in_latin_1_needs_its_encoding(tmp_path):
    path = tmp_path / "rel.kin0"
    path.write_bytes(KING_KIN0_ALIGNED.replace("P2 ", "Jörg").encode("latin-1"))
    err = error_of(read_kinship, path, "king", "second")
    assert err.code == "parse" and "line 3" in err.message and "0xf6" in err.message and "--encoding" in err.message
    pairs, _ = read_kinship(path, "king", "second", encoding="latin-1")
    assert as_records(pairs)[0] == ("Jörg", "R1", 0.3542)
    assert detect_format(path, encoding="latin-1") == "king"
    gz = tmp_path / "rel.kin0.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert error_of(read_kinship, gz, "king", "second").message.count("line 3") == 1
    assert as_records(read_kinship(gz, "king", "second", encoding="latin-1")[0])[0][0] == "Jörg"
