"""Regenerate the example data (run from this folder): five batches and one file."""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261129)
theta = np.array([1.5, -2.0, 0.5])  # intercept, x1, x2
for i, n in enumerate([40, 25, 60, 15, 50]):  # uneven batches, as a stream would bring them
    X = rng.normal(size=(n, 2))
    y = theta[0] + X @ theta[1:] + rng.normal(scale=1.0, size=n)
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y}).round(6).to_csv(
        f"batches/{i}.csv", index=False)

n = 80
X = rng.normal(size=(n, 3))
y = X @ np.array([0.8, 0.0, -1.2]) + rng.normal(scale=0.7, size=n)
pd.DataFrame({"size": X[:, 0], "age": X[:, 1], "dist": X[:, 2], "price": y}).round(6).to_csv(
    "houses.csv", index=False)
