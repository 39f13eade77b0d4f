"""Forward-sample the Asia (lung cancer) network of Lauritzen & Spiegelhalter (1988).

Writes asia.csv: 1000 cases, seed 20261130, states "yes" / "no". The CPTs are the
textbook ones (the same as pgmpy's ``asia`` example network); ``either`` is the
deterministic OR of ``tub`` and ``lung``.

Run from this folder: ``python make_data.py``.
"""

import numpy as np
import pandas as pd

P_YES = {  # node: (parents, P(node = yes | parents' states as a tuple of bools))
    "asia": ((), {(): 0.01}),
    "smoke": ((), {(): 0.5}),
    "tub": (("asia",), {(True,): 0.05, (False,): 0.01}),
    "lung": (("smoke",), {(True,): 0.1, (False,): 0.01}),
    "bronc": (("smoke",), {(True,): 0.6, (False,): 0.3}),
    "either": (("lung", "tub"), {(True, True): 1.0, (True, False): 1.0, (False, True): 1.0,
                                 (False, False): 0.0}),
    "xray": (("either",), {(True,): 0.98, (False,): 0.05}),
    "dysp": (("bronc", "either"), {(True, True): 0.9, (True, False): 0.8, (False, True): 0.7,
                                   (False, False): 0.1}),
}


def sample(n: int, seed: int) -> pd.DataFrame:
    """``n`` cases in topological order (the dict above lists parents first)."""
    rng = np.random.default_rng(seed)
    values: dict[str, np.ndarray] = {}
    for node, (parents, table) in P_YES.items():
        p = np.array([table[tuple(bool(values[q][i]) for q in parents)] for i in range(n)])
        values[node] = rng.random(n) < p
    return pd.DataFrame({k: np.where(v, "yes", "no") for k, v in values.items()})


if __name__ == "__main__":
    sample(1000, 20261130).to_csv("asia.csv", index=False)
