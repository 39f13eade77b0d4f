"""Write blobs.csv: 300 points from 3 well-separated 2-D Gaussian components (seed 0)."""

from pathlib import Path

import numpy as np
import pandas as pd

rng = np.random.default_rng(0)
means = np.array([[0.0, 0.0], [6.0, 1.0], [2.0, 7.0]])
covs = np.array([[[1.0, 0.3], [0.3, 0.8]], [[0.6, -0.2], [-0.2, 1.2]], [[1.5, 0.0], [0.0, 0.5]]])
sizes = [120, 100, 80]
X = np.vstack([rng.multivariate_normal(m, c, size=s) for m, c, s in zip(means, covs, sizes,
                                                                         strict=True)])
X = X[rng.permutation(len(X))]
pd.DataFrame({"x1": X[:, 0].round(4), "x2": X[:, 1].round(4)}).to_csv(
    Path(__file__).with_name("blobs.csv"), index=False)
