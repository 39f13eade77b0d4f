"""scikit-learn's own estimator checks on every estimator of ``bayescheck.estimators``."""

import pytest

pytest.importorskip("sklearn")

# ~360 checks, each well under a second: together tens of seconds
pytestmark = pytest.mark.slow

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from bayescheck.estimators import (  # noqa: E402
    ARDRegression,
    BayesianLinearRegression,
    CategoricalNaiveBayes,
    GaussianMixture,
    GaussianNaiveBayes,
)

ESTIMATORS = [
    BayesianLinearRegression(),
    BayesianLinearRegression(noise="unknown"),
    ARDRegression(),
    GaussianMixture(n_init=1),
    GaussianNaiveBayes(),
    GaussianNaiveBayes(gaussian="ml", class_prior="frequency"),
    CategoricalNaiveBayes(),
]


def expected_failed_checks(estimator):
    """Checks each estimator is known to fail, each with its reason (keep this minimal)."""
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
