"""A checkpoint written with the Householder batch statistic (main before round 8) resumes.

The checkpoint holds the posterior's root, whatever factored the batches: its format did not
change when tall batches began to be factored by preconditioned Cholesky QR
(``inference.engines.cholesky_qr``), so such a checkpoint resumes, to the uninterrupted
result within rounding (1e-12 relative), not bit for bit (another factorisation of the
batches after it).
"""

from pathlib import Path

import numpy as np
import pytest

from inference.dispatch import fit
from inference.engines import cholesky_qr as cq
from inference.engines import linear_gaussian as lg
from models import DataError, load_spec

SPEC = """model = "linear_regression"
[data]
path = "batches/*.csv"
target = "y"
intercept = true
[prior]
mean = 0.0
cov = 5.0
[likelihood]
noise_sd = 0.5
"""

ROWS = 4 * cq.sample_rows(4)  # tall enough for the Gram way (3 features + y)


def make_stream(tmp_path, n_batches=5, seed=0):
    rng = np.random.default_rng(seed)
    (tmp_path / "batches").mkdir()
    for i in range(n_batches):
        X = rng.normal(size=(ROWS, 2))
        y = 1.0 + X @ [0.5, -1.0] + 0.5 * rng.normal(size=ROWS)
        lines = ["x1,x2,y"] + [f"{a:.17g},{b:.17g},{c:.17g}"
                               for a, b, c in zip(*X.T, y, strict=True)]
        (tmp_path / "batches" / f"{i}.csv").write_text("\n".join(lines) + "\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    return spec


def householder_statistic(monkeypatch):
    """The batch statistic as main computed it: Householder QR of every batch."""
    monkeypatch.setattr(cq, "batch_root",
                        lambda Z, *, overwrite=False, **_: lg.triangular_root(
                            Z, overwrite=overwrite))


def test_a_householder_checkpoint_resumes_to_the_uninterrupted_fit(tmp_path, monkeypatch):
    spec = make_stream(tmp_path)
    accepted = []
    original = cq.gram_root

    def spy(Z, P):
        done = original(Z, P)
        accepted.append(done is not None and done[1] <= cq.MAX_COND)
        return done

    monkeypatch.setattr(cq, "gram_root", spy)
    whole = fit(load_spec(spec), out=tmp_path / "whole")
    assert accepted and all(accepted)  # every batch went the Gram way
    bad = tmp_path / "batches" / "3.csv"
    good = bad.read_text()
    lines = good.splitlines()
    lines[7] = "1.0,oops,2.0"
    bad.write_text("\n".join(lines) + "\n")
    with monkeypatch.context() as old:
        householder_statistic(old)
        with pytest.raises(DataError, match=r"3\.csv, column 'x2', row 7"):
            fit(load_spec(spec), out=tmp_path / "out")  # batches 0-2 saved
    bad.write_text(good)
    accepted.clear()
    resumed = fit(load_spec(spec), out=tmp_path / "out", resume=True)
    assert resumed.batches[0]["name"] == whole.batches[0]["name"]
    assert [Path(b["name"]).name for b in resumed.batches] == [f"{i}.csv" for i in range(5)]
    assert accepted == [True, True]  # batches 3 and 4, by the new statistic
    np.testing.assert_allclose(resumed.state.mean, whole.state.mean, rtol=1e-12)
    np.testing.assert_allclose(resumed.state.sd, whole.state.sd, rtol=1e-12)
    assert resumed.log_evidence == pytest.approx(whole.log_evidence, rel=1e-12)
    # Another factorisation of batches 0-2: equal to rounding, not to the bit.
    assert not np.array_equal(resumed.state.root, whole.state.root)
