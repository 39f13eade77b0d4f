"""ARD spec, fit glue and declarations without NUTS: the example's fit, equivalences with the
Bayesian linear-regression engine, unusual designs, log densities of both PyMC declarations
against scipy, and bad input naming file / key / column / row (exit 2)."""

import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.inference.engines.linear_gaussian import GaussianPosterior, regression_stats
from bayescheck.inference.engines.sbl import ard_posterior
from bayescheck.inference.families import fit
from bayescheck.models import ARD, BayescheckError, load_spec
from bayescheck.models.spec import Spec
from bayescheck.reports.cli import main
from bayescheck.reports.fit_figures import fit_figures
from bayescheck.reports.fit_summary import fit_notes
from scipy import stats

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ard" / "design.toml"


def _write(tmp_path, frame, body, name="s.toml"):
    frame.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / name).write_text('model = "ard"\n[data]\npath = "d.csv"\ntarget = "y"\n' + body)
    return tmp_path / name


def _frame(n=60, m=6, nonzero=(1.5, -2.0), noise=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    w = np.zeros(m)
    w[: len(nonzero)] = nonzero
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(m)])
    frame["y"] = X @ w + noise * rng.normal(size=n)
    return frame


@pytest.fixture(scope="module")
def example_fit():
    return fit(load_spec(EXAMPLE))


def test_example_spec_and_fit(example_fit, tmp_path):
    spec = load_spec(EXAMPLE)
    model = spec.model
    assert (model.method, model.mode, model.relevance_threshold) == ("fast", "conditional",
                                                                     "ric")
    assert model.features == tuple(f"x{j}" for j in range(1, 13))
    result = example_fit
    w = result.posterior.parameters["w"]
    assert w["relevant"] == ["x2", "x6", "x9"]  # the true non-zeros (make_data.py)
    assert len(w["pruned"]) == 9
    assert [m.name for m in result.posterior.marginals] == ["w[x2]", "w[x6]", "w[x9]"]
    assert result.posterior.estimates == []
    alpha = result.posterior.parameters["alpha"]["value"]
    assert all(np.isinf(a) == (f in w["pruned"]) for a, f in zip(alpha, w["features"],
                                                                  strict=True))
    info = result.record.info
    assert info["converged"] and info["relevant_features"] == ["x2", "x6", "x9"]
    assert len(info["log_evidence_per_iteration"]) == info["n_iter"] + 1
    assert result.posterior.log_evidence == info["log_evidence_per_iteration"][-1]
    assert {p["kind"] for p in fit_figures(result)} == {"series", "intervals"}
    # posterior.json through the CLI: strict JSON (pruned alphas are null), relevant features
    assert main(["fit", str(EXAMPLE), "--out", str(tmp_path), "--quiet"]) == 0
    saved = json.loads((tmp_path / "posterior.json").read_text())
    assert saved["fit"]["relevant_features"] == ["x2", "x6", "x9"]
    assert saved["parameters"]["alpha"]["value"][0] is None
    assert saved["parameters"]["w"]["mean"][0] == 0.0


def test_conditional_posterior_equals_linear_regression_engine(example_fit, tmp_path):
    """Given (alpha, sigma2), the ARD posterior of the relevant weights is the Bayesian
    linear regression with prior N(0, diag(1 / alpha)) and noise sd sqrt(sigma2)."""
    params = example_fit.posterior.parameters
    relevant = params["w"]["relevant"]
    alpha = [a for a in params["alpha"]["value"] if np.isfinite(a)]
    sigma2 = params["sigma2"]["value"]
    data = (EXAMPLE.parent / "design.csv").resolve()
    spec = tmp_path / "lr.toml"
    spec.write_text(f'model = "linear_regression"\n[data]\npath = "{data}"\ntarget = "y"\n'
                    f'features = {json.dumps(relevant)}\n[prior]\n'
                    f'cov = {json.dumps([1 / a for a in alpha])}\n'
                    f'[likelihood]\nnoise_sd = {float(np.sqrt(sigma2))!r}\n')
    lr = fit(load_spec(spec))
    keep = [params["w"]["features"].index(f) for f in relevant]
    np.testing.assert_allclose(
        np.array(params["w"]["mean"])[keep], lr.posterior.parameters["theta"]["mean"], rtol=1e-10
    )
    np.testing.assert_allclose(
        params["w"]["cov"], lr.posterior.parameters["theta"]["cov"], rtol=1e-9
    )
    # and the evidence of the pruned model is the regression's on the relevant columns
    assert example_fit.posterior.log_evidence == pytest.approx(lr.posterior.log_evidence, rel=1e-10)


def test_tied_precisions_equal_gaussian_posterior():
    """One alpha for every weight: ARD's posterior is the Bayesian linear regression's with
    prior covariance I / alpha (mean, covariance and log evidence)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 5))
    y = X @ [1.0, 0.0, -0.5, 0.0, 2.0] + 0.4 * rng.normal(size=40)
    alpha, noise_var = 2.5, 0.16
    ard = ard_posterior(X, y, alpha, noise_var)
    blr = GaussianPosterior.from_prior(np.zeros(5), np.eye(5) / alpha, noise_var=noise_var)
    blr = blr.update(regression_stats(X, y))
    np.testing.assert_allclose(ard.mean, blr.mean, rtol=1e-11)
    np.testing.assert_allclose(ard.cov, blr.cov, rtol=1e-11)
    assert ard.log_evidence == pytest.approx(blr.log_evidence, rel=1e-12)


def test_methods_selectable_from_the_spec(tmp_path):
    frame = _frame(seed=1)
    results = {}
    for method in ("fast", "em", "mackay"):
        path = _write(tmp_path, frame, f'[fit]\nmethod = "{method}"\nmax_iter = 20000\n'
                                       f'tol = 1e-8\n', name=f"{method}.toml")
        results[method] = fit(load_spec(path))
        assert results[method].record.info["method"] == method
    means = {k: np.array(r.posterior.parameters["w"]["mean"]) for k, r in results.items()}
    # the strong weights agree to tolerance whatever the update
    np.testing.assert_allclose(means["em"][:2], means["fast"][:2], atol=1e-3)
    np.testing.assert_allclose(means["mackay"][:2], means["fast"][:2], atol=1e-3)


def test_fit_stopped_at_max_iter_warns_on_stderr(tmp_path, capsys):
    """Not converged: said on stderr by the CLI, and in posterior.json; a converged fit is
    silent on stderr."""
    path = _write(tmp_path, _frame(), '[fit]\nmax_iter = 2\n')
    assert main(["fit", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: .*s\.toml: the ard fit stopped at max_iter \(2 iterations\) "
                     r"without converging", err)
    saved = json.loads((tmp_path / "o" / "posterior.json").read_text())
    assert saved["fit"]["converged"] is False and saved["fit"]["max_iter"] == 2
    assert any("NOT converged (max_iter reached)" in n for n in saved["notes"])
    path = _write(tmp_path, _frame(), "", name="t.toml")
    assert main(["fit", str(path), "--out", str(tmp_path / "p"), "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_hierarchical_mode_gives_point_estimates(tmp_path):
    path = _write(tmp_path, _frame(), '[check]\nmode = "both"\n[fit]\n'
                                      'relevance_threshold = "ric"\n')
    result = fit(load_spec(path))
    assert [m.name for m in result.posterior.marginals] == ["w[x0]", "w[x1]"]
    names = [e.name for e in result.posterior.estimates]
    assert names == [f"w[x{j}]" for j in range(6)] + ["sigma2"]
    assert [e.nonzero for e in result.posterior.estimates] == [True, True] + [False] * 4 + [None]
    assert result.posterior.estimates[-1].value == result.posterior.parameters["sigma2"]["value"]


def test_zero_and_constant_columns_and_more_features_than_rows(tmp_path):
    frame = _frame(n=40, m=4)
    frame.insert(0, "zero", 0.0)
    frame.insert(1, "const", 3.0)
    path = _write(tmp_path, frame, '[fit]\nmethod = "mackay"\nmax_iter = 5000\n', name="a.toml")
    path.write_text(path.read_text().replace('target = "y"\n', 'target = "y"\nintercept = true\n'))
    spec = load_spec(path)
    result = fit(spec)
    w = result.posterior.parameters["w"]
    assert w["features"][:3] == ["intercept", "zero", "const"]
    assert "zero" in w["pruned"] and {"x0", "x1"} <= set(w["relevant"])
    assert result.record.findings["zero_columns"] == ["zero"]
    assert result.record.findings["constant_columns"] == ["const"]
    notes = fit_notes(result, spec)
    assert any("all-zero column(s) zero" in n for n in notes)
    assert any("constant column(s) const duplicate the intercept" in n for n in notes)
    # more features than rows: a clear note, at most n weights kept, finite posterior
    wide = _frame(n=12, m=30, nonzero=(3.0,), noise=0.1, seed=2)
    for method in ("fast", "em", "mackay"):
        path = _write(tmp_path, wide, f'[fit]\nmethod = "{method}"\nmax_iter = 3000\n',
                      name=f"wide_{method}.toml")
        spec = load_spec(path)
        result = fit(spec)
        assert any("more features (30) than rows (12)" in n for n in fit_notes(result, spec))
        assert 1 <= len(result.posterior.parameters["w"]["relevant"]) <= 12
        assert "x0" in result.posterior.parameters["w"]["relevant"]
        assert np.all(np.isfinite(result.posterior.parameters["w"]["mean"]))
    # exact type-II ML interpolates a wide design: said plainly, no crash
    noisy = _frame(n=12, m=30, nonzero=(1.0,), noise=1.0, seed=3)
    path = _write(tmp_path, noisy, "[fit]\nrelevance_threshold = 1\n", name="noisy.toml")
    spec = load_spec(path)
    result = fit(spec)
    if (
        len(result.posterior.parameters["w"]["relevant"]) >= 12
        or result.posterior.parameters["sigma2"]["value"] < 1e-6
    ):
        assert result.record.findings["noise_collapsed"]
        assert any("collapsed" in n and "relevance_threshold" in n
                   for n in fit_notes(result, spec))


def test_auto_threshold_is_ric_exactly_when_columns_reach_rows(tmp_path):
    """The default ("auto"): "ric" on a design with M >= n, exact type-II ML below; the
    certificate is that of the criterion used, and the notes say which it was."""
    cases = [(30, 30, "ric"), (30, 40, "ric"), (31, 30, 1.0)]
    for n, m, used in cases:
        frame = _frame(n=n, m=m, nonzero=(3.0, -2.0), noise=0.3, seed=4)
        spec = load_spec(_write(tmp_path, frame, "", name=f"auto_{n}_{m}.toml"))
        assert spec.model.relevance_threshold == "auto"
        result = fit(spec)
        assert result.record.info["relevance_threshold"] == "auto"
        assert result.record.info["relevance_threshold_used"] == used
        assert result.record.certificates[0]["penalised"] == (used == "ric")
        said = [n_ for n_ in fit_notes(result, spec) if "relevance_threshold \"auto\"" in n_]
        assert len(said) == 1 and (("chose \"ric\"" in said[0]) == (used == "ric"))
        explicit = fit(load_spec(_write(tmp_path, frame, f"[fit]\nrelevance_threshold = "
                                        f"{json.dumps(used)}\n", name=f"x_{n}_{m}.toml")))
        assert (
            explicit.posterior.parameters["w"]["relevant"]
            == result.posterior.parameters["w"]["relevant"]
        )
        assert explicit.posterior.log_evidence == pytest.approx(
            result.posterior.log_evidence, rel=1e-12
        )
    # em / mackay know only the exact criterion: "auto" is 1 for them even when M >= n
    frame = _frame(n=12, m=30, nonzero=(3.0,), noise=0.1, seed=2)
    spec = load_spec(_write(tmp_path, frame, '[fit]\nmethod = "mackay"\nmax_iter = 3000\n',
                            name="auto_mackay.toml"))
    assert fit(spec).record.info["relevance_threshold_used"] == 1.0


def test_every_weight_pruned_cannot_be_checked_conditionally():
    model = ARD(features=("a", "b"), target="y")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [0.0, 1.0], "y": [0.1, -0.1]})
    parameters = {"w": {"features": ["a", "b"]}, "alpha": {"value": [None, float("inf")]},
                  "sigma2": {"value": 1.0}}
    pruned = SimpleNamespace(posterior=SimpleNamespace(parameters=parameters))
    with pytest.raises(BayescheckError, match="every weight was pruned.*mode = 'hierarchical'"):
        model.declare(DataSource.from_frame(frame), fit=pruned)


@pytest.mark.slow
def test_declarations_log_density_against_scipy():
    """Both PyMC declarations' log densities at a point equal the sum of scipy log densities
    written here from the model's definition (rate and shape parameterisations included)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 3))
    y = rng.normal(size=7)
    model = ARD(features=("a", "b", "c"), target="y", alpha_shape=2.0, alpha_rate=0.5,
                noise_shape=3.0, noise_rate=1.5)
    alpha = np.array([2.0, np.inf, 0.5])
    cond = model.conditional_model(X, y, alpha, 0.3)
    assert [v.name for v in cond.free_RVs] == ["w_relevant"]
    w_rel = np.array([0.4, -1.1])
    got = cond.compile_logp()({"w_relevant": w_rel})
    want = (stats.norm(0, 1 / np.sqrt(alpha[[0, 2]])).logpdf(w_rel).sum()
            + stats.norm(X[:, [0, 2]] @ w_rel, np.sqrt(0.3)).logpdf(y).sum())
    assert got == pytest.approx(want, rel=1e-10)

    hier = model.hierarchical_model(X, y)
    assert {v.name for v in hier.free_RVs} == {"alpha", "w", "sigma2"}
    a, w, s2 = np.array([1.5, 0.2, 4.0]), np.array([0.3, -0.7, 0.05]), 0.8
    point = {"alpha_log__": np.log(a), "w": w, "sigma2_log__": np.log(s2)}
    got = hier.compile_logp(jacobian=False)(point)
    want = (stats.gamma(2.0, scale=1 / 0.5).logpdf(a).sum()
            + stats.invgamma(3.0, scale=1.5).logpdf(s2)
            + stats.norm(0, 1 / np.sqrt(a)).logpdf(w).sum()
            + stats.norm(X @ w, np.sqrt(s2)).logpdf(y).sum())
    # pytensor's gammaln differs from scipy's by ~1e-8 (a constant of Gamma, InverseGamma)
    assert got == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize(("body", "message"), [
    ('[fit]\nmethod = "lasso"\n', r"s\.toml, key 'fit\.method': expected one of 'fast', 'em', "
                                  r"'mackay', got 'lasso'"),
    ('[fit]\nmethod = "em"\nrelevance_threshold = 2.0\n',
     r"key 'fit\.relevance_threshold': applies to method = \"fast\" only"),
    ('[fit]\nrelevance_threshold = 0.5\n', r"key 'fit\.relevance_threshold': expected a number "
                                           r">= 1, \"ric\" or \"auto\", got 0\.5"),
    ('[fit]\nmax_iter = 0\n', r"key 'fit\.max_iter': expected an integer >= 1"),
    ('[fit]\nsteps = 3\n', r"key 'fit\.steps': unknown key; valid keys here are: max_iter, "
                           r"method, relevance_threshold, tol"),
    ('[prior]\nalpha_rate = -1\n', r"key 'prior\.alpha_rate': expected a positive number"),
    ('[prior]\nmean = 0\n', r"key 'prior\.mean': unknown key; valid keys here are: alpha_rate, "
                            r"alpha_shape, noise_rate, noise_shape"),
    ('[check]\nmode = "full"\n', r"key 'check\.mode': expected one of 'conditional', "
                                 r"'hierarchical', 'both'"),
    ('[data.x]\n', r"key 'data\.x': unknown key"),
])
def test_bad_spec_exits_2_naming_file_and_key(tmp_path, capsys, body, message):
    path = _write(tmp_path, _frame(n=10, m=2), body)
    assert main(["fit", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert re.search(message, err), err


def test_bad_data_exits_2_naming_file_column_and_row(tmp_path, capsys):
    frame = _frame(n=10, m=2).astype(object)
    frame.loc[6, "x1"] = "seven"
    path = _write(tmp_path, frame, "")
    assert main(["fit", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "d.csv, column 'x1', row 7: not a number: 'seven'" in err
    # a feature that is not in the file
    bad = tmp_path / "f.toml"
    bad.write_text('model = "ard"\n[data]\npath = "d.csv"\ntarget = "y"\nfeatures = ["x9"]\n')
    assert main(["fit", str(bad), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "key 'data.features': column 'x9' is not in" in err and "d.csv" in err
    # a target that is 0 everywhere: nothing to estimate the noise from
    zero = _frame(n=10, m=2)
    zero["y"] = 0.0
    path = _write(tmp_path, zero, "", name="z.toml")
    assert main(["fit", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "column 'y': the target is 0 in every row" in capsys.readouterr().err


def test_spec_built_in_python_runs():
    frame = _frame()
    model = ARD(features=tuple(f"x{j}" for j in range(6)), target="y", method="em",
                max_iter=5000)
    result = fit(Spec(model=model, data=DataSource.from_frame(frame)))
    assert {"x0", "x1"} <= set(result.posterior.parameters["w"]["relevant"])
    with pytest.raises(ValueError, match="mode must be one of"):
        replace(model, mode="everything")


def test_fit_info_lists_the_starts_and_the_weights_ric_would_not_keep(tmp_path):
    """M < n: the fit compares two starts and says so; with the exact criterion it names the
    kept weights whose q^2/s is at most 2 log M (those "ric" would leave out)."""
    frame = _frame(n=80, m=40, nonzero=(3.0, -2.0, 1.0), noise=1.0, seed=5)
    result = fit(load_spec(_write(tmp_path, frame, "")))
    info = result.record.info
    assert [s["start"] for s in info["starts"]] == ["empty", "full_em"]
    chosen = max(info["starts"], key=lambda s: s["objective"])
    assert result.posterior.log_evidence == pytest.approx(chosen["log_evidence"], rel=1e-12)
    weak = info["kept_below_ric"]
    assert weak["threshold"] == pytest.approx(2 * np.log(40))
    kept = result.posterior.parameters["w"]["relevant"]
    ratios = {k["feature"]: k["q2_over_s"] for k in result.record.certificates[0]["kept"]}
    assert set(ratios) == set(kept)
    assert weak["features"] == [f for f in kept if ratios[f] <= weak["threshold"]]
    assert weak["features"]  # noise columns pass q^2/s > 1 about a third of the time
    assert {"x0", "x1"} <= set(kept) - set(weak["features"])
    ric = fit(load_spec(_write(tmp_path, frame, '[fit]\nrelevance_threshold = "ric"\n',
                               name="ric.toml")))
    assert "kept_below_ric" not in ric.record.info
    assert len(ric.posterior.parameters["w"]["relevant"]) < len(kept)
