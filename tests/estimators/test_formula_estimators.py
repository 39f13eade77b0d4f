"""The estimators' ``formula=``: a DataFrame in, the formula's terms as coefficients."""

import numpy as np
import pandas as pd
import pytest
from bayescheck.models.errors import DataError

pytest.importorskip("sklearn")
sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")

from bayescheck.estimators import ARDRegression, BayesianLinearRegression  # noqa: E402

FORMULA = "affairs ~ rate_marriage + np.log(age) + C(occupation) + C(children) + educ:age"


@pytest.fixture(scope="module")
def fair():
    return sm.datasets.fair.load_pandas().data


def test_flat_prior_coefficients_are_ols(fair):
    ols = smf.ols(FORMULA, fair).fit()
    est = BayesianLinearRegression(formula=FORMULA, prior_precision=0.0, noise_sd=2.0).fit(fair)
    assert list(est.terms_) == [c for c in est.design_.columns if c != "Intercept"]
    coef = pd.Series(est.coef_, index=est.terms_)
    np.testing.assert_allclose(coef[ols.params.index[1:]], ols.params.iloc[1:], rtol=1e-9)
    np.testing.assert_allclose(est.intercept_, ols.params["Intercept"], rtol=1e-9)
    new = fair.sample(10, random_state=0)
    np.testing.assert_allclose(est.predict(new), ols.predict(new), rtol=1e-9)
    # negative: the numeric occupation gives other coefficients
    other = smf.ols(FORMULA.replace("C(occupation)", "occupation"), fair).fit()
    assert not np.allclose(est.intercept_, other.params["Intercept"], rtol=1e-3)


def test_partial_fit_keeps_the_first_encoding(fair):
    whole = BayesianLinearRegression(formula=FORMULA, noise="unknown").fit(fair)
    parts = BayesianLinearRegression(formula=FORMULA, noise="unknown")
    parts.partial_fit(fair.iloc[:4000]).partial_fit(fair.iloc[4000:])
    np.testing.assert_allclose(parts.coef_, whole.coef_, rtol=1e-9)
    later = fair.iloc[:50].copy()
    later.loc[later.index[10], "children"] = 7.0
    with pytest.raises(DataError, match=r"column 'children', row 11: level 7\.0 was not seen"):
        parts.partial_fit(later)


def test_formula_refuses_y_and_arrays(fair):
    est = BayesianLinearRegression(formula=FORMULA)
    with pytest.raises(ValueError, match="names the response"):
        est.fit(fair, fair["affairs"])
    with pytest.raises(TypeError, match="pandas DataFrame"):
        est.fit(fair.to_numpy())


def test_ard_formula_and_spec_round_trip(fair, tmp_path):
    ard = ARDRegression(formula=FORMULA).fit(fair)
    assert len(ard.coef_) == len(ard.terms_)
    mean, sd = ard.predict(fair.head(5), return_std=True)
    assert mean.shape == sd.shape == (5,) and np.all(sd > 0)
    fair.to_csv(tmp_path / "fair.csv", index=False)
    (tmp_path / "ard.toml").write_text(ard.to_spec(tmp_path / "fair.csv"))
    back = ARDRegression.from_spec(tmp_path / "ard.toml")
    assert back.formula == FORMULA
    np.testing.assert_allclose(back.fit(fair).coef_, ard.coef_, rtol=1e-12)
