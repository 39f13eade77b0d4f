"""Gaussian mixture: x_i ~ sum_k pi_k N(mu_k, Sigma_k), the assignments z_i marginalised.

``model = "gaussian_mixture"``. The analytic side is EM (maximum likelihood, or MAP-EM when
``[prior]`` gives priors) in :mod:`bayescheck.inference.engines.mixture_em`; this module reads
the spec, validates the data and declares the same model in PyMC, with the same priors as
MAP-EM, so that the EM-MAP estimate is the mode of the declared posterior.

The parameterisation of that mode
---------------------------------
MAP-EM maximises ``log p(X | theta) + log p(theta)`` with ``theta`` = (the weights on the
simplex, the means, the covariance matrices for ``full`` / ``tied``, the *variances* for
``diag`` / ``spherical``): the density in these coordinates, which is PyMC's
``model.logp(jacobian=False)`` of the declaration below. A density's mode depends on the
coordinates (the mode of sigma^2 is not the square of the mode of sigma), so the cross-check
compares the EM estimate with the draws in exactly these coordinates: ``weights``, ``means``,
``covariances`` (full / tied) or ``variances`` (diag / spherical).

The declaration
---------------
* ``weights ~ Dirichlet(concentration)`` (absent with ``equal_weights``: held at 1/K).
* ``diag``: ``variances[k, d] ~ InverseGamma(ig_shape, ig_scale[d])``;
  ``spherical``: ``variances[k] ~ InverseGamma(ig_shape, ig_scale)``.
* ``full`` / ``tied``: declared in whitened, standardised coordinates anchored at the EM
  estimate (:func:`whitening`). With ``s`` and ``L L'`` the mean and covariance of the
  estimated mixture as a whole (the data's own at a maximum-likelihood estimate), the data
  enter as ``y = L^-1 (x - s)``, where they have mean 0 and covariance I. Each precision
  ``Lambda_k = Sigma_k^-1`` in ``y`` is sampled through its Cholesky factor ``U_k`` (log-diagonal
  and free lower triangle), with a potential holding the inverse-Wishart prior of ``Sigma_k``
  carried into ``y`` (``InvWishart(nu0, A Psi0 A')``, ``A = L^-1``) written as the Wishart
  density of ``Lambda_k`` plus the log Jacobian of ``(log diag U, offdiag U) -> Lambda``,
  ``D log 2 + sum_i (D - i + 2) log U_ii`` (Muirhead 1982, thm 2.1.9, times the exp of the
  diagonal). The means are non-centred: ``mu_k = a_k + U_k^-T z_k / sqrt(n_k + kappa)`` in
  ``y``, with ``a_k`` the EM mean and ``n_k`` the EM count of component k, so that given its
  covariance each ``z_k`` is about standard normal a posteriori; the Jacobian ``|U_k|^-1``
  cancels the normaliser ``|U_k|`` of the normal prior ``N(mean, Sigma_k / kappa)``.
  ``means`` and ``covariances`` are deterministics, back in the data's coordinates
  (``x = L y + s``). These coordinates change nothing in the posterior (an affine change,
  its Jacobian accounted for); they make NUTS's diagonal mass matrix fit it:
  ``benchmarks/bench_mixture_geometry.py`` measures them against the plain Cholesky factor
  of the precision with centred means, an LKJ factorisation, ordered means and a start away
  from the estimate (``benchmarks/REAL_DATA.md``).
* otherwise ``means[k] | variances ~ N(mean, variances_k / kappa)`` (``known_sd``:
  ``N(mean, sd^2 I / kappa)``).
* The likelihood ``sum_i logsumexp_k (log pi_k + log N(x_i | mu_k, Sigma_k))`` is a potential:
  the assignments are summed out, nothing discrete is sampled.

Label switching: the draws are relabelled inside the model, as deterministics: per draw, the
permutation of the components (among all K!, K <= 6) whose means are closest (sum of squared
distances) to a reference: the EM means of the fit passed to :meth:`GaussianMixture.declare`,
which the EM glue has itself aligned with :func:`relabel_draws` to the deterministic k-means
centres of the data (:func:`bayescheck.inference.engines.mixture_em.kmeans`). Both sides then
name the components the same way. In one dimension that permutation is the ordering by mean
(the EM components are sorted by mean there), so the relabelled posterior is the posterior
restricted to ``mu_1 < ... < mu_K``, and the draws are sorted directly. The means themselves
are not ordered: an ordered transform's boundary (two means equal) gave NUTS divergent
transitions on the worked example. PyMC's default starting point is the same k-means
clustering, computed by the glue and handed over in the fit (models do not import the
engines); ``check`` starts each chain at the EM estimate instead
(:meth:`GaussianMixture.initial_values`).

A proper posterior needs proper priors: ``kappa > 0`` and, unless ``known_sd`` is given, a
covariance prior (``iw_*`` or ``ig_*``). A mixture with a flat prior on a mean or a
covariance has an improper posterior (a component can wander off or collapse onto a point),
so ``check`` refuses such a spec with a message naming the keys; ``fit`` (maximum likelihood)
does not need them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.numbers import MAX_MAGNITUDE, numeric_columns
from bayescheck.data.sources import DataSource

from . import validation
from .errors import DataError, SpecError
from .interface import Model, StartsAtEstimate
from .resources import require_memory, square_matrices
from .spec import SamplingConfig, Section, Spec

__all__ = [
    "SPEC_READERS",
    "COVARIANCE_KINDS",
    "GaussianMixture",
    "Whitening",
    "gaussian_mixture_spec",
    "precision_factor",
    "relabel_draws",
    "whitening",
]

#: Covariance structures (as in scikit-learn): those the engine implements, whose own list is
#: ``inference.engines.mixture_em.COVARIANCE_KINDS`` (models do not import engines; a test
#: holds the two equal).
COVARIANCE_KINDS = ("full", "diag", "spherical", "tied")

#: Each chain starts at the EM estimate moved by a normal jitter of this many approximate
#: posterior sds per coordinate (see :meth:`GaussianMixture.initial_values`).
START_JITTER_SD = 0.5

#: Relabelling tries every ordering of the components: K! of them, at most this many (K <= 6).
MAX_PERMUTATIONS = 720


@dataclass(frozen=True, eq=False)
class GaussianMixture(Model, StartsAtEstimate):
    """A Gaussian mixture: its columns, priors and EM settings.

    Parameters
    ----------
    features : tuple of str
        The data columns, in order (D of them).
    n_components : int
        K.
    covariance : str
        One of :data:`COVARIANCE_KINDS` (ignored when ``known_sd`` is given).
    concentration : float
        Dirichlet concentration of the weights (>= 1; 1 is flat), the same for every
        component (an exchangeable prior, so that relabelling does not change it).
    prior_mean : numpy.ndarray
        ``m0``, shape (D,).
    kappa : float
        ``means | Sigma ~ N(m0, Sigma / kappa)``; 0 is a flat prior on the means.
    iw_dof, iw_scale : float, numpy.ndarray or None
        Inverse-Wishart prior of each covariance (``full`` / ``tied``); ``iw_scale`` (D, D).
    ig_shape, ig_scale : float, numpy.ndarray or None
        Inverse-gamma prior of each variance (``diag``: ``ig_scale`` shape (D,);
        ``spherical``: a scalar).
    n_init, max_iter, tol, seed : EM settings (see
    :func:`bayescheck.inference.engines.mixture_em.fit_em`). init_means : numpy.ndarray or None
        One deterministic start, shape (K, D).
    known_sd : float or None
        The simplified model: every component has covariance ``known_sd**2 I``.
    equal_weights : bool
        Hold the weights at 1/K.
    """

    features: tuple[str, ...]
    n_components: int
    covariance: str = "full"
    concentration: float = 1.0
    prior_mean: np.ndarray | None = None
    kappa: float = 0.0
    iw_dof: float | None = None
    iw_scale: np.ndarray | None = None
    ig_shape: float | None = None
    ig_scale: np.ndarray | float | None = None
    n_init: int = 5
    max_iter: int = 500
    tol: float = 1e-8
    seed: int = 0
    init_means: np.ndarray | None = None
    known_sd: float | None = None
    equal_weights: bool = False

    name = "gaussian_mixture"

    def __post_init__(self):
        d = len(self.features)
        if self.covariance not in COVARIANCE_KINDS:
            raise ValueError(f"covariance must be one of {', '.join(COVARIANCE_KINDS)}; "
                             f"got {self.covariance!r}")
        for key, low in (("n_components", 1), ("n_init", 1), ("max_iter", 0), ("seed", 0)):
            value = getattr(self, key)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
                    or value < low:
                raise validation.InvalidArgument(key, f"expected an integer >= {low}, got "
                                                      f"{value!r}")
        if isinstance(self.tol, (bool, np.bool_)) or not isinstance(
                self.tol, (int, float, np.integer, np.floating)) or not 0 <= self.tol < math.inf:
            raise validation.InvalidArgument("tol", f"expected a finite number >= 0, got "
                                                    f"{self.tol!r}")
        set_ = partial(object.__setattr__, self)
        set_("concentration", validation.prior_weight(self.concentration, "concentration",
                                                      minimum=1.0))
        set_("kappa", validation.prior_weight(self.kappa, "kappa"))
        set_("prior_mean", np.zeros(d) if self.prior_mean is None else validation.vector(
            self.prior_mean, d, "prior_mean", max_magnitude=MAX_MAGNITUDE))
        big = float(np.max(np.abs(self.prior_mean), initial=0.0))
        if self.kappa * big * big > MAX_MAGNITUDE**2:
            raise validation.InvalidArgument(
                "kappa", f"{self.kappa:.6g} with a prior mean of magnitude {big:.6g}: "
                         f"kappa * mean^2 exceeds {MAX_MAGNITUDE**2:.0e} and overflows the "
                         f"prior's density in float64; rescale the features or lower kappa")
        if self.known_sd is not None:
            set_("known_sd", validation.positive_number(self.known_sd, "known_sd"))
        self._check_cov_prior(d, set_)

    def _check_cov_prior(self, d: int, set_) -> None:
        """Validate the inverse-Wishart / inverse-gamma pair given, if any."""
        for pair in (("iw_dof", "iw_scale"), ("ig_shape", "ig_scale")):
            given = [k for k in pair if getattr(self, k) is not None]
            if len(given) == 1:
                raise validation.InvalidArgument(
                    (set(pair) - set(given)).pop(), f"is required with {given[0]}")
        if self.iw_dof is not None:
            set_("iw_dof", validation.prior_weight(self.iw_dof, "iw_dof", minimum=d - 1,
                                                   strict=True))
            set_("iw_scale", validation.covariance(self.iw_scale, d, "iw_scale"))
        if self.ig_shape is not None:
            set_("ig_shape", validation.prior_weight(self.ig_shape, "ig_shape", strict=True))
            spherical = self.kind == "spherical"
            scale = validation.vector(self.ig_scale, 1 if spherical else d, "ig_scale",
                                      max_magnitude=MAX_MAGNITUDE)
            if np.any(scale <= 0):
                raise validation.InvalidArgument("ig_scale", f"expected positive numbers, got "
                                                             f"{scale.tolist()}")
            set_("ig_scale", float(scale[0]) if spherical else scale)

    # ----------------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """D, the number of features."""
        return len(self.features)

    @property
    def kind(self) -> str:
        """The covariance structure fitted: ``"known"`` when ``known_sd`` is given."""
        return "known" if self.known_sd is not None else self.covariance

    @property
    def has_cov_prior(self) -> bool:
        """Whether a covariance prior (inverse-Wishart or inverse-gamma) is given."""
        return self.iw_dof is not None or self.ig_shape is not None

    @property
    def is_map(self) -> bool:
        """True when some prior differs from flat (EM then maximises the posterior)."""
        return (self.concentration != 1.0 or self.kappa > 0 or self.has_cov_prior)

    @property
    def cov_var(self) -> str | None:
        """The name of the compared covariance variable.

        ``covariances`` (full / tied), ``variances`` (diag / spherical), None (known sd).
        """
        return {"full": "covariances", "tied": "covariances", "diag": "variances",
                "spherical": "variances", "known": None}[self.kind]

    def em_prior(self):
        """The ``inference.engines.mixture_em.MixturePrior`` arguments (None for ML)."""
        if not self.is_map:
            return None
        return {"concentration": self.concentration, "mean": self.prior_mean,
                "kappa": self.kappa, "iw_dof": self.iw_dof, "iw_scale": self.iw_scale,
                "ig_shape": self.ig_shape, "ig_scale": self.ig_scale}

    # ----------------------------------------------------------------------------------------
    def data_matrix(self, source: DataSource) -> np.ndarray:
        """Every row of ``source`` as an ``(n, D)`` float64 matrix, validated.

        Raises
        ------
        DataError
            A missing column, a value that is not a finite number (naming file, column and
            row), fewer rows than components, or a constant column (whose variance would be
            0 in every component; only allowed with ``known_sd``).
        """
        X = np.vstack([self.batch_matrix(batch) for batch in source.batches()])
        self.check_rows(X.shape[0], np.ptp(X, axis=0), X[0], where=source.label)
        return X

    def batch_matrix(self, batch: Batch) -> np.ndarray:
        """One batch's rows as an ``(n, D)`` float64 matrix, every value checked."""
        return numeric_columns(batch, list(self.features), max_magnitude=MAX_MAGNITUDE)

    def check_rows(self, n: int, ptp: np.ndarray, first: np.ndarray, *, where: str) -> None:
        """Refuse fewer rows than components, or a constant column (unless ``known_sd``).

        Parameters
        ----------
        n : int
            Number of rows.
        ptp : numpy.ndarray
            Range (max - min) of each column over all rows.
        first : numpy.ndarray
            The first row (names the constant value).
        where : str
            The data, for the message.
        """
        if self.n_components > n:
            raise DataError(f"n_components = {self.n_components} is more than the {n} row(s) "
                            f"of data: every component needs at least one row", path=where)
        if self.known_sd is None and n > 1:
            constant = np.flatnonzero(ptp == 0)
            if constant.size:
                col = self.features[int(constant[0])]
                raise DataError(f"constant column (every row is {first[constant[0]]:g}): its "
                                f"variance would be 0 in every component; drop it from "
                                f"[data] features", path=where, column=col)

    def require_proper(self, path=None) -> None:
        """Raise a :class:`SpecError` when the declared posterior would be improper."""
        if not self.kappa > 0:
            raise SpecError("check needs a proper prior on the means: give kappa > 0 (with a "
                            "flat prior a component's mean can wander off and the mixture's "
                            "posterior is improper)", path=path, key="prior.kappa")
        if self.known_sd is None and not self.has_cov_prior:
            keys = "iw_dof and iw_scale" if self.covariance in ("full", "tied") else \
                "ig_shape and ig_scale"
            raise SpecError(f"check needs a proper prior on the covariances: give {keys} "
                            f"(with a flat prior a component can collapse onto one point and "
                            f"the posterior is improper)", path=path,
                            key="prior." + keys.split()[0])

    def declare(self, source: DataSource, fit=None):
        """The PyMC model on every row of ``source``.

        Parameters
        ----------
        source : models.DataSource
            The data.
        fit : inference.AnalyticFit
            The EM fit of this model on ``source``: its ``declaration["clustering"]`` (the
            deterministic k-means of the data, computed by the engine) is PyMC's default
            starting point, its EM means (``state.means``) are the reference the draws are
            relabelled to, and its estimate anchors the coordinates of ``full`` / ``tied``
            (:func:`whitening`).

        Raises
        ------
        SpecError
            Without such a fit.
        """
        clustering = None if fit is None else fit.record.declaration.get("clustering")
        if clustering is None:
            raise SpecError("the mixture's declaration needs its EM fit on the same data (the "
                            "k-means clustering that starts the sampler and labels the "
                            "components): declare(source, fit=fit(spec))",
                            path=getattr(source, "label", None))
        X = self.data_matrix(source)
        self.require_proper()  # a key of the spec, not of the data: check names the spec
        reference = estimate = None
        state = None if fit is None else fit.posterior.state
        if state is not None:
            reference = np.asarray(state.means, dtype=np.float64)
            estimate = (state.weights, state.means, state.covariances)
        return self.pymc_model(X, clustering, reference=reference, estimate=estimate)

    def initial_values(self, fit, jitter_sd: float = START_JITTER_SD) -> dict:
        """Where each chain starts: the EM estimate with a small jitter, per chain.

        The values are those of the sampled variables of :meth:`pymc_model` (the
        declaration's coordinates, in the EM components' order, which is the relabelling
        reference when the fit is passed to :meth:`declare`): for ``full`` / ``tied`` the
        Cholesky factor of each precision in the whitened coordinates (log-diagonal and
        lower triangle) and the standardised means ``z`` (0 at the estimate); otherwise the
        variances and the means; the weights. Each coordinate is moved by ``jitter_sd`` times
        a rough posterior sd computed from the estimate (component k holds
        ``n_k = weight_k n`` rows): ``z`` by 1 (its scale, by construction), a mean by
        ``sd_kd / sqrt(n_k + kappa)``, a log-diagonal entry of the precision factor by
        ``1 / sqrt(2 n_k)``, an off-diagonal one by ``|U_ii| / sqrt(n_k)``, a log weight by
        ``1 / sqrt(n_k)`` (then renormalised), a log variance by ``sqrt(2 / n_k)``. The jitter
        is a seeded random variable of the initial-point graph, so PyMC and nutpie draw a
        different start for each chain from the chain's seed (and PyMC's own U(-1, 1) jitter,
        far larger than a posterior sd here, must be switched off:
        :func:`bayescheck.inference.checking.sampling.sample_nuts` does).

        Parameters
        ----------
        fit : inference.AnalyticFit
            The EM fit (``fit.posterior.state`` an ``EMResult`` whose components are in the declared
            order, ``fit.record.n_rows`` the rows).
        jitter_sd : float
            The jitter in approximate posterior sds; 0 starts every chain at the estimate.

        Returns
        -------
        dict
            Variable name -> value (symbolic when ``jitter_sd > 0``), for
            ``pm.sample(initvals=...)``.
        """
        import pytensor.tensor as pt

        state = fit.posterior.state
        w = np.asarray(state.weights, dtype=np.float64)
        mu = np.asarray(state.means, dtype=np.float64)
        cov = np.asarray(state.covariances, dtype=np.float64)
        K, D = mu.shape
        n = max(int(fit.record.n_rows), 1)
        n_k = np.maximum(w * n, 1.0)
        raw = "_raw" if K > 1 else ""

        def jitter(value, scale):
            value = np.asarray(value, dtype=np.float64)
            if jitter_sd <= 0:
                return value
            rng = pt.random.shared_rng(seed=None)
            _, eps = pt.random.normal(0.0, 1.0, size=value.shape, rng=rng, return_next_rng=True)
            return value + jitter_sd * np.broadcast_to(scale, value.shape) * eps

        out = {}
        kind = self.kind
        if not self.equal_weights:
            logw = jitter(np.log(w), 1.0 / np.sqrt(n_k))
            out["weights" + raw] = pt.special.softmax(logw) if jitter_sd > 0 else w
        if kind in ("full", "tied"):
            geo = whitening(w, mu, cov, n, self.kappa)
            out["means_z" + raw] = jitter(np.zeros((K, D)), 1.0)
            covs, counts = (cov, n_k) if kind == "full" else (cov[:1], np.array([float(n)]))
            U = np.array([precision_factor(geo.whiten_covariance(S)) for S in covs])
            diag = np.diagonal(U, axis1=1, axis2=2)
            out["prec_chol_log_diag" + raw] = jitter(np.log(diag),
                                                     1.0 / np.sqrt(2.0 * counts)[:, None])
            if D > 1:
                tri = np.tril_indices(D, -1)
                out["prec_chol_offdiag" + raw] = jitter(
                    U[:, tri[0], tri[1]], np.abs(diag[:, tri[0]]) / np.sqrt(counts)[:, None])
            return out
        sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
        out["means" + raw] = jitter(mu, sd / np.sqrt(n_k + self.kappa)[:, None])
        if kind in ("diag", "spherical"):
            var = np.diagonal(cov, axis1=1, axis2=2)
            var = var if kind == "diag" else var[:, 0]
            scale = np.sqrt(2.0 / n_k)
            logv = jitter(np.log(var), scale[:, None] if kind == "diag" else scale)
            out["variances" + raw] = pt.exp(logv) if jitter_sd > 0 else var
        return out

    def pymc_model(self, X: np.ndarray, clustering: tuple[np.ndarray, np.ndarray],
                   reference: np.ndarray | None = None, estimate: tuple | None = None):
        """The PyMC declaration on data ``X`` (n, D); see the module docstring.

        With more than one component the sampled variables carry the suffix ``_raw`` and
        the deterministics ``weights``, ``means``, ``covariances`` / ``variances`` are the
        same draws relabelled: per draw, the ordering of the components whose means are
        closest to ``reference`` (default the k-means centres); in one dimension that is the
        ordering by mean.

        Parameters
        ----------
        X : numpy.ndarray
            The data, shape ``(n, D)``.
        clustering : tuple of numpy.ndarray
            ``(centres, labels)``: the k-means of ``X``
            (:func:`bayescheck.inference.engines.mixture_em.kmeans`), shapes ``(K, D)`` and
            ``(n,)``; PyMC's default initial point is its clusters.
        reference : numpy.ndarray, optional
            Means ``(K, D)`` the draws are relabelled to.
        estimate : tuple of numpy.ndarray, optional
            ``(weights, means, covariances)`` in the declared order (the EM estimate): for
            ``full`` / ``tied`` the coordinates are whitened by its mixture's moments and the
            means standardised around its means (:func:`whitening`); default the k-means
            clusters. It changes the coordinates only, never the posterior.
        """
        import itertools

        import pymc as pm
        import pytensor.tensor as pt

        X = np.asarray(X, dtype=np.float64)
        n, D = X.shape
        K = self.n_components
        kind = self.kind
        centres, labels = clustering
        if reference is None:
            reference = centres
        reference = np.asarray(reference, dtype=np.float64).reshape(K, D)
        relabel = K > 1
        if D > 1 and math.factorial(K) > MAX_PERMUTATIONS:
            raise SpecError(f"relabelling the draws tries all K! orderings of the components; "
                            f"K = {K} gives {math.factorial(K)}, more than {MAX_PERMUTATIONS}",
                            key="n_components")
        raw = "_raw" if relabel else ""
        # PyMC's default starting point: the k-means clusters
        spread = np.array([np.cov(X[labels == k].T, ddof=0).reshape(D, D)
                           if np.sum(labels == k) > D else np.cov(X.T, ddof=0).reshape(D, D)
                           for k in range(K)])
        spread = spread + 1e-3 * np.mean(np.diagonal(spread, axis1=1, axis2=2)) * np.eye(D)
        counts = np.bincount(labels, minlength=K) + 1.0
        coords = {"component": [str(k) for k in range(K)], "feature": list(self.features),
                  "feature_": list(self.features)}
        m0 = self.prior_mean
        with pm.Model(coords=coords) as model:
            out = {}
            weights = None
            if not self.equal_weights:
                weights = pm.Dirichlet("weights" + raw, a=np.full(K, self.concentration),
                                       dims="component", initval=counts / counts.sum())
                out["weights"] = (weights, ("component",))
            if kind in ("full", "tied"):
                if estimate is None:
                    estimate = (counts / counts.sum(), centres, spread)
                geo = whitening(*estimate, n, self.kappa)
                means, covs, log_lik = self._full_declaration(
                    geo, X, spread, centres, weights, raw)
                out["covariances"] = (covs, ("component", "feature", "feature_"))
            else:
                # ---- variances (diag / spherical) or the known sd; means | variances normal
                if kind == "known":
                    var = np.full((K, D), self.known_sd ** 2)
                else:
                    dims = ("component", "feature") if kind == "diag" else ("component",)
                    v0 = np.diagonal(spread, axis1=1, axis2=2)
                    variances = pm.InverseGamma(
                        "variances" + raw, alpha=self.ig_shape, beta=self.ig_scale, dims=dims,
                        initval=v0 if kind == "diag" else v0.mean(axis=1))
                    out["variances"] = (variances, dims)
                    var = (variances if kind == "diag"
                           else pt.repeat(variances[:, None], D, axis=1))
                sd = pt.sqrt(var) if kind != "known" else self.known_sd
                means = pm.Normal("means" + raw, mu=m0, sigma=sd / math.sqrt(self.kappa),
                                  dims=("component", "feature"), initval=centres)
                log_w = (np.full(K, -math.log(K)) if weights is None else pt.log(weights))
                Xc = pt.as_tensor_variable(X)
                terms = []
                for k in range(K):
                    diff = Xc - means[k]
                    if kind == "known":
                        quad = pt.sum(diff ** 2, axis=1) / self.known_sd ** 2
                        half_logdet = D * math.log(self.known_sd)
                    else:
                        quad = pt.sum(diff ** 2 / var[k], axis=1)
                        half_logdet = 0.5 * pt.sum(pt.log(var[k]))
                    terms.append(log_w[k] - 0.5 * quad - half_logdet
                                 - 0.5 * D * math.log(2 * math.pi))
                log_lik = pt.sum(pm.math.logsumexp(pt.stack(terms, axis=1), axis=1))
            pm.Potential("log_likelihood", log_lik)
            # ---- the draws relabelled to the reference (sorted by mean in one dimension)
            if not relabel:  # one component: name what is not yet named
                out["means"] = (means, ("component", "feature"))
                for name, (value, dims) in out.items():
                    if name not in model.named_vars:
                        pm.Deterministic(name, value, dims=dims)
                return model
            if D == 1:
                perm = pt.argsort(means[:, 0])
            else:
                perms = np.array(list(itertools.permutations(range(K))), dtype=np.int64)
                cost = pt.sum((means[perms] - reference[None]) ** 2, axis=(1, 2))
                perm = pt.as_tensor_variable(perms)[pt.argmin(cost)]
            pm.Deterministic("means", means[perm], dims=("component", "feature"))
            for name, (value, dims) in out.items():
                pm.Deterministic(name, value[perm], dims=dims)
        return model

    def _full_declaration(self, geo: Whitening, X, spread, centres, weights, raw: str):
        """Full / tied covariances and the means, in whitened, standardised coordinates.

        Declared inside the caller's model. Returns the means ``(K, D)`` and covariances
        ``(K, D, D)`` in the data's coordinates and the log-likelihood, all symbolic.
        """
        import pymc as pm
        import pytensor.tensor as pt
        from pytensor.tensor.linalg import solve_triangular

        n, D = X.shape
        K = self.n_components
        kind = self.kind
        Y = geo.whiten(X)
        m0 = geo.whiten(self.prior_mean[None])[0]
        # Sigma ~ InvWishart(nu0, Psi0) in x is InvWishart(nu0, A Psi0 A') in y = A (x - s),
        # and chol(A Psi0 A') = A chol(Psi0): a product of lower-triangular factors.
        psi_chol = geo.whiten_factor(np.linalg.cholesky(np.asarray(self.iw_scale, float)))
        # Sampled through the Cholesky factor U of each whitened precision Lambda = U U'
        # (log-diagonal and free lower triangle): the likelihood then needs only products.
        # Sigma ~ InvWishart(nu0, Psi) is Lambda ~ Wishart(nu0, Psi^-1), density
        # |Lambda|^((nu0-D-1)/2) exp(-tr(Psi Lambda)/2); the log Jacobian of
        # (log diag U, offdiag U) -> Lambda is D log 2 + sum_i (D - i + 2) log U_ii (1-based).
        n_cov = 1 if kind == "tied" else K
        tri = np.tril_indices(D, -1)
        S0 = spread if kind == "full" else np.mean(spread, axis=0, keepdims=True)
        U0 = np.array([precision_factor(geo.whiten_covariance(S)) for S in S0])
        log_diag = pm.Flat("prec_chol_log_diag" + raw, shape=(n_cov, D),
                           initval=np.log(np.diagonal(U0, axis1=1, axis2=2)))
        if D > 1:
            off = pm.Flat("prec_chol_offdiag" + raw, shape=(n_cov, len(tri[0])),
                          initval=U0[:, tri[0], tri[1]])
        jac = D - np.arange(D) + 1.0
        factors, logp_cov = [], 0.0
        for c in range(n_cov):
            U = pt.diag(pt.exp(log_diag[c]))
            if D > 1:
                U = pt.set_subtensor(U[tri], off[c])
            factors.append(U)
            logp_cov += ((self.iw_dof - D - 1.0) * pt.sum(log_diag[c])
                         - 0.5 * pt.sum((psi_chol.T @ U) ** 2)
                         + pt.sum(jac * log_diag[c]))
        pm.Potential("covariance_prior", logp_cov)
        if kind == "tied":
            factors = factors * K
        # means_k = a_k + U_k^-T z_k / c_k: given Sigma_k, z_k is about standard normal a
        # posteriori. The Jacobian |U_k|^-1 cancels the |U_k| of the normal prior's
        # normaliser, so the prior of the means is its exponent alone.
        z0 = np.array([geo.scale[k] * (U0[0 if kind == "tied" else k].T
                                       @ (geo.whiten(centres[k][None])[0] - geo.centres[k]))
                       for k in range(K)])
        z = pm.Flat("means_z" + raw, shape=(K, D), initval=z0)
        mu = pt.stack([geo.centres[k] + solve_triangular(factors[k].T, z[k], lower=False)
                       / geo.scale[k] for k in range(K)])
        pm.Potential("means_prior", sum(
            -0.5 * self.kappa * pt.sum(pt.dot(factors[k].T, mu[k] - m0) ** 2)
            for k in range(K)))
        log_w = np.full(K, -math.log(K)) if weights is None else pt.log(weights)
        terms = []
        for k in range(K):
            quad = pt.sum(pt.dot(Y - mu[k], factors[k]) ** 2, axis=1)
            terms.append(log_w[k] - 0.5 * quad + pt.sum(pt.log(pt.diag(factors[k])))
                         - 0.5 * D * math.log(2 * math.pi))
        log_lik = (pt.sum(pm.math.logsumexp(pt.stack(terms, axis=1), axis=1))
                   - n * geo.log_det)  # the whitening's Jacobian, a constant
        # back to the data's coordinates: x = L y + s, Sigma = (L U^-T)(L U^-T)'
        eye = np.eye(D)
        covs = pt.stack([(lambda W: W @ W.T)(geo.L @ solve_triangular(U.T, eye, lower=False))
                         for U in factors])
        return mu @ geo.L.T + geo.shift, covs, log_lik


def precision_factor(S: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor ``U`` of ``S^-1 = U U'``, without forming ``S^-1`` by inversion.

    ``S = L L'`` gives ``S^-1 = L^-T L^-1``; ``L^-1`` comes from a triangular solve.
    """
    from scipy.linalg import solve_triangular

    L_inv = solve_triangular(np.linalg.cholesky(S), np.eye(S.shape[0]), lower=True)
    return np.linalg.cholesky(L_inv.T @ L_inv)


@dataclass(frozen=True, eq=False)
class Whitening:
    """The coordinates in which a full / tied mixture is declared (see :func:`whitening`).

    Attributes
    ----------
    shift : numpy.ndarray
        ``s``, shape (D,): the mixture's mean.
    L : numpy.ndarray
        Lower Cholesky factor of the mixture's covariance, (D, D); ``y = L^-1 (x - s)``.
    centres : numpy.ndarray
        ``a_k``, (K, D): the anchor's means in ``y``.
    scale : numpy.ndarray
        ``c_k = sqrt(n_k + kappa)``, (K,), with ``n_k = max(weight_k n, 1)``.
    log_det : float
        ``log |L|``: the log Jacobian of ``x -> y`` is ``-log_det`` per row.
    """

    shift: np.ndarray
    L: np.ndarray
    centres: np.ndarray
    scale: np.ndarray
    log_det: float

    def whiten(self, X: np.ndarray) -> np.ndarray:
        """``L^-1 (x - s)`` for each row of ``X`` (n, D)."""
        from scipy.linalg import solve_triangular

        return solve_triangular(self.L, (np.asarray(X, float) - self.shift).T, lower=True).T

    def whiten_factor(self, F: np.ndarray) -> np.ndarray:
        """``L^-1 F``: for a lower-triangular ``F``, the Cholesky factor of ``A F F' A'``."""
        from scipy.linalg import solve_triangular

        return solve_triangular(self.L, F, lower=True)

    def whiten_covariance(self, S: np.ndarray) -> np.ndarray:
        """``L^-1 S L^-T``, for a symmetric ``S``."""
        from scipy.linalg import solve_triangular

        half = solve_triangular(self.L, S, lower=True)
        out = solve_triangular(self.L, half.T, lower=True)
        return 0.5 * (out + out.T)


def whitening(weights, means, covariances, n: int, kappa: float) -> Whitening:
    """Whitened, standardised coordinates anchored at an estimate of the mixture.

    ``y = L^-1 (x - s)`` with ``s`` and ``L L'`` the mean and covariance of the estimated
    mixture as a whole (``sum_k w_k mu_k`` and ``sum_k w_k (Sigma_k + (mu_k - s)(mu_k - s)')``,
    the data's own moments at a maximum-likelihood estimate), so the data have mean 0 and
    covariance I in ``y``; the means are then declared as ``a_k + U_k^-T z_k / c_k``, with
    ``a_k`` the anchor's means in ``y`` and ``c_k = sqrt(n_k + kappa)``. Any anchor gives the
    same posterior (an affine change of coordinates, its Jacobian accounted for); a good one
    makes every coordinate's posterior about as wide as every other's.

    Parameters
    ----------
    weights, means, covariances : array_like
        The anchor, shapes (K,), (K, D), (K, D, D).
    n : int
        Rows of data.
    kappa : float
        The means' prior weight.
    """
    w = np.asarray(weights, dtype=np.float64)
    mu = np.asarray(means, dtype=np.float64)
    covs = np.asarray(covariances, dtype=np.float64)
    shift = w @ mu
    centred = mu - shift
    T = np.einsum("k,kij->ij", w, covs) + np.einsum("k,ki,kj->ij", w, centred, centred)
    try:
        L = np.linalg.cholesky(T)
    except np.linalg.LinAlgError:  # a degenerate anchor: scale the features only
        L = np.diag(np.sqrt(np.maximum(np.diagonal(T), np.finfo(np.float64).tiny)))
    geo = Whitening(shift=shift, L=L, centres=np.zeros_like(mu),
                    scale=np.sqrt(np.maximum(w * n, 1.0) + kappa),
                    log_det=float(np.sum(np.log(np.diagonal(L)))))
    return replace(geo, centres=geo.whiten(mu))


def relabel_draws(means: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per draw, the permutation of components closest to the reference means.

    Parameters
    ----------
    means : numpy.ndarray
        Drawn means, shape (S, K, D).
    reference : numpy.ndarray
        The EM means, shape (K, D).

    Returns
    -------
    numpy.ndarray
        Integer array (S, K): ``perm[s, k]`` is the drawn component that plays component
        ``k`` of the reference, minimising ``sum_k |means[s, perm[s, k]] - reference[k]|^2``
        (an assignment problem, solved exactly).
    """
    from scipy.optimize import linear_sum_assignment

    means = np.asarray(means, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    cost = np.sum((means[:, None, :, :] - reference[None, :, None, :]) ** 2, axis=-1)
    perm = np.empty(means.shape[:2], dtype=np.int64)
    for s in range(means.shape[0]):
        _, cols = linear_sum_assignment(cost[s])
        perm[s] = cols
    return perm


# --------------------------------------------------------------------------------------------
# Spec
# --------------------------------------------------------------------------------------------


def _vector(section: Section, key: str, d: int, what: str, *, positive: bool = False):
    value = section.array(key, None)
    if value is None:
        return None
    if value.ndim == 0:
        value = np.full(d, float(value))
    elif value.shape != (d,):
        raise section.error(key, f"expected a number or {d} numbers ({what}), got shape "
                                 f"{value.shape}")
    if positive and np.any(value <= 0):
        raise section.error(key, f"expected positive numbers, got {value.tolist()}")
    return value


def _key_pair(prior: Section, given: list[str], name: str, kind: str, kinds: tuple[str, str],
              keys: tuple[str, str], others: tuple[str, str]) -> None:
    """Refuse a covariance prior given for another covariance ``kind``, or half of it."""
    if kind not in kinds:
        raise prior.error(given[0], f"the {name} prior applies to covariance {kinds[0]!r} or "
                                    f"{kinds[1]!r}, not {kind!r}; use {others[0]} and "
                                    f"{others[1]}")
    if len(given) == 1:
        missing = (set(keys) - set(given)).pop()
        raise prior.error(missing, f"is required with {given[0]}")


def _priors(prior: Section, kind: str, d: int, features, equal_weights: bool) -> dict:
    out = {}
    conc = prior.number("concentration", 1.0, minimum=1)
    if equal_weights and conc != 1.0:
        raise prior.error("concentration", "has no effect with [fit] equal_weights = true; "
                                           "remove one of them")
    out["concentration"] = float(conc)
    out["prior_mean"] = _vector(prior, "mean", d, "one per feature: " + ", ".join(features))
    out["kappa"] = float(prior.number("kappa", 0.0, minimum=0))
    iw = {k: prior.raw(k, None) for k in ("iw_dof", "iw_scale")}
    ig = {k: prior.raw(k, None) for k in ("ig_shape", "ig_scale")}
    given_iw = [k for k, v in iw.items() if v is not None]
    given_ig = [k for k, v in ig.items() if v is not None]
    if kind == "known" and (given_iw or given_ig):
        raise prior.error((given_iw + given_ig)[0], "a covariance prior has no effect with "
                                                    "[fit] known_sd; remove it")
    if given_iw:
        _key_pair(prior, given_iw, "inverse-Wishart", kind, ("full", "tied"),
                  ("iw_dof", "iw_scale"), ("ig_shape", "ig_scale"))
        dof = prior.number("iw_dof")  # > D - 1 and not absurd: checked by the model
        scale = prior.covariance("iw_scale", d)
        out["iw_dof"], out["iw_scale"] = float(dof), scale
    if given_ig:
        _key_pair(prior, given_ig, "inverse-gamma", kind, ("diag", "spherical"),
                  ("ig_shape", "ig_scale"), ("iw_dof", "iw_scale"))
        shape = prior.number("ig_shape", positive=True)
        if kind == "diag":
            scale = _vector(prior, "ig_scale", d, "one per feature", positive=True)
        else:
            scale = prior.number("ig_scale", positive=True)
        out["ig_shape"], out["ig_scale"] = float(shape), scale
    return out


#: Constructor argument -> spec key, for the model's own refusals.
_SPEC_KEYS = {"concentration": "prior.concentration", "prior_mean": "prior.mean",
              "kappa": "prior.kappa", "iw_dof": "prior.iw_dof", "iw_scale": "prior.iw_scale",
              "ig_shape": "prior.ig_shape", "ig_scale": "prior.ig_scale",
              "n_init": "fit.n_init", "max_iter": "fit.max_iter", "tol": "fit.tol",
              "seed": "fit.seed", "known_sd": "fit.known_sd"}


def gaussian_mixture_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "gaussian_mixture"``.

    Keys (documented in docs/models/gaussian_mixture.md): ``n_components``, ``covariance``;
    ``[data] path, features``; ``[prior] concentration, mean, kappa, iw_dof, iw_scale,
    ig_shape, ig_scale``; ``[fit] n_init, max_iter, tol, seed, init_means, known_sd,
    equal_weights``; ``[sampling]``.
    """
    K = top.number("n_components", integer=True, minimum=1)
    covariance = top.string("covariance", "full", choices=COVARIANCE_KINDS)

    data = top.subsection("data")
    source = DataSource(data.string("path"), base=path.parent)
    features = data.strings("features", None)
    data.finish()
    columns = source.columns()
    if features is None:
        features = columns
    for f in features:
        if f not in columns:
            raise SpecError(f"column {f!r} is not in {source.files()[0]}; it has: "
                            f"{', '.join(columns)}", path=path, key="data.features")
    if not features:
        raise SpecError("no features", path=path, key="data.features")
    d = len(features)
    # EM keeps, per component and per start, a covariance, its factor and its statistics.
    require_memory(square_matrices(4 * int(K), d),
                   f"{K} components x {d} features (4 matrices of {d} x {d} per component)",
                   path=path, key="n_components")

    fit = top.subsection("fit")
    n_init = fit.number("n_init", 5, integer=True, minimum=1)
    max_iter = fit.number("max_iter", 500, integer=True, minimum=0)
    tol = float(fit.number("tol", 1e-8, minimum=0))
    seed = fit.number("seed", 0, integer=True, minimum=0)
    known_sd = fit.number("known_sd", None, positive=True)
    equal_weights = fit.boolean("equal_weights", False)
    init = fit.array("init_means", None)
    if init is not None:
        if init.ndim == 1 and d == 1:
            init = init[:, None]
        if init.shape != (K, d):
            raise fit.error("init_means", f"expected {K} x {d} numbers (one mean per component"
                                          f"{'' if d == 1 else ', each a list of ' + str(d)}), "
                                          f"got shape {init.shape}")
        if "n_init" in fit.table and n_init != 1:
            raise fit.error("n_init", "init_means gives one deterministic start; n_init must "
                                      "be 1 or absent")
        n_init = 1
    fit.finish()

    kind = "known" if known_sd is not None else covariance
    prior = top.subsection("prior")
    priors = _priors(prior, kind, d, features, equal_weights)
    prior.finish()

    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    with validation.spec_keys(path, _SPEC_KEYS):
        model = GaussianMixture(features=tuple(features), n_components=int(K),
                                covariance=covariance, n_init=int(n_init),
                                max_iter=int(max_iter), tol=tol, seed=int(seed),
                                init_means=init,
                                known_sd=None if known_sd is None else float(known_sd),
                                equal_weights=equal_weights, **priors)
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"gaussian_mixture": gaussian_mixture_spec}
