"""The fit's lines of text (reports.fit_summary) and its own figures (reports.fit_figures):
worded and chosen in reports from the numbers the families return, with the same lines and
figure data as when the families built them."""

from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.families import fit
from bayescheck.inference.result import AnalyticFit, FitRecord, Posterior
from bayescheck.models import load_spec
from bayescheck.models.registry import MODELS
from bayescheck.reports import fit_plots
from bayescheck.reports.fit_figures import FIGURES, MAX_DRAWN_WEIGHTS, fit_figures
from bayescheck.reports.fit_summary import NOTES, fit_notes, posterior_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _fit(relative: str):
    spec = load_spec(EXAMPLES / relative)
    return fit(spec), spec


def test_tables_are_keyed_by_model_names_and_draw_known_kinds():
    assert set(NOTES) <= set(MODELS)
    assert set(FIGURES) <= set(MODELS)
    result, _ = _fit("ard/design.toml")
    assert {f["kind"] for f in fit_figures(result)} <= set(fit_plots.FIT_PLOTS)


def test_bayes_rule_and_mixture_lines_as_printed_before_the_move():
    result, spec = _fit("bayes_rule/disease.toml")
    assert fit_notes(result, spec) == ["P(cancer | positive test) = 0.208511",
                                       "P(no_cancer | positive test) = 0.791489",
                                       "P(positive test) = 0.0376"]
    result, spec = _fit("gaussian_mixture/worked_step.toml")
    assert fit_notes(result, spec) == [
        "MAP by EM: 1 iteration(s), stopped at max_iter; log-likelihood -10.285467",
        "component 0: weight 0.5000  mean (1.61454)  sd (2)",
        "component 1: weight 0.5000  mean (8.38546)  sd (2)"]


def test_naive_bayes_says_when_queries_are_not_cross_checked():
    result, spec = _fit("naive_bayes/play_tennis.toml")
    notes = fit_notes(result, spec)
    assert notes == ["query sunny_cool_high_strong: P(No|x) = 0.7353, P(Yes|x) = 0.2647; "
                     "scores No 0.01913, Yes 0.006887; decide No (expected risk: No 0.2647, "
                     "Yes 0.7353)"]
    result, spec = _fit("naive_bayes/play_tennis_ml.toml")
    notes = fit_notes(result, spec)
    assert notes[0].startswith("the predictions (query probabilities, decisions, predict) use "
                               "these plug-in values, not the marginals above")
    assert notes[-1].startswith("the query probabilities are not cross-checked")


def test_posterior_document_keeps_notes_before_fit_and_none_when_empty():
    result, spec = _fit("ard/design.toml")
    document = posterior_document(result, spec)
    assert list(document)[-2:] == ["notes", "fit"]
    assert document["notes"][:2] == ["fast: 8 iteration(s), converged",
                                     "relevant: x2, x6, x9 (3 of 12)"]
    assert "notes" not in result.to_json()
    result, spec = _fit("beta_bernoulli/coin.toml")
    assert "notes" not in posterior_document(result, spec)
    assert (
        fit_notes(AnalyticFit(Posterior(model="synthetic", parameters={}, marginals=[])), spec)
        == []
    )


def _ard_fit(n_features: int, relevant: list[int]) -> AnalyticFit:
    features = [f"x{j}" for j in range(n_features)]
    mean = np.zeros(n_features)
    mean[relevant] = np.arange(1, len(relevant) + 1)
    kept = [features[i] for i in relevant]
    return AnalyticFit(
        Posterior(
            model="ard",
            parameters={
                "w": {
                    "features": features,
                    "mean": mean.tolist(),
                    "sd": [0.5 if i in relevant else 0.0 for i in range(n_features)],
                    "relevant": kept,
                    "pruned": [f for f in features if f not in kept],
                },
                "sigma2": {"value": 0.25, "estimated": True},
            },
            marginals=[],
        ),
        FitRecord(
            n_rows=200,
            info={
                "method": "fast",
                "n_iter": 3,
                "converged": True,
                "log_evidence_per_iteration": [-10.0, -9.0, -8.5, -8.4],
            },
        ),
    )


def test_ard_weights_figure_draws_every_weight_up_to_the_limit_then_the_relevant_ones():
    small = fit_figures(_ard_fit(5, [3, 1]))[0]
    assert small["names"] == ["x0", "x1", "x2", "x3", "x4"]
    assert small["zero"] == [True, False, True, False, True]
    # 90 % interval: mean +- 1.6449 sd
    assert small["upper"][3] - small["mean"][3] == pytest.approx(1.6448536 * 0.5, rel=1e-6)
    assert "only the relevant" not in small["caption"]

    wide = fit_figures(_ard_fit(MAX_DRAWN_WEIGHTS + 10, [65, 5, 2]))[0]
    assert wide["names"] == ["x65", "x5", "x2"]  # the relevant ones, in the fit's order
    assert wide["mean"] == [1.0, 2.0, 3.0] and wide["zero"] == [False] * 3
    assert wide["caption"].endswith("70 weights: only the relevant ones are drawn.")

    many = fit_figures(_ard_fit(MAX_DRAWN_WEIGHTS + 40, list(range(MAX_DRAWN_WEIGHTS + 5))))[0]
    assert len(many["names"]) == MAX_DRAWN_WEIGHTS
    assert many["caption"].endswith(f"(the first {MAX_DRAWN_WEIGHTS}).")


def test_mixture_figures_from_the_fit_with_and_without_its_data():
    result, _ = _fit("gaussian_mixture/worked_step.toml")  # known sd 2: no covariances kept
    series, mixture = fit_figures(result)
    assert series["values"] == result.record.info["history"]
    assert series["caption"].startswith("Log-likelihood plus log prior")
    np.testing.assert_array_equal(mixture["covariances"], result.posterior.state.covariances)
    np.testing.assert_array_equal(mixture["points"], result.record.data_matrix)
    assert mixture["caption"].startswith("The 4 rows (at most 5000 drawn)")
    assert mixture["caption"].endswith("density and their sum.")

    result, _ = _fit("gaussian_mixture/blobs.toml")
    mixture = fit_figures(result)[1]
    np.testing.assert_array_equal(mixture["covariances"], result.posterior.state.covariances)
    np.testing.assert_array_equal(mixture["means"], result.posterior.state.means)
    assert mixture["caption"].endswith("separate the components best (named on the axes).")

    result.record.data_matrix = None
    assert [f["kind"] for f in fit_figures(result)] == ["series"]
