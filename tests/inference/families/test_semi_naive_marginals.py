"""AODE's exact Beta marginals against the Dirichlet posteriors counted afresh with pandas.

Each entry of a Dirichlet(alpha) row is Beta(alpha_k, sum of the other alpha). Written as the
row's total minus alpha_k, a tiny concentration beside counts cancels: 2a + 20 - a - 20 is 0
in float64 when a = 1e-16, a Beta(20, 0) that has no mean nor variance.
"""

import numpy as np
import pandas as pd
import pytest

from bayescheck import fit

SPEC = """model = "semi_naive_bayes"
[data]
path = "d.csv"
target = "y"
[fit]
kind = "aode"
m_prime = 0
[prior]
concentration = {a!r}
[[query]]
x1 = "u"
x2 = "p"
"""


def _expected(frame: pd.DataFrame, a: float) -> dict[str, tuple[float, float]]:
    """(alpha_k, sum of the other alpha) of every joint and conditional entry."""
    classes, cats = sorted(frame.y.unique()), {f: sorted(frame[f].unique()) for f in ("x1", "x2")}
    out = {}
    for s, f in (("x1", "x2"), ("x2", "x1")):
        joint = pd.crosstab(frame.y, frame[s]).reindex(index=classes, columns=cats[s],
                                                       fill_value=0)
        alpha = a + joint.to_numpy(dtype=float).ravel()
        for i, (c, v) in enumerate((c, v) for c in classes for v in cats[s]):
            out[f"joint_{s}[{c}, {s}={v}]"] = (alpha[i], np.delete(alpha, i).sum())
        cond = pd.crosstab([frame.y, frame[s]], frame[f]).reindex(
            index=pd.MultiIndex.from_product([classes, cats[s]]), columns=cats[f], fill_value=0)
        for (c, v), row in zip(cond.index, a + cond.to_numpy(dtype=float), strict=True):
            for k, w in enumerate(cats[f]):
                out[f"cond_{s}_{f}[{c}, {s}={v}, {w}]"] = (row[k], np.delete(row, k).sum())
    return out


@pytest.mark.parametrize("a", [1e-16, 1e-12, 1.0, 1e12])
def test_aode_marginals_are_the_dirichlet_rows_counted_afresh(tmp_path, a):
    # every (A, x1=u) row has x2 = p: its Beta's b is the one other entry, a alone
    frame = pd.DataFrame([("u", "p", "A")] * 20 + [("v", "q", "B")] * 20 + [("u", "q", "B")] * 3,
                         columns=["x1", "x2", "y"])
    frame.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text(SPEC.format(a=a))
    want = _expected(frame, a)
    got = {m.name: m.dist for m in fit(tmp_path / "s.toml").posterior.marginals
           if m.dist is not None}
    assert set(got) == set(want)
    for name, (alpha, beta) in want.items():
        np.testing.assert_allclose(got[name].args, (alpha, beta), rtol=1e-13, err_msg=name)
        assert np.isfinite([got[name].mean(), got[name].std()]).all(), name
