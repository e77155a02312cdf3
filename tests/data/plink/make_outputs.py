"""Make the real-tools test data: a simulated pedigree's genotypes, run through PLINK 1.9 and PLINK 2 once.

    python tests/data/plink/make_outputs.py      # plink1.9 and plink2 on PATH (Debian: apt install plink1.9 plink2)

The pedigree (seeded, so the same files every time): 15 three-generation families of ten people — grandparents G1,
G2; their children C1, C2, C3 (full siblings); spouses S1, S2 married in; grandchildren K1, K2 (of C1 and S1) and K3
(of C2 and S2) — so every degree occurs: parent–offspring and full siblings (first, kinship 1/4), grandparent,
avuncular and half… (second, 1/8), first cousins K1–K3 (third, 1/16); plus three monozygotic twins (a copy of a
person's genotypes with 0.1 % call errors, kinship 1/2). 153 people, 20,000 autosomal SNPs on 22 chromosomes,
transmitted with crossovers (one per chromosome per meiosis on average), founders drawn from allele frequencies in
[0.05, 0.95]. Family ids are F01..F15 and individual ids repeat across families (G1, C1, K1…), so a subject is named
only by FID_IID.

Written here (each file is what the tool wrote; sizes are kept small by compressing where the tool can):
- ``truth.csv``: every related pair (fid1, iid1, fid2, iid2, kinship, degree) from the pedigree; ``cohort.fam``;
- PLINK 1.9: ``plink19.genome.gz`` (``--genome gz``), ``plink19.min.genome`` (``--genome --min 0.354``: a filtered
  file), ``plink19.grm.bin`` + ``plink19.grm.id`` + ``plink19.grm.N.bin`` (``--make-grm-bin``), ``plink19.grm.gz`` +
  ``plink19.grm.id`` (``--make-grm-gz``);
- PLINK 2: ``plink2.kin0.zst`` (``--make-king-table zs``), ``plink2.filtered.kin0`` (``--make-king-table
  --king-table-filter 0.177``), ``plink2.king.zst`` + ``plink2.king.id`` (``--make-king triangle zs``),
  ``plink2sq.king.zst`` + ``plink2sq.king.id`` (``--make-king square zs``), ``plink2bin.king.bin`` +
  ``plink2bin.king.id`` (``--make-king square bin4``), ``plink2.grm.zst`` + ``plink2.grm.id`` (``--make-grm-list
  zs``), ``plink2hdr.grm.bin`` + ``plink2hdr.grm.id`` (``--make-grm-bin id-header``).
The tools' versions are in README.md beside this script.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 2026
N_FAMILIES = 15
N_SNPS = 20_000
N_CHROMOSOMES = 22
TWINS = (("F01", "C2"), ("F05", "K1"), ("F09", "S1"))
ERROR_RATE = 0.001

#: person → (father, mother); founders have none. Spouses S1, S2 marry C1 and C2.
PEDIGREE = {"G1": None, "G2": None, "S1": None, "S2": None, "C1": ("G1", "G2"), "C2": ("G1", "G2"),
            "C3": ("G1", "G2"), "K1": ("C1", "S1"), "K2": ("C1", "S1"), "K3": ("C2", "S2")}  # fmt: skip


def haplotypes(rng: np.random.Generator) -> dict[tuple[str, str], np.ndarray]:
    """Each person's two haplotypes (2 × N_SNPS alleles 0/1), founders drawn, the others transmitted."""
    frequency = rng.uniform(0.05, 0.95, N_SNPS)
    chromosome = np.sort(rng.integers(0, N_CHROMOSOMES, N_SNPS))
    people: dict[tuple[str, str], np.ndarray] = {}
    for f in range(1, N_FAMILIES + 1):
        fid = f"F{f:02d}"
        for iid, parents in PEDIGREE.items():
            if parents is None:
                people[(fid, iid)] = (rng.random((2, N_SNPS)) < frequency).astype(np.int8)
            else:
                people[(fid, iid)] = np.stack([gamete(people[(fid, p)], chromosome, rng) for p in parents])
    return people


def gamete(parent: np.ndarray, chromosome: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One meiosis: per chromosome, start on a random haplotype and switch at Poisson(1) crossover points."""
    out = np.empty(N_SNPS, dtype=np.int8)
    for c in range(N_CHROMOSOMES):
        where = np.flatnonzero(chromosome == c)
        crossovers = np.sort(rng.integers(0, len(where), rng.poisson(1.0)))
        side = np.zeros(len(where), dtype=np.int64)
        for point in crossovers:
            side[point:] ^= 1
        side ^= rng.integers(0, 2)
        out[where] = parent[side, where]
    return out


def truth() -> list[tuple[str, str, str, str, float, str]]:
    """Every related pair with its kinship coefficient from the pedigree (the usual recursion: a person's kinship with
    someone not among their descendants is the mean of their parents' kinship with them) and its KING degree; a twin
    is its original (a twin pair's kinship is 1/2)."""
    degree = {0.5: "duplicate", 0.25: "first", 0.125: "second", 0.0625: "third"}
    twin_of = {f"{iid}T": iid for _, iid in TWINS}
    pairs = []
    for f in range(1, N_FAMILIES + 1):
        fid = f"F{f:02d}"
        order = list(PEDIGREE)
        phi: dict[tuple[str, str], float] = {}
        for i, x in enumerate(order):
            phi[(x, x)] = 0.5
            for y in order[:i]:
                parents = PEDIGREE[x]
                value = 0.0 if parents is None else (phi[(parents[0], y)] + phi[(parents[1], y)]) / 2
                phi[(x, y)] = phi[(y, x)] = value
        members = order + [t for t, original in twin_of.items() if (fid, original) in TWINS]
        for i, a in enumerate(members):
            for b in members[:i]:
                value = phi[(twin_of.get(a, a), twin_of.get(b, b))]
                if value > 0:
                    pairs.append((fid, b, fid, a, value, degree[value]))
    return pairs


def write_ped(people: dict[tuple[str, str], np.ndarray], folder: Path) -> None:
    """PLINK text files: .ped (FID IID father mother sex phenotype, then alleles A/C) and .map."""
    with (folder / "cohort.map").open("w") as f:
        chromosome = np.sort(np.random.default_rng(SEED).integers(0, N_CHROMOSOMES, N_SNPS))
        for j in range(N_SNPS):
            f.write(f"{chromosome[j] + 1}\trs{j + 1}\t0\t{j * 1000 + 1}\n")
    with (folder / "cohort.ped").open("w") as f:
        for (fid, iid), h in people.items():
            alleles = np.where(h == 1, "A", "C")
            genotype = " ".join(f"{a} {b}" for a, b in zip(alleles[0], alleles[1], strict=True))
            f.write(f"{fid} {iid} 0 0 0 -9 {genotype}\n")


def run(*args: str, cwd: Path) -> None:
    subprocess.run(list(args), cwd=cwd, check=True, capture_output=True)


def main() -> None:
    for tool in ("plink1.9", "plink2"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on PATH (Debian: apt install plink1.9 plink2)")
    rng = np.random.default_rng(SEED)
    people = haplotypes(rng)
    for fid, iid in TWINS:
        copy = people[(fid, iid)].copy()
        flips = rng.random(copy.shape) < ERROR_RATE
        copy[flips] ^= 1
        people[(fid, f"{iid}T")] = copy
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_ped(people, work)
        run("plink1.9", "--file", "cohort", "--make-bed", "--out", "cohort", cwd=work)
        plink19 = ("plink1.9", "--bfile", "cohort", "--allow-no-sex", "--threads", "1")
        run(*plink19, "--genome", "gz", "--out", "plink19", cwd=work)
        run(*plink19, "--genome", "--min", "0.354", "--out", "plink19.min", cwd=work)
        run(*plink19, "--make-grm-bin", "--out", "plink19", cwd=work)
        run(*plink19, "--make-grm-gz", "--out", "plink19", cwd=work)
        plink2 = ("plink2", "--bfile", "cohort", "--threads", "1")
        run(*plink2, "--make-king-table", "zs", "--out", "plink2", cwd=work)
        run(*plink2, "--make-king-table", "--king-table-filter", "0.177", "--out", "plink2.filtered", cwd=work)
        run(*plink2, "--make-king", "triangle", "zs", "--out", "plink2", cwd=work)
        run(*plink2, "--make-king", "square", "zs", "--out", "plink2sq", cwd=work)
        run(*plink2, "--make-king", "square", "bin4", "--out", "plink2bin", cwd=work)
        run(*plink2, "--make-grm-list", "zs", "--out", "plink2", cwd=work)
        run(*plink2, "--make-grm-bin", "id-header", "--out", "plink2hdr", cwd=work)
        kept = ["cohort.fam", "plink19.genome.gz", "plink19.min.genome", "plink19.grm.bin", "plink19.grm.id",
                "plink19.grm.N.bin", "plink19.grm.gz", "plink2.kin0.zst", "plink2.filtered.kin0", "plink2.king.zst",
                "plink2.king.id", "plink2sq.king.zst", "plink2sq.king.id", "plink2bin.king.bin", "plink2bin.king.id",
                "plink2.grm.zst", "plink2.grm.id", "plink2hdr.grm.bin", "plink2hdr.grm.id"]  # fmt: skip
        for name in kept:
            shutil.copyfile(work / name, HERE / name)
    with (HERE / "truth.csv").open("w") as f:
        f.write("fid1,iid1,fid2,iid2,kinship,degree\n")
        for row in truth():
            f.write(",".join(map(str, row)) + "\n")
    print(f"wrote {len(kept) + 1} files to {HERE}")


if __name__ == "__main__":
    main()
