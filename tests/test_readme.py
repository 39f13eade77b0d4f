"""The README's Python examples run as written, and the ``bayescheck`` facade stays light."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def python_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def _run(blocks, namespace):
    for block in blocks:
        exec(block.replace('"examples/', f'"{ROOT}/examples/'), namespace)  # noqa: S102


def test_readme_opens_with_the_two_commands():
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:8])
    assert "make demo" in head and "make test" in head


def test_readme_python_blocks_without_sampling_run(tmp_path, monkeypatch):
    blocks = [b for b in python_blocks() if "check(" not in b]
    assert len(blocks) == 6
    monkeypatch.chdir(tmp_path)
    namespace = {}
    _run(blocks[:1], namespace)
    # The README's prediction is the Normal predictive of the fit it prints.
    post = namespace["result"].posterior.parameters["theta"]
    X = np.column_stack([np.ones(2), namespace["new"].to_numpy()])
    cov = np.array(post["cov"])
    sd = np.sqrt(1.0 + np.einsum("ij,jk,ik->i", X, cov, X))
    table = namespace["table"]
    tol = 100 * np.linalg.cond(cov) * np.finfo(float).eps
    np.testing.assert_allclose(table["mean"], X @ np.array(post["mean"]), rtol=tol, atol=tol)
    np.testing.assert_allclose(table["sd"], sd, rtol=tol)
    _run(blocks[1:2], namespace)
    assert namespace["result"].posterior.parameters["theta"]["mean"][1] == pytest.approx(
        2.0, abs=0.05)
    # Eight schools with a fixed tau: the exact posterior is the Gaussian one written here.
    _run([b for b in blocks if "pm.Model" in b], namespace)
    y, s2 = namespace["y"], namespace["sigma"] ** 2
    prec = np.zeros((9, 9))
    prec[0, 0] = 1 / 25
    prec[1:, 1:] += np.diag(1 / s2 + 1 / 25)
    prec[0, 0] += 8 / 25
    prec[0, 1:] = prec[1:, 0] = -1 / 25
    mean = np.linalg.solve(prec, np.concatenate([[0.0], y / s2]))
    summary = namespace["ex"].summary()
    np.testing.assert_allclose(summary["mean"].to_numpy(), mean, rtol=1e-10, atol=1e-12)
    # The estimators: streamed equals one fit; the naive Bayes row is the spec's query "small".
    from bayescheck import fit
    from bayescheck.estimators import BayesianLinearRegression

    _run([b for b in blocks if "load_diabetes" in b], namespace)
    X, y = namespace["X"], namespace["y"]
    one = BayesianLinearRegression(noise="unknown").fit(X, y)
    np.testing.assert_allclose(namespace["blr"].coef_, one.coef_, rtol=1e-12)
    cells = fit(ROOT / "examples" / "naive_bayes" / "cells.toml")
    query = cells.posterior.parameters["query"][0]
    assert query["values"] == {"radius": 11.5, "texture": 17.0}
    np.testing.assert_allclose(namespace["proba"][0], [query["probabilities"][c] for c in
                                                       namespace["nb"].classes_], rtol=1e-12)
    assert namespace["search"].best_params_
    # A formula: the same coefficients as the design written out by hand.
    _run([b for b in blocks if "formula=" in b], namespace)
    cells = namespace["cells"]
    X = np.column_stack([np.log(cells["radius"]), cells["diagnosis"] == "malignant"])
    by_hand = BayesianLinearRegression(noise="unknown", prior_precision=0.01).fit(
        X.astype(float), cells["texture"])
    np.testing.assert_allclose(namespace["est"].coef_, by_hand.coef_, rtol=1e-10)
    # Text columns: a categorical column keeps its declared categories, unused ones too.
    _run([b for b in blocks if "load_iris" in b], namespace)
    assert list(namespace["clf"].categories_[0]) == ["Sunny", "Overcast", "Rain", "Snow"]


@pytest.mark.nuts
def test_readme_python_blocks_run(tmp_path, monkeypatch):
    """The block that samples; the others are run (and their numbers checked) by
    ``test_readme_python_blocks_without_sampling_run``."""
    sampling = [b for b in python_blocks() if "check(" in b]
    assert len(sampling) == 1
    monkeypatch.chdir(tmp_path)
    namespace = {}
    _run(sampling, namespace)
    assert namespace["outcome"].verdict == "pass"
    assert (tmp_path / "bayescheck-output" / "stream" / "report.html").exists()


def test_import_bayescheck_is_light():
    code = ("import sys, bayescheck; heavy = [m for m in ('numpy', 'pandas', 'scipy', 'pymc', "
            "'models', 'inference', 'reports') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "[]"


def test_facade_names_resolve_and_unknown_ones_do_not():
    import bayescheck

    for name in bayescheck.__all__:
        assert getattr(bayescheck, name) is not None, name
    assert set(bayescheck.__all__) <= set(dir(bayescheck))
    with pytest.raises(AttributeError, match="no attribute 'fitt'"):
        bayescheck.fitt  # noqa: B018


def test_facade_predict_takes_a_fit_folder_and_gives_the_cli_table(tmp_path):
    from bayescheck.reports.cli import main

    from bayescheck import fit, predict

    spec = ROOT / "examples" / "gaussian_mixture" / "blobs.toml"
    assert main(["fit", str(spec), "--out", str(tmp_path / "fit"), "--quiet"]) == 0
    new = pd.DataFrame({"x1": [0.0, 6.0], "x2": [0.0, 1.0]})
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(spec), "--model-from", str(tmp_path / "fit"), "--data",
                 str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    cli = pd.read_csv(tmp_path / "p.csv")
    from_folder = predict(spec, tmp_path / "fit", new)
    pd.testing.assert_frame_equal(from_folder.assign(component=from_folder.component.astype(int)),
                                  cli)
    # In memory, the same EM fit (fixed seed) gives the same table.
    in_memory = predict(str(spec), fit(spec), tmp_path / "new.csv")
    pd.testing.assert_frame_equal(in_memory, from_folder, rtol=1e-12)


def test_facade_predict_of_a_model_without_predictions_is_refused():
    from bayescheck import BayescheckError, predict

    with pytest.raises(BayescheckError, match="predict needs one of the models"):
        predict(ROOT / "examples" / "bayes_rule" / "disease.toml", {}, None)
