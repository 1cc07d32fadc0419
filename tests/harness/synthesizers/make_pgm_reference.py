"""Record OpenDP's MST releases on the reference data (``pgm_reference.py``) into
``data/opendp_mst_reference.json``: per release the model's two-way marginals and the
synthetic data's two-way tables of every pair (4 × 4 with OpenDP's null level), the number of
synthetic rows holding a null, the noise standard deviations of the measurements and the
measured cliques. OpenDP draws its noise from the operating system (no seed), and one release costs
15–120 s here, so the test reads this recorded sample instead of running OpenDP K times.

Run (takes several minutes): ``python tests/harness/synthesizers/make_pgm_reference.py 30``.
OpenDP runs through ``pgm_bench.opendp_mst`` (beside this file) (which says how OpenDP 0.16
is run with mbi 2).
"""

import json
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import pgm_reference as ref  # noqa: E402
from pgm_bench import opendp_mst  # noqa: E402

OUT = Path(__file__).parent / "data" / "opendp_mst_reference.json"


def main(k: int) -> None:
    codes = ref.reference_codes()
    records = []
    for i in range(k):
        start = time.time()
        np.random.seed(i)  # noqa: NPY002  (mbi's sampler draws from numpy's global state)
        model, marginals, synthetic = opendp_mst(codes, ref.LEVELS, ref.RHO, ref.ONEWAY_SPLIT,
                                                 ref.MEASURE_SPLIT, ref.N)
        names = [f"c{j}" for j in range(len(ref.COLUMNS))]
        pairs = list(combinations(range(len(ref.COLUMNS)), 2))
        records.append({
            "model_tables": [np.asarray(model.project((names[a], names[b]))
                                        .datavector(flatten=False)).tolist() for a, b in pairs],
            "synthetic_tables": [ref.pair_table(synthetic.astype(np.int64), a, b).tolist()
                                 for a, b in pairs],
            "null_rows": int((synthetic == ref.LEVELS).any(axis=1).sum()),
            "stddevs": {"-".join(m.clique): float(m.stddev) for m in marginals.flatten()},
            "cliques": [list(m.clique) for m in marginals.flatten()],
            "seconds": time.time() - start,
        })
        print(i, records[-1]["null_rows"], records[-1]["seconds"], flush=True)
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps({"rho": ref.RHO, "n": ref.N, "releases": records},
                                  indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
