"""`bayescheck fit` of a mixture whose maximum-likelihood winner is a near-singular component:
posterior.json records it under "fit" and the printed notes name it; a healthy fit says
nothing of the kind."""

import json
from pathlib import Path

import numpy as np
import pytest
from bayescheck.reports.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gaussian_mixture"


def test_engel_near_singular_component_is_recorded_and_printed(tmp_path, capsys):
    sm = pytest.importorskip("statsmodels.api")
    frame = np.log(sm.datasets.engel.load_pandas().data)
    frame.to_csv(tmp_path / "engel.csv", index=False)
    (tmp_path / "engel.toml").write_text(
        'model = "gaussian_mixture"\nn_components = 3\n[data]\npath = "engel.csv"\n'
        "[fit]\nn_init = 10\n")
    out = tmp_path / "out"
    main(["fit", str(tmp_path / "engel.toml"), "--out", str(out)])
    printed = capsys.readouterr().out
    info = json.loads((out / "posterior.json").read_text())["fit"]
    (flagged,) = info["near_singular_components"]
    assert flagged["rows"] == pytest.approx(10.0, abs=0.1)
    assert flagged["eigenvalues"][0] < 1e-5 and flagged["relative_variance"] < 1e-3
    assert f"component {flagged['component']} is near singular: 10.0 rows" in printed
    assert "4.08e-06, 0.313" in printed


def test_blobs_fit_flags_nothing(tmp_path, capsys):
    main(["fit", str(EXAMPLES / "blobs.toml"), "--out", str(tmp_path)])
    assert "near singular" not in capsys.readouterr().out
    info = json.loads((tmp_path / "posterior.json").read_text())["fit"]
    assert info["near_singular_components"] == []
