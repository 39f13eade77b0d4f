"""check_model's folder: the report ``check`` draws for a spec, and a sealed posterior.json.

One NUTS run of eight schools (a module fixture, with a calibration) whose last school is
named ``<b>x``; the file model runs through ``bayescheck check model.py``. The posterior
files' tests need no sampling.
"""

import json
import shutil
import textwrap

import numpy as np
import pymc as pm
import pytest
from bayescheck.models.errors import BayescheckError
from bayescheck.reports.cli import main
from bayescheck.reports.posterior_file import read_posterior, sealed, validate_posterior
from bayescheck.reports.writers import write_json

import bayescheck

EIGHT_Y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
EIGHT_S = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])
EVIL = "<b>x"
SCHOOLS = [*"ABCDEFG", EVIL]


def eight_schools():
    with pm.Model(coords={"school": SCHOOLS}) as model:
        mu = pm.Normal("mu", 0, 5)
        theta = pm.Normal("theta", mu, 5.0, dims="school")
        pm.Normal("y", theta, EIGHT_S, observed=EIGHT_Y, dims="school")
    return model


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "run"
    res = bayescheck.check_model(eight_schools(), out=out, random_seed=1, draws=500,
                                 tune=500, simulations=20)
    return res, out


def _html(out):
    return (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.nuts
def test_the_report_shows_the_verdict_the_family_and_the_variables(run):
    res, out = run
    html = _html(out)
    assert res.verdict == "pass", res.comparison.summary()
    assert 'data-verdict="pass"' in html
    assert "Gaussian linear (9 latent, 8 observed)" in html
    assert "y (8 observed values)" in html
    for name in ("mu", "theta[A]", "theta[G]"):
        assert f"<td>{name}</td>" in html, name
    assert f"log evidence {res.exact.log_evidence:.6g}" in html
    for title in ("Marginal posteriors", "Analytic against sampled intervals", "Rank plots",
                  "Traces", "Energy", "Pair plot", "Posterior predictive check",
                  "Rank histograms and ECDF differences", "Timings", "Sampler health"):
        assert f">{title}</h" in html, title
    assert "not drawn" not in html.lower()
    assert 'id="calibration-verdict">pass' in html
    assert "the model&#39;s own prior predictive" in html
    files = {p.name for p in out.iterdir()}
    assert {"report.html", "report.json", "calibration.json"} <= files


@pytest.mark.nuts
def test_a_coord_is_escaped(run):
    _, out = run
    html = _html(out)
    assert "<td>theta[&lt;b&gt;x]</td>" in html
    assert EVIL not in html


@pytest.mark.nuts
def test_the_report_command_redraws_it_from_the_files(run, tmp_path):
    res, out = run
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    (copy / "report.html").unlink()
    assert main(["report", str(copy)]) == 0
    assert _html(copy) == _html(out)


@pytest.mark.nuts
def test_the_posterior_file_is_sealed_and_read_back(run, tmp_path):
    res, out = run
    document = read_posterior(out)
    assert document["family"] == res.exact.family
    assert document["parameters"]["mu"]["mean"] == pytest.approx(
        float(res.exact.variables["mu"].dist().mean()), rel=1e-12)
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    path = copy / "posterior.json"
    edited = json.loads(path.read_text())
    edited["parameters"]["mu"]["mean"] += 1.0
    path.write_text(json.dumps(edited))
    with pytest.raises(BayescheckError, match="key 'digest'.*edited or damaged"):
        read_posterior(copy)


def test_user_variables_are_not_read_as_a_spec_family(tmp_path):
    """A vector ``sigma2`` (a spec family's scalar) and a variance without a variance."""
    rng = np.random.default_rng(3)
    with pm.Model() as grouped:
        sigma2 = pm.InverseGamma("sigma2", 3.0, 2.0, shape=2)
        pm.Normal("y", 0.0, pm.math.sqrt(sigma2)[np.array([0, 0, 1, 1, 1])],
                  observed=rng.normal(size=5))
    write_json(tmp_path / "posterior.json", sealed(bayescheck.exact(grouped).to_json()))
    assert len(read_posterior(tmp_path)["parameters"]["sigma2"]["mean"]) == 2
    with pm.Model() as one:
        s2 = pm.InverseGamma("s2", 1.0, 1.0)
        pm.Normal("y", 0.0, pm.math.sqrt(s2), observed=[0.3])
    write_json(tmp_path / "posterior.json", sealed(bayescheck.exact(one).to_json()))
    document = read_posterior(tmp_path)
    assert document["parameters"]["s2"]["sd"] is None  # InverseGamma(1.5, .): no variance
    assert document["parameters"]["s2"]["mean"] == pytest.approx(1.045 / 0.5)


def test_a_negative_sd_is_refused_in_a_user_model():
    with pm.Model() as coin:
        p = pm.Beta("p", 1, 1)
        pm.Bernoulli("y", p, observed=[1, 0, 1])
    document = bayescheck.exact(coin).to_json()
    document["parameters"]["p"]["sd"] = -0.1
    with pytest.raises(BayescheckError, match=r"parameters\.p\.sd.*negative"):
        validate_posterior(sealed(document), "coin")


@pytest.mark.nuts
def test_check_model_py_writes_the_report_of_the_file_model(tmp_path, capsys):
    path = tmp_path / "coin_model.py"
    path.write_text(textwrap.dedent("""
        import pymc as pm
        with pm.Model() as coin:
            p = pm.Beta("p", 1, 1)
            pm.Bernoulli("y", p, observed=[1, 0, 1, 1])  # <four> flips
    """))
    out = tmp_path / "out"
    assert main(["check", str(path), "--out", str(out), "--seed", "3", "--quiet"]) == 0
    html = _html(out)
    assert "<strong>coin</strong> · model file: " + str(path) in html
    assert "Beta-Bernoulli (p: 1 latent, 4 observed)" in html
    assert "# &lt;four&gt; flips" in html  # the file's text, escaped
    assert "<td>p</td>" in html
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == "coin" and summary["source"] == str(path)
    read_posterior(out)
