"""Record OpenDP's MST or AIM releases on the reference data (``pgm_reference.py``) into
``data/opendp_mst_reference.json`` or ``data/opendp_aim_reference.json``.

MST, per release: the model's two-way marginals and the synthetic data's two-way tables of
every pair (4 × 4 with OpenDP's null level), the number of synthetic rows holding a null, the
noise standard deviations of the measurements and the measured cliques.

AIM (on the first three columns, ``pgm_reference.AIM_COLUMNS``), per release: the model's
and the synthetic data's tables of every clique of AIM's candidates (one-, two- and
three-way, (K + 1) levels per column with OpenDP's null), the null rows, every measurement
as (clique, noise SD), and the number of AIM rounds.

OpenDP draws its noise from the operating system (no seed), and one release costs 15–120 s
here, so the tests read this recorded sample instead of running OpenDP K times.

Run (takes several minutes): ``python tests/harness/synthesizers/make_pgm_reference.py 30
[mst|aim]``: records until the file holds 30 releases (delete it to record afresh). OpenDP
runs through ``pgm_bench.opendp_mst`` / ``opendp_aim`` (beside this file), which say how
OpenDP 0.16 is run with mbi 2.
"""

import json
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import pgm_reference as ref  # noqa: E402
from pgm_bench import opendp_aim, opendp_mst  # noqa: E402

OUT = Path(__file__).parent / "data"


def mst_record(codes) -> dict:
    model, marginals, synthetic = opendp_mst(codes, ref.LEVELS, ref.RHO, ref.ONEWAY_SPLIT,
                                             ref.MEASURE_SPLIT, ref.N)
    names = [f"c{j}" for j in range(len(ref.COLUMNS))]
    pairs = list(combinations(range(len(ref.COLUMNS)), 2))
    return {
        "model_tables": [np.asarray(model.project((names[a], names[b]))
                                    .datavector(flatten=False)).tolist() for a, b in pairs],
        "synthetic_tables": [ref.pair_table(synthetic.astype(np.int64), a, b).tolist()
                             for a, b in pairs],
        "null_rows": int((synthetic == ref.LEVELS).any(axis=1).sum()),
        "stddevs": {"-".join(m.clique): float(m.stddev) for m in marginals.flatten()},
        "cliques": [list(m.clique) for m in marginals.flatten()],
    }


def aim_record(codes) -> dict:
    codes = codes[:, :ref.AIM_COLUMNS]
    model, marginals, synthetic = opendp_aim(
        codes, ref.LEVELS, ref.RHO, degree=ref.AIM_DEGREE, rounds=ref.AIM_ROUNDS,
        max_size=ref.AIM_MAX_SIZE, measure_split=ref.MEASURE_SPLIT,
        oneway_split=ref.ONEWAY_SPLIT, rows=ref.N)
    names = [f"c{j}" for j in range(ref.AIM_COLUMNS)]
    cliques = ref.aim_cliques()
    measurements = [["-".join(m.clique), float(m.stddev)] for m in marginals.flatten()]
    return {
        "model_tables": [np.asarray(model.project(tuple(names[a] for a in c))
                                    .datavector(flatten=True)).tolist() for c in cliques],
        "synthetic_tables": [ref.clique_table(synthetic, c).tolist() for c in cliques],
        "null_rows": int((synthetic == ref.LEVELS).any(axis=1).sum()),
        "measurements": measurements,
        "rounds": len(measurements) - ref.AIM_COLUMNS,
    }


def main(k: int, method: str) -> None:
    codes = ref.reference_codes()
    out = OUT / f"opendp_{method}_reference.json"
    records = json.loads(out.read_text())["releases"] if out.exists() else []
    for i in range(len(records), k):  # resumes: the releases already recorded are kept
        start = time.time()
        np.random.seed(i)  # noqa: NPY002  (mbi's sampler draws from numpy's global state)
        records.append((mst_record if method == "mst" else aim_record)(codes))
        records[-1]["seconds"] = time.time() - start
        print(i, records[-1]["null_rows"], records[-1]["seconds"], flush=True)
        OUT.mkdir(exist_ok=True)
        out.write_text(json.dumps({"rho": ref.RHO, "n": ref.N, "releases": records},
                                  indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30,
         sys.argv[2] if len(sys.argv) > 2 else "mst")
