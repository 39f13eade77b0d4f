"""scikit-learn estimators over bayescheck's engines: ``from bayescheck.estimators import ...``.

Each is one spec's model (``from_spec(path)`` / ``to_spec(...)`` convert), fitted by the same
engine as ``bayescheck fit``:

- :class:`BayesianLinearRegression` (``linear_regression``): exact posterior, exact
  ``partial_fit``, ``predict(X, return_std=True)``, ``sample_y``;
- :class:`ARDRegression` (``ard``): type-II ML relevance determination;
- :class:`GaussianMixture` (``gaussian_mixture``): EM (ML or MAP), ``predict_proba``;
- :class:`GaussianNaiveBayes`, :class:`CategoricalNaiveBayes` (``naive_bayes``): posterior
  predictive class probabilities, exact ``partial_fit``;
- :class:`SemiNaiveBayesClassifier` (``semi_naive_bayes``): SPODE, AODE, TAN on category codes;
- :class:`BayesianNetworkClassifier` (``bayesian_network``): one node predicted from the
  others by exact inference (missing cells summed out).

scikit-learn is needed here only (``pip install bayescheck[sklearn]``); ``import bayescheck``
and the command line do not import it.
"""

from .mixture import GaussianMixture
from .naive_bayes import CategoricalNaiveBayes, GaussianNaiveBayes
from .network import BayesianNetworkClassifier
from .regression import ARDRegression, BayesianLinearRegression
from .semi_naive import SemiNaiveBayesClassifier

__all__ = ["ARDRegression", "BayesianLinearRegression", "BayesianNetworkClassifier",
           "CategoricalNaiveBayes", "GaussianMixture", "GaussianNaiveBayes",
           "SemiNaiveBayesClassifier"]
