"""Bayesian linear regression: y | X, theta ~ N(X theta, sigma^2 I).

Known noise (``[likelihood] noise_sd``): theta ~ N(mean, cov), or the flat prior.
Unknown noise: the Normal-Inverse-Gamma prior sigma2 ~ InvGamma(noise_shape, noise_scale),
theta | sigma2 ~ N(mean, sigma2 * cov), or theta flat and independent of sigma2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.numbers import MAX_MAGNITUDE
from bayescheck.data.sources import DataSource

from . import validation
from .design import (
    check_formula_model,
    check_intercept_first,
    data_columns,
    design_on,
    joint_design,
    prior_arrays,
    read_design_section,
)
from .formula import FormulaDesign
from .interface import Calibratable, Model
from .spec import SamplingConfig, Section, Spec
from .validation import InvalidArgument

__all__ = ["SPEC_READERS", "MAX_ROWWISE", "LinearRegression", "linear_regression_spec", "qr_root"]

#: Above this many rows the PyMC declaration takes the likelihood through the sufficient
#: statistics (:meth:`LinearRegression.pymc_model_sufficient`) instead of row by row: the
#: same posterior, but each NUTS gradient costs O(d^2) instead of O(n d).
MAX_ROWWISE = 20_000


def qr_root(Z: np.ndarray) -> np.ndarray:
    """An upper-triangular S with S'S = Z'Z (the R of a QR of Z), padded to ``(k, k)``.

    The signs of its rows are whatever the QR gives: the likelihood below uses only
    ``|S [theta; -1]|^2``, which does not depend on them.
    """
    k = Z.shape[1]
    r = np.linalg.qr(Z, mode="r") if len(Z) else np.zeros((0, k))
    return np.vstack([r, np.zeros((max(k - r.shape[0], 0), k))])[:k]


@dataclass(frozen=True, eq=False)
class LinearRegression(Model, Calibratable):
    """A Bayesian linear regression: its columns and hyperparameters.

    Parameters
    ----------
    features : tuple of str
        Coefficient names, in order (``"intercept"`` first when it is added).
    target : str
        The response column.
    prior_mean : numpy.ndarray or None
        Prior mean of theta, shape ``(d,)``; None for the flat prior.
    prior_cov : numpy.ndarray or None
        Prior covariance of theta (known noise) or of theta / sigma2 (unknown noise),
        shape ``(d, d)``, positive definite; None for the flat prior.
    noise_sd : float or None
        The known noise standard deviation; None when the noise is unknown.
    noise_shape, noise_scale : float
        InvGamma(shape, scale) prior of sigma2 when the noise is unknown.
    intercept : bool
        Whether a column of ones named ``"intercept"`` is added to the design.
    formula : models.formula.FormulaDesign, optional
        The design from a formula (:meth:`from_formula`): ``features`` are then its column
        names and ``target`` its response.
    """

    features: tuple[str, ...]
    target: str
    prior_mean: np.ndarray | None
    prior_cov: np.ndarray | None
    noise_sd: float | None = 1.0
    noise_shape: float = 1.0
    noise_scale: float = 1.0
    intercept: bool = False
    formula: FormulaDesign | None = None

    name = "linear_regression"

    def __post_init__(self):
        if isinstance(self.features, str) or not all(isinstance(f, str) for f in self.features):
            raise InvalidArgument("features", f"expected a sequence of column names, got "
                                              f"{self.features!r}")
        object.__setattr__(self, "features", tuple(self.features))
        if len(set(self.features)) != len(self.features) or not self.features:
            raise InvalidArgument("features", f"expected at least one name, each once, got "
                                              f"{list(self.features)!r}")
        if not isinstance(self.target, str):
            raise InvalidArgument("target", f"expected a column name, got {self.target!r}")
        d = len(self.features)
        if (self.prior_mean is None) != (self.prior_cov is None):
            raise InvalidArgument("prior_cov" if self.prior_cov is None else "prior_mean",
                                  "prior_mean and prior_cov are both given or both None "
                                  "(the flat prior)")
        if self.prior_mean is not None:
            object.__setattr__(self, "prior_mean",
                               validation.vector(self.prior_mean, d, "prior_mean",
                                                 max_magnitude=MAX_MAGNITUDE))
            object.__setattr__(self, "prior_cov",
                               validation.covariance(self.prior_cov, d, "prior_cov"))
        if self.noise_sd is not None:
            sd = validation.positive_number(self.noise_sd, "noise_sd")
            if not np.finfo(np.float64).tiny <= sd * sd < np.inf:
                raise InvalidArgument("noise_sd", f"its square (the noise variance) is not a "
                                                  f"positive normal float64 number, got "
                                                  f"{sd!r}; rescale the target")
            object.__setattr__(self, "noise_sd", sd)
        for name in ("noise_shape", "noise_scale"):
            object.__setattr__(self, name,
                               validation.positive_number(getattr(self, name), name))
        if not isinstance(self.intercept, (bool, np.bool_)):
            raise InvalidArgument("intercept", f"expected True or False, got "
                                               f"{self.intercept!r}")
        check_intercept_first(self.features, bool(self.intercept))
        check_formula_model(self)

    @classmethod
    def from_formula(cls, formula: str, data, *, prior_mean=0.0, prior_cov=1.0,
                     flat: bool = False, noise_sd: float | None = 1.0,
                     noise_shape: float = 1.0, noise_scale: float = 1.0) -> LinearRegression:
        """The model of a formula, its encoding fixed on ``data``.

        Parameters
        ----------
        formula : str
            ``"y ~ x1 + np.log(x2) + C(region) + x1:x3"`` (formulaic's syntax); the
            coefficients are named after the design's columns (``Intercept``,
            ``C(region)[T.north]``, ...).
        data : pandas.DataFrame or bayescheck.data.sources.DataSource
            The rows whose categorical levels (all batches) fix the encoding.
        prior_mean : float or array_like
            Prior mean of theta: a number for every coefficient, or one per column.
        prior_cov : float or array_like
            Prior covariance of theta: a number (times the identity) or a matrix.
        flat : bool
            The flat prior instead (``prior_mean`` and ``prior_cov`` unused).
        noise_sd, noise_shape, noise_scale : float
            As in the class (``noise_sd=None``: unknown noise).

        Returns
        -------
        LinearRegression
        """
        design = design_on(formula, data)
        mean, cov = (None, None) if flat else prior_arrays(prior_mean, prior_cov,
                                                           len(design.columns))
        return cls(features=design.columns, target=design.target, prior_mean=mean,
                   prior_cov=cov, noise_sd=noise_sd, noise_shape=noise_shape,
                   noise_scale=noise_scale, formula=design)

    @property
    def flat(self) -> bool:
        """True for the flat (improper, zero-precision) prior on theta."""
        return self.prior_mean is None

    @property
    def known_noise(self) -> bool:
        """True when sigma is fixed at ``noise_sd``."""
        return self.noise_sd is not None

    @property
    def data_columns(self) -> list[str]:
        """The feature columns read from the data (the intercept is made, not read)."""
        if self.formula is not None:
            return self.formula.variables
        return data_columns(self.features, self.intercept)

    def joint_design(self, batch: Batch) -> np.ndarray:
        """One batch as ``[X | y]`` (see :func:`bayescheck.models.design.joint_design`)."""
        if self.formula is not None:
            return self.formula.joint(batch)
        return joint_design(batch, target=self.target, features=self.features,
                            intercept=self.intercept)

    def design(self, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
        """The design matrix ``(rows, d)`` and the response ``(rows,)`` of one batch."""
        joint = self.joint_design(batch)
        return joint[:, :-1], joint[:, -1]

    def calibration_model(self, fit) -> LinearRegression:
        """The model calibrated: this one (the fit holds nothing fixed)."""
        return self

    def simulated_frame(self, frame, observed: dict):
        """A copy of ``frame`` whose target holds one simulation's ``y`` (for calibration)."""
        out = frame.copy()
        out[self.target] = observed["y"]
        return out

    def declaration_root(self, joint: np.ndarray) -> np.ndarray:
        """One batch's share of the sufficient declaration: :func:`qr_root` of its ``[X | y]``.

        numpy's QR, not the engine's statistic, so that the cross-check stays independent of
        the arithmetic it checks. ``joint`` is not modified.
        """
        return qr_root(joint)

    def declare(self, source: DataSource, fit=None):
        """The PyMC model on every row of ``source``.

        Up to :data:`MAX_ROWWISE` rows the likelihood is row by row (:meth:`pymc_model`);
        beyond, through the sufficient statistics (:meth:`pymc_model_sufficient`), computed
        one batch at a time (a QR per batch, :meth:`declaration_root`, the roots merged by
        the QR of their stack). When ``fit.record.declaration`` holds ``"rows"`` and
        ``"batch_roots"`` (the fit gathered the batch roots on its own pass over the files,
        as ``check`` asks it to) and there are more than :data:`MAX_ROWWISE` rows, the files
        are not read again: the same roots, merged the same way.
        """
        gathered = (fit.record.declaration if fit is not None else None) or {}
        if gathered.get("rows", 0) > MAX_ROWWISE and "batch_roots" in gathered:
            return self.pymc_model_sufficient(qr_root(np.vstack(gathered["batch_roots"])),
                                              gathered["rows"])
        joints, roots, n = [], [], 0
        for batch in source.batches():
            joint = self.joint_design(batch)
            n += len(joint)
            roots.append(self.declaration_root(joint))
            joints = joints + [joint] if n <= MAX_ROWWISE else []
        if n <= MAX_ROWWISE:
            joint = np.vstack(joints)
            return self.pymc_model(joint[:, :-1], joint[:, -1])
        return self.pymc_model_sufficient(qr_root(np.vstack(roots)), n)

    def _prior(self):
        """theta (and sigma2) in the current PyMC model; returns (theta, sigma)."""
        import pymc as pm

        if self.known_noise:
            theta = (pm.Flat("theta", dims="feature") if self.flat else
                     pm.MvNormal("theta", mu=self.prior_mean, cov=self.prior_cov,
                                 dims="feature"))
            return theta, self.noise_sd
        sigma2 = pm.InverseGamma("sigma2", alpha=self.noise_shape, beta=self.noise_scale)
        sigma = pm.math.sqrt(sigma2)
        if self.flat:
            return pm.Flat("theta", dims="feature"), sigma
        chol = np.linalg.cholesky(self.prior_cov)
        return pm.MvNormal("theta", mu=self.prior_mean, chol=sigma * chol,
                           dims="feature"), sigma

    def pymc_model(self, X: np.ndarray, y: np.ndarray):
        """The PyMC declaration of this model on data ``(X, y)``.

        Parameters ``theta`` (dims ``feature``) and, for unknown noise, ``sigma2``.
        """
        import pymc as pm

        coords = {"feature": list(self.features)}
        with pm.Model(coords=coords) as model:
            X_data = pm.Data("X", X, dims=("obs", "feature"))
            theta, sigma = self._prior()
            pm.Normal("y", mu=pm.math.dot(X_data, theta), sigma=sigma, observed=y, dims="obs")
        return model

    def pymc_model_sufficient(self, root: np.ndarray, n: int):
        """The same model declared through the sufficient statistics of ``n`` rows.

        ``root`` is S = [[R, z], [0, rho]] with S'S = [X y]'[X y] (a QR of the rows, any
        signs): X = Q1 R, z = Q1'y and rho^2 is the residual sum of squares of least
        squares. Since |y - X theta|^2 = |R theta - z|^2 + rho^2, the likelihood of the rows
        is, as a function of (theta, sigma), the density of the statistics themselves:

            z ~ N(R theta, sigma^2 I_d)          (observed ``z``, dims ``feature``)
            rho^2 ~ Gamma((n - d) / 2, rate 1 / (2 sigma^2))   (observed ``rss``)

        their sampling distributions when X has full rank. The two log densities differ from
        the row-wise one by a constant, so the posterior is the same; with known noise the
        ``rss`` term is constant and left out. Each gradient costs O(d^2), not O(n d).

        Parameters
        ----------
        root : numpy.ndarray
            Shape ``(d + 1, d + 1)``, upper triangular.
        n : int
            Rows behind it (more than d).
        """
        import pymc as pm

        d = len(self.features)
        R, z, rss = root[:d, :d], root[:d, d], float(root[d, d] ** 2)
        coords = {"feature": list(self.features)}
        with pm.Model(coords=coords) as model:
            theta, sigma = self._prior()
            pm.Normal("z", mu=pm.math.dot(R, theta), sigma=sigma, observed=z, dims="feature")
            if not self.known_noise and rss > 0:
                pm.Gamma("rss", alpha=(n - d) / 2.0, beta=0.5 / sigma ** 2, observed=rss)
            elif not self.known_noise:  # an exact fit: the Gamma has no density at 0
                pm.Potential("rss", -(n - d) * pm.math.log(sigma))
        return model


#: Constructor argument -> spec key, for errors raised by the constructor's own checks.
_SPEC_KEYS = {"features": "data.features", "target": "data.target", "prior_mean": "prior.mean",
              "prior_cov": "prior.cov", "noise_sd": "likelihood.noise_sd",
              "noise_shape": "prior.noise_shape", "noise_scale": "prior.noise_scale",
              "intercept": "data.intercept"}


def _prior_arrays(prior: Section, d: int, features) -> tuple[np.ndarray, np.ndarray]:
    mean = prior.array("mean", np.zeros(d))
    if mean.ndim == 0:
        mean = np.full(d, float(mean))
    elif mean.shape != (d,):
        raise prior.error("mean", f"expected a number or {d} numbers (one per feature: "
                                  f"{', '.join(features)}), got {mean.size}")
    cov = prior.covariance("cov", d, np.eye(d))
    return mean, cov


def linear_regression_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "linear_regression"``.

    Keys: ``[data] path, target, features, intercept`` or ``[data] path, formula``;
    ``[prior] mean, cov, flat,
    noise_shape, noise_scale``; ``[likelihood] noise_sd``; ``[sampling]``.
    """
    source, target, features, intercept, formula = read_design_section(top, path)
    d = len(features)

    likelihood = top.subsection("likelihood")
    noise_sd = likelihood.number("noise_sd", None, positive=True)
    likelihood.finish()

    prior = top.subsection("prior")
    flat = prior.boolean("flat", False)
    if flat:
        for key in ("mean", "cov"):
            if key in prior:
                raise prior.error(key, "cannot be given with flat = true")
        mean = cov = None
    else:
        mean, cov = _prior_arrays(prior, d, features)
    if noise_sd is None:
        shape = prior.number("noise_shape", 1.0, positive=True)
        scale = prior.number("noise_scale", 1.0, positive=True)
    else:
        for key in ("noise_shape", "noise_scale"):
            if key in prior:
                raise prior.error(key, "only applies to unknown noise; remove it or remove "
                                       "[likelihood] noise_sd")
        shape = scale = 1.0
    prior.finish()

    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    with validation.spec_keys(path, _SPEC_KEYS):
        model = LinearRegression(features=tuple(features), target=target, prior_mean=mean,
                                 prior_cov=cov, noise_sd=noise_sd, noise_shape=shape,
                                 noise_scale=scale, intercept=intercept, formula=formula)
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"linear_regression": linear_regression_spec}
