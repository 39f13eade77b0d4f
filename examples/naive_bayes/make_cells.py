"""Write cells.csv: two measurements of 32 cell samples, 20 benign and 12 malignant.

Deterministic (seeded); rounded to 0.01 as a lab sheet would be. Run from this folder.
"""

import numpy as np
import pandas as pd

rng = np.random.default_rng(8)
benign = pd.DataFrame({"radius": rng.normal(12.0, 1.5, 20), "texture": rng.normal(18.0, 3.0, 20),
                       "diagnosis": "benign"})
malignant = pd.DataFrame({"radius": rng.normal(17.0, 2.5, 12),
                          "texture": rng.normal(22.0, 3.5, 12), "diagnosis": "malignant"})
cells = pd.concat([benign, malignant]).sample(frac=1, random_state=1).round(2)
cells.to_csv("cells.csv", index=False)
