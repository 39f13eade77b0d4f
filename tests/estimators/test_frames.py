"""Data frames in, numpy or frames out: the categorical classifiers on text and pandas
categorical columns equal the same classifiers on OrdinalEncoder's codes, keep their categories
(``categories_``), treat an unseen category as a code beyond those seen, and refuse what they
cannot read naming the column."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.naive_bayes import CategoricalNB  # noqa: E402
from sklearn.preprocessing import OrdinalEncoder  # noqa: E402

from bayescheck.estimators import (  # noqa: E402
    BayesianNetworkClassifier,
    CategoricalNaiveBayes,
    SemiNaiveBayesClassifier,
)

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ["outlook", "temperature", "humidity", "wind"]


def _tennis():
    frame = pd.read_csv(ROOT / "examples" / "semi_naive_bayes" / "play_tennis.csv")
    return frame[FEATURES], frame["play_tennis"].to_numpy()


def _estimators():
    return [CategoricalNaiveBayes(), SemiNaiveBayesClassifier(kind="tan"),
            SemiNaiveBayesClassifier(kind="aode", m_prime=1),
            BayesianNetworkClassifier(edges=[("play", f) for f in FEATURES]
                                      + [("outlook", "humidity")], target="play")]


def _codes(encoder, X):
    return pd.DataFrame(encoder.transform(X).astype(int), columns=X.columns)


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_text_columns_are_ordinal_encoders_codes(est):
    X, y = _tennis()
    encoder = OrdinalEncoder().fit(X)
    text = est.__class__(**est.get_params()).fit(X, y)
    codes = est.__class__(**est.get_params()).fit(_codes(encoder, X), y)
    for mine, theirs in zip(text.categories_, encoder.categories_, strict=True):
        assert list(mine) == list(theirs)
    np.testing.assert_array_equal(text.predict_proba(X), codes.predict_proba(_codes(encoder, X)))
    assert text.log_evidence_ == codes.log_evidence_
    # the same object array of str, without a frame
    np.testing.assert_array_equal(text.predict_proba(X.to_numpy(dtype=object)),
                                  codes.predict_proba(_codes(encoder, X)))
    # a wrong mapping of the new rows gives other probabilities: the comparison can fail
    shifted = (_codes(encoder, X) + 1) % text.n_categories_
    assert not np.allclose(text.predict_proba(X), codes.predict_proba(shifted))


def test_pandas_categoricals_keep_their_declared_categories_unused_included():
    """Issue 31: pandas categoricals failed with "'<' not supported"; their declared categories
    (order and unused ones) are the feature's categories, as CategoricalNB(min_categories)."""
    X, y = _tennis()
    declared = {"outlook": ["Sunny", "Overcast", "Rain", "Snow"],
                "temperature": ["Hot", "Mild", "Cool"], "humidity": ["Normal", "High"],
                "wind": ["Weak", "Strong", "Gale"]}
    Xc = X.astype({f: pd.CategoricalDtype(c) for f, c in declared.items()})
    ours = CategoricalNaiveBayes(class_prior="frequency").fit(Xc, y)
    assert [list(c) for c in ours.categories_] == list(declared.values())
    np.testing.assert_array_equal(ours.n_categories_, [4, 3, 2, 3])
    codes = np.column_stack([Xc[f].cat.codes for f in FEATURES])
    theirs = CategoricalNB(min_categories=[4, 3, 2, 3]).fit(codes, y)
    np.testing.assert_allclose(ours.predict_proba(Xc), theirs.predict_proba(codes), atol=1e-12)
    # without the unused categories the smoothing differs: the comparison can fail
    assert not np.allclose(CategoricalNB().fit(codes, y).predict_proba(codes),
                           ours.predict_proba(Xc), atol=1e-6)
    for est in (SemiNaiveBayesClassifier(), BayesianNetworkClassifier()):
        est.fit(Xc, y)
        np.testing.assert_array_equal(est.n_categories_, [4, 3, 2, 3])
        assert [list(c) for c in est.categories_] == list(declared.values())


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_an_unseen_category_is_a_code_beyond_those_seen_and_is_named(est):
    X, y = _tennis()
    encoder = OrdinalEncoder().fit(X)
    text = est.__class__(**est.get_params()).fit(X, y)
    codes = est.__class__(**est.get_params()).fit(_codes(encoder, X), y)
    new = X.head(3).copy()
    new.loc[1, "outlook"] = "Snow"
    new_codes = _codes(encoder, X.head(3))
    new_codes.loc[1, "outlook"] = 9  # beyond every code seen
    with pytest.warns(UserWarning, match="column 'outlook': category 'Snow' was never"):
        got = text.predict_proba(new)
    np.testing.assert_array_equal(got, codes.predict_proba(new_codes))
    assert not np.allclose(got[1], text.predict_proba(X.head(3))[1])  # it changed the row


def test_network_sums_out_an_unseen_category_as_a_missing_cell():
    X, y = _tennis()
    est = BayesianNetworkClassifier().fit(X, y)
    new = X.head(2).astype(object)
    new.loc[0, "wind"] = "Gale"
    blank = new.copy()
    blank.loc[0, "wind"] = None
    with pytest.warns(UserWarning, match="summed out"):
        got = est.predict_proba(new)
    np.testing.assert_array_equal(got, est.predict_proba(blank))
    # a missing text cell in training: EM, as for codes with NaN
    holes = X.astype(object)
    holes.loc[3, "outlook"] = np.nan
    encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan).fit(X)
    coded = pd.DataFrame(encoder.transform(holes), columns=FEATURES)
    a = BayesianNetworkClassifier().fit(holes, y)
    b = BayesianNetworkClassifier().fit(coded, y)
    assert a.em_ is not None and a.log_evidence_ is None
    np.testing.assert_array_equal(a.predict_proba(holes), b.predict_proba(coded))


@pytest.mark.parametrize("est", [CategoricalNaiveBayes(), SemiNaiveBayesClassifier(kind="tan")],
                         ids=lambda e: type(e).__name__)
def test_partial_fit_appends_late_categories_and_equals_one_fit(est):
    X, y = _tennis()
    order = np.argsort((X["outlook"] == "Overcast").to_numpy(), kind="stable")  # Overcast last
    X, y = X.iloc[order].reset_index(drop=True), y[order]
    one = est.__class__(**est.get_params()).fit(X, y)
    streamed = est.__class__(**est.get_params())
    for idx in np.array_split(np.arange(len(y)), 4):
        streamed.partial_fit(X.iloc[idx], y[idx], classes=["No", "Yes"])
    assert list(streamed.categories_[0]) == ["Rain", "Sunny", "Overcast"]  # appended
    assert list(one.categories_[0]) == ["Overcast", "Rain", "Sunny"]
    np.testing.assert_allclose(streamed.predict_proba(X), one.predict_proba(X), rtol=1e-12)
    assert streamed.log_evidence_ == pytest.approx(one.log_evidence_, rel=1e-12)
    twice = streamed.partial_fit(X.head(3), y[:3])
    assert not np.allclose(twice.predict_proba(X), one.predict_proba(X), rtol=1e-9)


@pytest.mark.parametrize(("change", "match"), [
    (lambda X: X.assign(outlook=X["outlook"].mask(X.index == 2)),
     "column 'outlook', row 3: a missing value"),
    (lambda X: X.assign(wind=X["wind"].astype(object).where(X.index != 1, 5)),
     "column 'wind' mixes text and numbers"),
    (lambda X: X.assign(wind=np.linspace(0, 1, len(X))),
     "column 'wind' holds 0.07.*OrdinalEncoder"),
])
def test_unreadable_columns_are_refused_naming_the_column(change, match):
    X, y = _tennis()
    for est in (CategoricalNaiveBayes(), SemiNaiveBayesClassifier()):
        with pytest.raises(ValueError, match=match):
            est.fit(change(X), y)


def test_codes_and_text_are_not_mixed_between_fit_and_predict():
    X, y = _tennis()
    est = CategoricalNaiveBayes().fit(_codes(OrdinalEncoder().fit(X), X), y)
    with pytest.raises(ValueError, match="column 'outlook' was fitted on category codes"):
        est.predict(X)
    with pytest.raises(ValueError, match="OrdinalEncoder"):  # issue 31: say how to encode
        CategoricalNaiveBayes().fit(np.array([[0.5, 1.0], [1.0, 0.0]]), [0, 1])


def test_frames_in_give_numpy_out_and_predict_frame_keeps_the_index():
    X, y = _tennis()
    X = X.set_index(pd.Index([f"day{i}" for i in range(len(X))], name="day"))
    for est in _estimators():
        est.fit(X, y)
        proba = est.predict_proba(X)
        assert isinstance(proba, np.ndarray) and isinstance(est.predict(X), np.ndarray)
        table = est.predict_frame(X.iloc[::-1])
        assert table.index.equals(X.index[::-1])
        np.testing.assert_array_equal(table[["p_No", "p_Yes"]].to_numpy(), proba[::-1])
        assert (table["most_probable"].to_numpy() == est.predict(X)[::-1]).all()
    # why numpy: scikit-learn's binary scorers slice predict_proba(X)[:, k]
    scores = cross_val_score(CategoricalNaiveBayes(), X, y, cv=2, scoring="roc_auc")
    assert np.all(np.isfinite(scores))


def test_no_warning_for_rows_whose_categories_were_seen():
    X, y = _tennis()
    est = SemiNaiveBayesClassifier().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict(X)
