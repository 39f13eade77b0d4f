"""``[data] formula`` for linear_regression and ard, against statsmodels OLS on a real data set.

The reference is statsmodels' ``ols(formula, data)`` (patsy's encoding, not formulaic's) on
Fair's affairs data (``statsmodels.api.datasets.fair``, 6366 rows), with occupation,
religiousness and children as categories. Under the flat prior the posterior of theta is
exact and known in closed form from OLS's quantities:

- known noise sigma: theta ~ N(beta_OLS, sigma^2 (X'X)^-1);
- unknown noise, theta flat and sigma2 ~ InvGamma(a0, b0): theta is Student-t with mean
  beta_OLS and covariance (b0 + RSS / 2) / (a0 + (n - d) / 2 - 1) (X'X)^-1,
"""

import json

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.models.ard import ARD
from bayescheck.models.errors import DataError, SpecError
from bayescheck.models.linear_regression import LinearRegression
from bayescheck.models.spec import SamplingConfig, Spec

from bayescheck import fit, load_spec, predict

sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")

FORMULA = ("affairs ~ rate_marriage + np.log(age) + yrs_married + C(occupation) + C(religious)"
           " + C(children) + educ:yrs_married")


@pytest.fixture(scope="module")
def fair():
    return sm.datasets.fair.load_pandas().data


@pytest.fixture(scope="module")
def ols(fair):
    return smf.ols(FORMULA, fair).fit()


def write_spec(folder, body, data="fair.csv"):
    path = folder / "spec.toml"
    path.write_text(f'model = "linear_regression"\n[data]\npath = "{data}"\n{body}')
    return path


@pytest.fixture
def fair_csv(tmp_path, fair):
    fair.to_csv(tmp_path / "fair.csv", index=False)
    return tmp_path


def by_name(names, values):
    return pd.Series(np.asarray(values), index=list(names))


def assert_matches_ols(theta, ols, cov_scale):
    """Same columns; mean = OLS's coefficients, cov = cov_scale * (X'X)^-1, to 1e-9.

    The covariance is compared as D^-1/2 (C - C_ols) D^-1/2 (D its diagonal): relative to
    the scale of the two coefficients, as rounding errors are, not to an entry near 0.
    """
    assert sorted(theta["features"]) == sorted(ols.params.index)
    names = list(ols.params.index)
    mean = by_name(theta["features"], theta["mean"])[names]
    cov = pd.DataFrame(theta["cov"], index=theta["features"], columns=theta["features"])
    np.testing.assert_allclose(mean, ols.params[names], rtol=1e-9, atol=1e-12)
    expected = cov_scale * ols.normalized_cov_params.to_numpy()
    scale = np.sqrt(np.diag(expected))
    np.testing.assert_allclose((cov.loc[names, names].to_numpy() - expected)
                               / np.outer(scale, scale), 0.0, atol=1e-9)


def test_known_noise_flat_prior_is_ols(fair_csv, ols):
    spec = write_spec(fair_csv, f'formula = "{FORMULA}"\n[prior]\nflat = true\n'
                                f"[likelihood]\nnoise_sd = 2.0\n")
    theta = fit(spec).posterior.parameters["theta"]
    assert theta["features"][0] == "Intercept" and "C(children)[T.5.5]" in theta["features"]
    assert_matches_ols(theta, ols, 4.0)


def test_unknown_noise_flat_prior_is_ols(fair_csv, ols):
    spec = write_spec(fair_csv, f'formula = "{FORMULA}"\n[prior]\nflat = true\n'
                                f"noise_shape = 0.5\nnoise_scale = 0.25\n")
    theta = fit(spec).posterior.parameters["theta"]
    n, d = ols.nobs, len(ols.params)
    scale = (0.25 + ols.ssr / 2) / (0.5 + (n - d) / 2 - 1)
    assert_matches_ols(theta, ols, scale)
    # the limit a0, b0 -> 0 of that scale is OLS's own covariance times (n - d) / (n - d - 2)
    np.testing.assert_allclose(scale * ols.normalized_cov_params,
                               ols.cov_params() * (n - d) / (n - d - 2), rtol=2e-3)


def test_a_design_one_row_apart_fails_the_check(fair_csv, fair, ols):
    """Negative: the tolerance tells apart OLS on 6365 of the 6366 rows."""
    spec = write_spec(fair_csv, f'formula = "{FORMULA}"\n[prior]\nflat = true\n'
                                f"[likelihood]\nnoise_sd = 2.0\n")
    theta = fit(spec).posterior.parameters["theta"]
    with pytest.raises(AssertionError):
        assert_matches_ols(theta, smf.ols(FORMULA, fair.iloc[1:]).fit(), 4.0)
    numeric = FORMULA.replace("C(occupation)", "occupation")
    with pytest.raises(AssertionError):  # another encoding: other columns
        assert_matches_ols(theta, smf.ols(numeric, fair).fit(), 4.0)


def test_stream_keeps_one_encoding(tmp_path, fair, ols):
    """Three files, the last without occupation 1 and children 5.5: the one-file posterior."""
    parts = [fair.iloc[:3000], fair.iloc[3000:6000],
             fair.iloc[6000:].query("occupation != 1 and children != 5.5")]
    rows = pd.concat(parts)
    (tmp_path / "b").mkdir()
    for i, part in enumerate(parts):
        part.to_csv(tmp_path / "b" / f"{i}.csv", index=False)
    assert 1.0 not in set(parts[2]["occupation"]) and len(parts[2]) > 300
    spec = write_spec(tmp_path, f'formula = "{FORMULA}"\n[prior]\nflat = true\n'
                                f"[likelihood]\nnoise_sd = 2.0\n", data="b/*.csv")
    result = fit(spec)
    assert len(result.record.batches) == 3
    assert_matches_ols(result.posterior.parameters["theta"], smf.ols(FORMULA, rows).fit(), 4.0)


def test_predict_from_the_saved_file_alone(fair_csv, fair, ols):
    spec = write_spec(fair_csv, f'formula = "{FORMULA}"\n[prior]\nflat = true\n'
                                f"[likelihood]\nnoise_sd = 2.0\n")
    saved = json.loads(json.dumps(fit(spec).to_json()))
    new = fair.sample(20, random_state=1)
    table = predict(spec, saved, new)
    np.testing.assert_allclose(table["mean"], ols.predict(new), rtol=1e-9)
    # new rows missing a level are encoded as in the fit
    only = new[new["occupation"] == 3.0]
    np.testing.assert_allclose(predict(spec, saved, only)["mean"], ols.predict(only), rtol=1e-9)


def test_a_level_the_fit_did_not_see_is_refused(fair_csv, fair):
    spec = write_spec(fair_csv, f'formula = "{FORMULA}"\n[prior]\nflat = true\n')
    saved = fit(spec).to_json()
    new = fair.head(5).copy()
    new.loc[3, "religious"] = 9.0
    with pytest.raises(DataError, match=r"column 'religious', row 4: level 9\.0 was not seen"):
        predict(spec, saved, new)
    path = fair_csv / "new.csv"
    new.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"new\.csv, column 'religious', row 4: level 9\.0"):
        predict(spec, saved, path)


def test_declaration_coords_are_the_terms(fair_csv):
    pytest.importorskip("pymc")
    spec = load_spec(write_spec(fair_csv, f'formula = "{FORMULA}"\n[prior]\nflat = true\n'))
    model = spec.model.declare(spec.data)
    assert list(model.coords["feature"]) == list(spec.model.features)
    assert "C(religious)[T.4.0]" in model.coords["feature"]


@pytest.mark.parametrize("extra, keys", [
    ('target = "affairs"\n', ["data.target"]),
    ('features = ["age"]\nintercept = true\n', ["data.features", "data.intercept"]),
])
def test_formula_with_columns_is_refused(fair_csv, extra, keys):
    spec = write_spec(fair_csv, f'formula = "{FORMULA}"\n{extra}')
    with pytest.raises(SpecError, match="cannot be given with formula") as info:
        load_spec(spec)
    for key in keys:
        assert key in str(info.value)


@pytest.mark.parametrize("formula, words", [
    ("np.log(affairs) ~ age", "must be one column of the data"),
    ("age + educ", "has no response"),
    ("affairs ~ age +", "formulaic cannot read"),
    ("affairs ~ age + C(age)", "used both as a category and as a number"),
])
def test_formulas_that_cannot_be_fitted(fair_csv, formula, words):
    with pytest.raises(SpecError, match="data.formula") as info:
        load_spec(write_spec(fair_csv, f'formula = "{formula}"\n'))
    assert words in str(info.value)


def test_a_term_that_is_not_finite_names_the_row(tmp_path, fair):
    data = fair.head(50).copy()
    data.loc[7, "age"] = 0.0
    data.to_csv(tmp_path / "fair.csv", index=False)
    with pytest.raises(DataError, match=r"column 'np.log\(age\)', row 8"):
        fit(write_spec(tmp_path, 'formula = "affairs ~ np.log(age)"\n'))


def test_python_from_formula_is_the_spec(fair_csv, fair, ols):
    model = LinearRegression.from_formula(FORMULA, fair, flat=True, noise_sd=2.0)
    spec = Spec(model=model, data=DataSource.from_frame(fair), sampling=SamplingConfig())
    assert_matches_ols(fit(spec).posterior.parameters["theta"], ols, 4.0)


def test_ard_formula_matches_the_patsy_design(fair):
    """ARD on the formula = ARD on statsmodels' own design matrix of the same formula."""
    from bayescheck.inference.families.ard import estimate

    model = ARD.from_formula(FORMULA, fair)
    spec = Spec(model=model, data=DataSource.from_frame(fair), sampling=SamplingConfig())
    w = fit(spec).posterior.parameters["w"]
    assert w["features"] == list(model.features)
    exog = smf.ols(FORMULA, fair).fit().model
    X = pd.DataFrame(exog.exog, columns=exog.exog_names)[list(model.features)].to_numpy()
    reference = estimate(ARD(features=model.features, target="affairs"), X,
                         fair["affairs"].to_numpy())
    np.testing.assert_allclose(w["mean"], reference.mean, rtol=1e-8, atol=1e-12)
