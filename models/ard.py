"""ARD / sparse Bayesian learning: y = X w + eps, eps ~ N(0, sigma2 I), w_i ~ N(0, 1 / alpha_i).

Two PyMC declarations of the same likelihood (:meth:`ARD.declare`):

conditional (``fit`` given)
    alpha and sigma2 fixed at the type-II maximum-likelihood estimates of the fit;
    ``w_relevant ~ Normal(0, alpha_i^-1/2)`` over the relevant set, the pruned weights exactly
    0 (``w`` is a deterministic over every feature). Its posterior is exactly the Gaussian
    ``Sigma = (X_A'X_A / sigma2 + diag(alpha_A))^-1``, ``mu = Sigma X_A'y / sigma2``.
hierarchical (``fit=None``)
    ``alpha_i ~ Gamma(alpha_shape, alpha_rate)``, ``sigma2 ~ InverseGamma(noise_shape,
    noise_rate)`` (the noise precision ``1 / sigma2 ~ Gamma(noise_shape, noise_rate)``),
    ``w_i ~ Normal(0, alpha_i^-1/2)`` in the centred parameterisation (measured here: 0
    divergences, against hundreds for the non-centred one). Its posterior is compared with
    the type-II ML estimates, not exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.sources import DataSource

from . import validation
from .design import (
    check_formula_model,
    check_intercept_first,
    data_columns,
    design_on,
    joint_design,
    read_design_section,
)
from .errors import BayescheckError
from .formula import FormulaDesign
from .interface import Calibratable, FullDeclaration, Model
from .spec import SamplingConfig, Section, Spec

__all__ = ["SPEC_READERS", "ARD", "ard_spec", "CHECK_MODES", "FIT_METHODS"]

#: ``[fit] method`` values: the hyperparameter updates the engine implements, whose own
#: list is ``inference.engines.sbl.METHODS`` (models do not import engines; a test holds the
#: two equal).
FIT_METHODS = ("fast", "em", "mackay")
#: ``[check] mode`` values.
CHECK_MODES = ("conditional", "hierarchical", "both")


@dataclass(frozen=True, eq=False)
class ARD(Model, Calibratable, FullDeclaration):
    """A sparse Bayesian linear model: its columns, fit settings and hyperpriors.

    Parameters
    ----------
    features : tuple of str
        Weight names, in order (``"intercept"`` first when it is added).
    target : str
        The response column.
    method : {"fast", "em", "mackay"}
        Type-II maximum-likelihood update (see :func:`bayescheck.inference.engines.sbl.fit_sbl`).
    max_iter : int
        Iteration limit of the fit.
    tol : float
        Convergence tolerance of the fit (on log alpha and log sigma2).
    relevance_threshold : float, "ric" or "auto"
        Fast method only: a weight is kept when ``q_i^2 / s_i`` exceeds it (1: exact type-II
        maximum likelihood; ``"ric"``: ``2 log M``). ``"auto"`` (the default): ``"ric"`` when
        the design has at least as many columns as rows (``M >= n``), where exact type-II ML
        interpolates ``y``, and 1 otherwise (see
        ``inference.engines.sbl.resolve_relevance_threshold``).
    alpha_shape, alpha_rate : float
        Gamma(shape, rate) hyperprior of each alpha_i (hierarchical declaration).
    noise_shape, noise_rate : float
        Gamma(shape, rate) prior of the noise precision 1 / sigma2 (hierarchical declaration).
    mode : {"conditional", "hierarchical", "both"}
        Which declaration(s) the check samples.
    intercept : bool
        Whether a column of ones named ``"intercept"`` is added (it gets its own alpha).
    held : tuple, optional
        ``(alpha, sigma2)`` held fixed instead of estimated (``alpha`` one value per feature,
        ``inf`` = pruned): the fit is then the exact conditional posterior and the declaration
        the conditional model. Made by :meth:`calibration_model`.
    formula : models.formula.FormulaDesign, optional
        The design from a formula (:meth:`from_formula`): ``features`` are then its column
        names and ``target`` its response.
    """

    features: tuple[str, ...]
    target: str
    method: str = "fast"
    max_iter: int = 1000
    tol: float = 1e-6
    relevance_threshold: float | str = "auto"
    alpha_shape: float = 1.0
    alpha_rate: float = 1.0
    noise_shape: float = 1.0
    noise_rate: float = 1.0
    mode: str = "conditional"
    intercept: bool = False
    held: tuple[tuple[float, ...], float] | None = None
    formula: FormulaDesign | None = None

    name = "ard"

    def __post_init__(self):
        if self.method not in FIT_METHODS:
            raise ValueError(f"method must be one of {FIT_METHODS}, got {self.method!r}")
        if self.mode not in CHECK_MODES:
            raise ValueError(f"mode must be one of {CHECK_MODES}, got {self.mode!r}")
        for key in ("alpha_shape", "alpha_rate", "noise_shape", "noise_rate", "tol"):
            object.__setattr__(self, key, validation.positive_number(getattr(self, key), key))
        check_intercept_first(tuple(self.features), bool(self.intercept))
        if self.held is not None:
            alpha, sigma2 = self.held
            if len(alpha) != len(self.features) or not all(a > 0 for a in alpha):
                raise ValueError(f"held alpha must be {len(self.features)} positive values "
                                 f"(inf = pruned), got {alpha!r}")
            if not 0 < sigma2 < float("inf"):
                raise ValueError(f"held sigma2 must be positive and finite, got {sigma2!r}")
        check_formula_model(self)

    @classmethod
    def from_formula(cls, formula: str, data, **settings) -> ARD:
        """The model of a formula, its encoding fixed on ``data``.

        Parameters
        ----------
        formula : str
            ``"y ~ x1 + np.log(x2) + C(region) + x1:x3"`` (formulaic's syntax); the weights
            are named after the design's columns (``Intercept`` gets its own alpha).
        data : pandas.DataFrame or bayescheck.data.sources.DataSource
            The rows whose categorical levels (all batches) fix the encoding.
        **settings
            The class's other parameters (``method``, ``mode``, the hyperpriors, ...).

        Returns
        -------
        ARD
        """
        design = design_on(formula, data)
        return cls(features=design.columns, target=design.target, formula=design, **settings)

    @property
    def data_columns(self) -> list[str]:
        """The feature columns read from the data (the intercept is made, not read)."""
        if self.formula is not None:
            return self.formula.variables
        return data_columns(self.features, self.intercept)

    def design(self, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
        """The validated design ``(rows, M)`` and response ``(rows,)`` of one batch."""
        joint = (self.formula.joint(batch) if self.formula is not None else
                 joint_design(batch, target=self.target, features=self.features,
                              intercept=self.intercept))
        return joint[:, :-1], joint[:, -1]

    def read(self, source: DataSource) -> tuple[np.ndarray, np.ndarray]:
        """Every row of ``source`` (SBL needs the whole design in memory: ``n x M``)."""
        parts = [self.design(batch) for batch in source.batches()]
        return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def simulated_frame(self, frame, observed: dict):
        """A copy of ``frame`` whose target holds one simulation's ``y`` (for calibration)."""
        out = frame.copy()
        out[self.target] = observed["y"]
        return out

    def calibration_model(self, fit) -> ARD:
        """A copy with alpha and sigma2 held at ``fit``'s estimates (conditional mode).

        Calibration simulates from the conditional declaration and needs an engine that
        computes the exact posterior at the same hyperparameters, not one that re-estimates
        them from each simulated data set.
        """
        alpha = tuple(float("inf") if a is None else float(a)
                      for a in fit.posterior.parameters["alpha"]["value"])
        if all(a == float("inf") for a in alpha):
            raise BayescheckError("every weight was pruned: the conditional posterior is a "
                                  "point mass at 0 and there is nothing to calibrate")
        return replace(self, held=(alpha, float(fit.posterior.parameters["sigma2"]["value"])),
                       mode="conditional")

    def declare(self, source: DataSource, fit=None):
        """The PyMC model on every row of ``source``.

        Parameters
        ----------
        source : models.DataSource
            The data.
        fit : inference.AnalyticFit, optional
            The type-II ML fit: given, the conditional model (alpha, sigma2 fixed at its
            estimates); None, the hierarchical model, unless this model holds its
            hyperparameters (``held``), which then make the conditional model.
        """
        X, y = self.read(source)
        if self.held is not None:
            return self.conditional_model(X, y, np.asarray(self.held[0]), self.held[1])
        if fit is None:
            return self.hierarchical_model(X, y)
        w = fit.posterior.parameters["w"]
        alpha = np.array(
            [np.inf if a is None else a for a in fit.posterior.parameters["alpha"]["value"]],
            dtype=np.float64,
        )
        if not np.isfinite(alpha).any():
            raise BayescheckError(
                f"{source.label}: every weight was pruned, so the conditional posterior is a "
                f"point mass at 0 and there is nothing to sample; use [check] mode = "
                f"'hierarchical'")
        if list(w["features"]) != list(self.features):
            raise ValueError("the fit's features differ from the model's")
        return self.conditional_model(X, y, alpha, fit.posterior.parameters["sigma2"]["value"])

    def declare_full(self, source: DataSource, fit=None):
        """The hierarchical PyMC model, with the fit's estimates not plugged in.

        It is what ``check`` compares the point estimates with.
        """
        return self.declare(source)

    def conditional_model(self, X: np.ndarray, y: np.ndarray, alpha: np.ndarray,
                          sigma2: float):
        """PyMC model with alpha and sigma2 fixed; ``alpha_i = inf`` prunes weight i.

        Variables: ``w_relevant`` (dims ``relevant``) and the deterministic ``w`` (dims
        ``feature``, exactly 0 where pruned).
        """
        import pymc as pm
        import pytensor.tensor as pt

        alpha = np.asarray(alpha, dtype=np.float64)
        keep = np.flatnonzero(np.isfinite(alpha))
        names = list(self.features)
        coords = {"feature": names, "relevant": [names[i] for i in keep]}
        with pm.Model(coords=coords) as model:
            X_rel = pm.Data("X_relevant", X[:, keep], dims=("obs", "relevant"))
            w_rel = pm.Normal("w_relevant", mu=0.0, sigma=1.0 / np.sqrt(alpha[keep]),
                              dims="relevant")
            pm.Deterministic("w", pt.set_subtensor(pt.zeros(len(names))[keep], w_rel),
                             dims="feature")
            pm.Normal("y", mu=pm.math.dot(X_rel, w_rel), sigma=float(np.sqrt(sigma2)),
                      observed=y, dims="obs")
        return model

    def hierarchical_model(self, X: np.ndarray, y: np.ndarray):
        """PyMC model with Gamma hyperpriors on every alpha_i and on 1 / sigma2 (centred).

        Variables: ``alpha``, ``w`` (dims ``feature``) and ``sigma2``.
        """
        import pymc as pm

        with pm.Model(coords={"feature": list(self.features)}) as model:
            X_data = pm.Data("X", X, dims=("obs", "feature"))
            alpha = pm.Gamma("alpha", alpha=self.alpha_shape, beta=self.alpha_rate,
                             dims="feature")
            w = pm.Normal("w", mu=0.0, sigma=1.0 / pm.math.sqrt(alpha), dims="feature")
            sigma2 = pm.InverseGamma("sigma2", alpha=self.noise_shape, beta=self.noise_rate)
            pm.Normal("y", mu=pm.math.dot(X_data, w), sigma=pm.math.sqrt(sigma2),
                      observed=y, dims="obs")
        return model


def _relevance_threshold(fit: Section, method: str):
    if "relevance_threshold" not in fit:
        return "auto"
    value = fit.raw("relevance_threshold")
    if value in ("ric", "auto"):
        threshold = value
    elif isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            1 <= value < float("inf")):
        raise fit.error("relevance_threshold", f"expected a number >= 1, \"ric\" or \"auto\", "
                                               f"got {value!r}")
    else:
        threshold = float(value)
    if method != "fast" and threshold not in (1.0, "auto"):
        raise fit.error("relevance_threshold", f"applies to method = \"fast\" only (method is "
                                               f"{method!r})")
    return threshold


def ard_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "ard"``.

    Keys: ``[data] path, target, features, intercept`` or ``[data] path, formula``;
    ``[fit] method, max_iter, tol,
    relevance_threshold``; ``[prior] alpha_shape, alpha_rate, noise_shape, noise_rate``;
    ``[check] mode``; ``[sampling]``.
    """
    source, target, features, intercept, formula = read_design_section(top, path)

    fit = top.subsection("fit")
    method = fit.string("method", "fast", choices=FIT_METHODS)
    max_iter = fit.number("max_iter", 1000, integer=True, minimum=1)
    tol = fit.number("tol", 1e-6, positive=True)
    threshold = _relevance_threshold(fit, method)
    fit.raw("relevance_threshold", None)  # consumed above; listed among the valid keys
    fit.finish()

    prior = top.subsection("prior")
    hyper = {key: prior.number(key, 1.0, positive=True)
             for key in ("alpha_shape", "alpha_rate", "noise_shape", "noise_rate")}
    prior.finish()

    check = top.subsection("check")
    mode = check.string("mode", "conditional", choices=CHECK_MODES)
    check.finish()

    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    model = ARD(features=tuple(features), target=target, method=method, max_iter=max_iter,
                tol=float(tol), relevance_threshold=threshold, mode=mode, intercept=intercept,
                formula=formula,
                **{k: float(v) for k, v in hyper.items()})
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"ard": ard_spec}
