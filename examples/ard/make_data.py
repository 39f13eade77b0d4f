"""Write design.csv: n = 60 rows, M = 12 features, 3 true non-zero weights, noise sd 0.5.

Run from this folder: ``python make_data.py`` (the committed file came from seed 4).
"""

import numpy as np
import pandas as pd

rng = np.random.default_rng(4)
n, m = 60, 12
X = rng.normal(size=(n, m))
w = np.zeros(m)
w[[1, 5, 8]] = [2.0, -1.5, 1.0]
y = X @ w + 0.5 * rng.normal(size=n)
frame = pd.DataFrame(X.round(4), columns=[f"x{j + 1}" for j in range(m)])
frame["y"] = y.round(4)
frame.to_csv("design.csv", index=False)
