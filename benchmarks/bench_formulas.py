"""Cost of finding ids a spreadsheet would run as formulas, and of the --excel-safe copy, at 1e5 and 1e6 ids.

    python benchmarks/bench_formulas.py [--sizes 1e5,1e6]

Ids are ``S0000001``… with one in a thousand written ``-<n>`` (formula-like). Times: the validate rule's check
(:func:`depgraph.common.identifiers.formula_like` over the graph's Arrow keys), the same check over a pandas object
column (a spec's samples), and :func:`depgraph.adapters.frames.for_spreadsheets` over a samples table of two text
columns and one number column. Prints a table and writes benchmarks/results/formulas.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from depgraph.adapters.frames import for_spreadsheets
from depgraph.common.identifiers import formula_like

RESULTS = Path(__file__).resolve().parent / "results"


def measure(n: int) -> dict:
    ids = [f"S{i:07d}" if i % 1000 else f"-{i}" for i in range(n)]
    keys = pa.array(ids)
    column = pd.Series(ids, dtype=object)
    table = pd.DataFrame({"sample_id": column, "group_id": column, "order_rank": np.arange(n)})
    t0 = time.perf_counter()
    in_arrow = formula_like(keys)
    t1 = time.perf_counter()
    in_pandas = formula_like(column)
    t2 = time.perf_counter()
    safe = for_spreadsheets(table)
    t3 = time.perf_counter()
    expected = (n + 999) // 1000
    assert int(in_arrow.sum()) == int(in_pandas.sum()) == expected
    assert int(safe["sample_id"].str.startswith("'").sum()) == expected
    return {
        "n_ids": n,
        "formula_like_arrow_s": round(t1 - t0, 3),
        "formula_like_pandas_s": round(t2 - t1, 3),
        "for_spreadsheets_s": round(t3 - t2, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6", help="comma-separated id counts")
    args = parser.parse_args()
    rows = [measure(int(float(s))) for s in args.sizes.split(",")]
    print(f"{'ids':>10} {'arrow s':>8} {'pandas s':>9} {'excel-safe s':>13}")
    for r in rows:
        print(
            f"{r['n_ids']:>10} {r['formula_like_arrow_s']:>8} {r['formula_like_pandas_s']:>9} "
            f"{r['for_spreadsheets_s']:>13}"
        )
    RESULTS.mkdir(exist_ok=True)
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    (RESULTS / "formulas.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
