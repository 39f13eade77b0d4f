"""Analytic versus sampled posteriors: the cross-check.

For each scalar parameter with an exact marginal, five statistics of the NUTS draws (mean,
sd and the 5 / 50 / 95 % quantiles) are compared with their exact values, each difference
divided by the statistic's Monte Carlo standard error (ArviZ's for mean and sd; for the
quantiles the asymptotic formula with ArviZ's quantile ESS, see :func:`_quantile_mcse`;
Vehtari et al. 2021). Under a correct analytic posterior each z is approximately standard
normal, so one two-sided threshold for the whole table, Bonferroni-corrected for the number
of z-scores, makes a correct model pass with probability at least 1 - ``familywise_alpha``
(0.999 by default). Sampler health is judged first: a failing r_hat, bulk or tail ESS,
divergence count or E-BFMI makes the verdict "inconclusive", never "pass".

Before a statistic is judged, its Monte Carlo error must itself be trustworthy. The MCSE of a
mean (and of an sd, a mean of squares) rests on a central limit theorem that heavy tails break:
a quantity such as a density evaluated far in a Student-t tail can have a posterior mean that
the draws' mean misses by many orders of magnitude while its estimated MCSE is tiny. Following
Vehtari et al. (2024, "Pareto smoothed importance sampling", JMLR 25(72)), the Pareto k-hat of
the draws of the quantity (``arviz_stats`` ``pareto_khat``: of the draws, both tails, for the
mean; of the squared deviations, right tail, for the sd) above ``min(1 - 1 / log10(S), 0.7)``
with ``S`` draws in total means that MCSE cannot be relied on. Such a statistic is "not judged":
its z is reported with the reason, left out of the number of comparisons, and never the basis
of a fail. Quantiles are always judged: their MCSE comes from the indicator ``1{x <= q}``,
which is bounded. A parameter none of whose statistics can be judged gets the verdict
"not judged"; the overall verdict rests on the judged ones (inconclusive when none is).

An oracle may know only its exact mean (``ExactMarginal.dist is None``, ``exact_mean`` set),
for example a posterior predictive probability, which is a posterior mean without a
closed-form distribution. Then only the mean is compared; its sd and quantile z-scores are
NaN and are not counted among the comparisons.

Point estimates against a full posterior (:func:`compare_estimates`): an EM or type-II
maximum-likelihood estimate has no exact posterior to match, so it is judged by where it falls
in the sampled posterior of the model declared without the fit: its distance from the
posterior mean in posterior sds, whether it lies inside the posterior's central interval, and,
where the estimator makes a claim about the support (ARD keeps or prunes a weight), whether
the posterior's central interval excludes 0 exactly when the estimator says non-zero. The same
sampler-health gate comes first.

The core works on plain arrays of draws ``(chain, draw)`` so it can be tested on draws of
known distributions without compiling a PyMC model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from bayescheck.inference.result import ExactMarginal, PointEstimate

__all__ = [
    "Comparison",
    "Diagnostics",
    "EstimateCheck",
    "EstimateComparison",
    "ParameterCheck",
    "QUANTILES",
    "INCONSISTENT_SD",
    "Thresholds",
    "as_information",
    "compare_draws",
    "compare_estimates",
    "compare_estimates_idata",
    "compare_idata",
    "draws_from_idata",
    "familywise_z",
    "khat_threshold",
]

#: Quantiles compared besides mean and sd.
QUANTILES = (0.05, 0.5, 0.95)
_STATS = ("mean", "sd", *(f"q{round(100 * q):02d}" for q in QUANTILES))


@dataclass(frozen=True)
class Thresholds:
    """Sampler-health limits and the false-alarm rate of the cross-check.

    Attributes
    ----------
    r_hat_max : float
        Largest acceptable rank-normalised split r_hat (Vehtari et al. 2021 recommend 1.01).
    ess_bulk_min, ess_tail_min : float
        Smallest acceptable bulk / tail effective sample sizes (100 per chain for 4 chains).
    max_divergences : int
        Divergent transitions tolerated.
    bfmi_min : float
        Smallest acceptable E-BFMI of any chain (Betancourt 2016 suggests 0.3).
    familywise_alpha : float
        Probability that a correct analytic posterior is declared "fail".
    """

    r_hat_max: float = 1.01
    ess_bulk_min: float = 400.0
    ess_tail_min: float = 400.0
    max_divergences: int = 0
    bfmi_min: float = 0.3
    familywise_alpha: float = 0.001


@dataclass
class ParameterCheck:
    """One parameter's row of the comparison table."""

    name: str
    analytic: dict
    sampled: dict
    mcse: dict
    z: dict
    r_hat: float
    ess_bulk: float
    ess_tail: float
    max_abs_z: float
    verdict: str
    khat: dict = field(default_factory=dict)
    not_judged: dict = field(default_factory=dict)

    def row(self) -> dict:
        """Flat dict for the CSV / JSON tables.

        ``khat_mean`` / ``khat_sd`` are the Pareto k-hats behind the MCSEs of the mean and sd;
        ``not_judged`` lists the statistics left out of the verdict, each with its reason
        (``"stat: reason; ..."``, empty when every statistic was judged).
        """
        out = {"name": self.name}
        for s in _STATS:
            out[f"analytic_{s}"] = self.analytic[s]
            out[f"sampled_{s}"] = self.sampled[s]
            out[f"mcse_{s}"] = self.mcse[s]
            out[f"z_{s}"] = self.z[s]
        out.update(r_hat=self.r_hat, ess_bulk=self.ess_bulk, ess_tail=self.ess_tail,
                   khat_mean=self.khat.get("mean", math.nan),
                   khat_sd=self.khat.get("sd", math.nan),
                   max_abs_z=self.max_abs_z, verdict=self.verdict,
                   not_judged="; ".join(f"{k}: {v}" for k, v in self.not_judged.items()))
        return out


@dataclass
class Diagnostics:
    """Sampler health over every compared parameter."""

    max_r_hat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    min_bfmi: float | None
    chains: int
    draws: int
    problems: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """True when no limit was broken."""
        return not self.problems


@dataclass
class Comparison:
    """The cross-check's result: rows, sampler health, threshold and verdict."""

    parameters: list[ParameterCheck]
    diagnostics: Diagnostics
    z_threshold: float
    n_comparisons: int
    thresholds: Thresholds
    verdict: str

    def rows(self) -> list[dict]:
        """Table rows, failing parameters first, then by decreasing max |z|."""
        order = {"fail": 0, "inconclusive": 1, "not judged": 2, "pass": 3}
        return [p.row() for p in sorted(
            self.parameters, key=lambda p: (order[p.verdict], -np.nan_to_num(p.max_abs_z)))]

    def not_judged(self) -> list[dict]:
        """Every statistic left out of the verdict: ``{"name", "statistic", "reason"}``."""
        return [{"name": p.name, "statistic": k, "reason": v}
                for p in self.parameters for k, v in p.not_judged.items()]

    def summary(self) -> dict:
        """The comparison part of ``summary.json``."""
        params = []
        for p in self.parameters:
            params.append({
                "name": p.name,
                "analytic_mean": p.analytic["mean"], "analytic_sd": p.analytic["sd"],
                "sampled_mean": p.sampled["mean"], "sampled_sd": p.sampled["sd"],
                "mcse_mean": p.mcse["mean"], "mcse_sd": p.mcse["sd"],
                "z_mean": p.z["mean"], "z_sd": p.z["sd"],
                **{f"z_{s}": p.z[s] for s in _STATS[2:]},
                "max_abs_z": p.max_abs_z, "r_hat": p.r_hat, "ess_bulk": p.ess_bulk,
                "ess_tail": p.ess_tail, "khat_mean": p.khat.get("mean"),
                "khat_sd": p.khat.get("sd"), "verdict": p.verdict,
                "not_judged": dict(p.not_judged),
            })
        diag = asdict(self.diagnostics)
        return {"verdict": self.verdict, "z_threshold": self.z_threshold,
                "n_comparisons": self.n_comparisons, "thresholds": asdict(self.thresholds),
                "parameters": params, "not_judged": self.not_judged(), "diagnostics": diag}


def _nan_to_none(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _moment(dist, name: str) -> float:
    try:
        value = float(dist.mean() if name == "mean" else dist.std())
    except (ValueError, OverflowError):
        return math.nan
    return value


def _quantile_mcse(x: np.ndarray, prob: float, density: float) -> float:
    """Monte Carlo standard error of the ``prob`` quantile of draws ``x`` under the null.

    The sample quantile's asymptotic sd is sqrt(p (1 - p) / ESS_p) / f(q_p), with ESS_p the
    effective sample size of the indicator 1{x <= q_p} (Vehtari et al. 2021, sec. 4.3) and f
    the density at the quantile. The test asks whether the exact posterior is right, so f is
    the exact density there: this avoids the noise of estimating f from the draws, which made
    the z-scores of quantiles heavier-tailed than normal.
    """
    from arviz_stats.base import array_stats

    ess = float(array_stats.ess(x, method="quantile", prob=prob))
    if not (ess > 0 and density > 0):
        return math.nan
    return math.sqrt(prob * (1 - prob) / ess) / float(density)


def familywise_z(familywise_alpha: float, n_comparisons: int) -> float:
    """The two-sided |z| threshold of ``n_comparisons`` z-scores, Bonferroni-corrected.

    ``Phi^-1(1 - familywise_alpha / (2 n))``, computed as scipy's ``stats.norm.isf`` does
    (``-ndtri``), bit for bit (``tests/inference/test_familywise_z.py``), without importing
    :mod:`scipy.stats` (1.5 s of CPU alone) into a process that imports this module and
    never compares. A comparison imports it anyway, with ArviZ's diagnostics (their rank
    normalisation calls ``scipy.stats``), so a check costs the same.
    """
    from scipy.special import ndtri

    # 0.0 - x: the same bits as stats.norm.isf, which gives +0.0 at 1/2 (-ndtri gives -0.0)
    return float(0.0 - ndtri(familywise_alpha / (2 * max(n_comparisons, 1))))


def khat_threshold(n_draws: int) -> float:
    """Largest Pareto k-hat for which a Monte Carlo mean of ``n_draws`` draws is reliable.

    ``min(1 - 1 / log10(S), 0.7)`` (Vehtari et al. 2024, sec. 3): above it the estimate's
    error is not reduced usefully by ``S`` draws and its MCSE is unreliable.
    """
    return min(1.0 - 1.0 / math.log10(n_draws), 0.7) if n_draws > 10 else 0.0


def _khat(x: np.ndarray, tail: str) -> float:
    """Pareto k-hat of draws ``x`` (chain, draw); -inf when the tail is constant (bounded)."""
    import warnings

    from arviz_stats.base import array_stats

    if not np.all(np.isfinite(x)):
        return math.nan
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(array_stats.pareto_khat(x, tail=tail))
    except ValueError:  # "All tail values are the same": a bounded, not a heavy, tail
        return -math.inf


def _trust(x: np.ndarray, mean: float) -> tuple[dict, dict]:
    """Pareto k-hats of the mean's and sd's quantities, and the statistics not to judge.

    The mean's MCSE depends on both tails of the draws; the sd's on the right tail of the
    squared deviations ``(x - mean)**2`` (a quantity with twice the draws' k).
    """
    limit = khat_threshold(x.size)
    khat = {"mean": _khat(x, "both"), "sd": _khat((x - mean) ** 2, "right")}
    what = {"mean": "the draws (both tails)", "sd": "the squared deviations (right tail)"}
    not_judged = {}
    for s, k in khat.items():
        if math.isnan(k):
            not_judged[s] = "Pareto k-hat not computable (non-finite draws)"
        elif k > limit:
            not_judged[s] = (f"Pareto k-hat of {what[s]} {k:.2f} > {limit:.2f}: heavy tail, "
                             f"the Monte Carlo error of the {s} is unreliable")
    return khat, not_judged


def compare_draws(marginals: Sequence[ExactMarginal], draws: Mapping[str, np.ndarray], *,
                  diverging: np.ndarray | None = None, energy: np.ndarray | None = None,
                  thresholds: Thresholds | None = None) -> Comparison:
    """Compare exact marginals with draws.

    Parameters
    ----------
    marginals : sequence of ExactMarginal
        The analytic oracles.
    draws : mapping of str to numpy.ndarray
        For each marginal's ``name``, draws shaped ``(chain, draw)``.
    diverging : numpy.ndarray, optional
        Boolean ``(chain, draw)`` divergence flags.
    energy : numpy.ndarray, optional
        ``(chain, draw)`` Hamiltonian energy, for E-BFMI.
    thresholds : Thresholds, optional
        Health limits and false-alarm rate.

    Returns
    -------
    Comparison
    """
    from arviz_stats.base import array_stats

    thresholds = thresholds or Thresholds()
    rows = []
    for m in marginals:
        x = np.asarray(draws[m.name], dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"draws of {m.name} must be (chain, draw), got shape {x.shape}")
        sampled = {"mean": float(np.mean(x)), "sd": float(np.std(x, ddof=1))}
        khat, not_judged = _trust(x, sampled["mean"])
        mcse = {"mean": float(array_stats.mcse(x, method="mean")),
                "sd": float(array_stats.mcse(x, method="sd"))}
        if m.dist is None:  # only the exact mean is known: sd and quantiles stay unchecked
            analytic = {s: math.nan for s in _STATS}
            analytic["mean"] = float(m.exact_mean)
        else:
            analytic = {"mean": _moment(m.dist, "mean"), "sd": _moment(m.dist, "sd")}
        for q, s in zip(QUANTILES, _STATS[2:], strict=True):
            sampled[s] = float(np.quantile(x, q))
            if m.dist is None:
                mcse[s] = math.nan
                continue
            analytic[s] = float(m.dist.ppf(q))
            mcse[s] = _quantile_mcse(x, q, m.dist.pdf(analytic[s]))
        z = {}
        for s in _STATS:
            ok = all(map(math.isfinite, (analytic[s], sampled[s], mcse[s]))) and mcse[s] > 0
            z[s] = (sampled[s] - analytic[s]) / mcse[s] if ok else math.nan
        # only statistics that are compared at all can be "not judged"
        not_judged = {s: why for s, why in not_judged.items() if math.isfinite(z[s])}
        finite = [abs(v) for s, v in z.items() if math.isfinite(v) and s not in not_judged]
        rows.append(ParameterCheck(
            name=m.name, analytic=analytic, sampled=sampled, mcse=mcse, z=z,
            r_hat=float(array_stats.rhat(x)), ess_bulk=float(array_stats.ess(x, method="bulk")),
            ess_tail=float(array_stats.ess(x, method="tail", prob=(0.05, 0.95))),
            max_abs_z=max(finite) if finite else math.nan, verdict="", khat=khat,
            not_judged=not_judged))

    n_comparisons = sum(math.isfinite(v) and s not in r.not_judged
                        for r in rows for s, v in r.z.items())
    z_threshold = familywise_z(thresholds.familywise_alpha, n_comparisons)
    diagnostics = _diagnostics(rows, draws, marginals, diverging, energy, thresholds)
    for r in rows:
        if not diagnostics.healthy:
            r.verdict = "inconclusive"
        elif not math.isfinite(r.max_abs_z) and r.not_judged:
            r.verdict = "not judged"
        elif not math.isfinite(r.max_abs_z):
            r.verdict = "inconclusive"
            diagnostics.problems.append(f"{r.name}: no finite statistic to compare")
        else:
            r.verdict = "fail" if r.max_abs_z > z_threshold else "pass"
    if not diagnostics.healthy:
        verdict = "inconclusive"
    elif any(r.verdict == "fail" for r in rows):
        verdict = "fail"
    elif any(r.verdict == "inconclusive" for r in rows):
        verdict = "inconclusive"
    elif n_comparisons == 0:
        verdict = "inconclusive"
        diagnostics.problems.append("no statistic could be judged (every Monte Carlo error "
                                    "is unreliable)")
    else:
        verdict = "pass"
    return Comparison(rows, diagnostics, z_threshold, n_comparisons, thresholds, verdict)


def _diagnostics(rows, draws, marginals, diverging, energy, th: Thresholds) -> Diagnostics:
    from arviz_stats.base import array_stats

    shape = np.asarray(draws[marginals[0].name]).shape
    r_hats = [r.r_hat for r in rows]
    ess_b = [r.ess_bulk for r in rows]
    ess_t = [r.ess_tail for r in rows]
    max_r_hat = max(r_hats, key=lambda v: math.inf if math.isnan(v) else v)
    min_bulk = min(ess_b, key=lambda v: -math.inf if math.isnan(v) else v)
    min_tail = min(ess_t, key=lambda v: -math.inf if math.isnan(v) else v)
    divergences = int(np.sum(diverging)) if diverging is not None else 0
    min_bfmi = None
    if energy is not None:
        bfmi = np.asarray(array_stats.bfmi(np.asarray(energy, dtype=np.float64)))
        min_bfmi = float(np.nanmin(bfmi)) if np.isfinite(bfmi).any() else math.nan
    problems = []
    if not max_r_hat <= th.r_hat_max:
        problems.append(f"r_hat {max_r_hat:.4g} above {th.r_hat_max} (or not computable)")
    if not min_bulk >= th.ess_bulk_min:
        problems.append(f"bulk ESS {min_bulk:.4g} below {th.ess_bulk_min:g}")
    if not min_tail >= th.ess_tail_min:
        problems.append(f"tail ESS {min_tail:.4g} below {th.ess_tail_min:g}")
    if divergences > th.max_divergences:
        problems.append(f"{divergences} divergent transitions (at most {th.max_divergences})")
    if min_bfmi is not None and not min_bfmi >= th.bfmi_min:
        problems.append(f"E-BFMI {min_bfmi:.3g} below {th.bfmi_min}")
    return Diagnostics(max_r_hat=_nan_to_none(max_r_hat), min_ess_bulk=_nan_to_none(min_bulk),
                       min_ess_tail=_nan_to_none(min_tail), divergences=divergences,
                       min_bfmi=_nan_to_none(min_bfmi) if min_bfmi is not None else None,
                       chains=int(shape[0]), draws=int(shape[1]), problems=problems)


def draws_from_idata(idata, marginals: Sequence[ExactMarginal]) -> dict[str, np.ndarray]:
    """Pull each marginal's ``(chain, draw)`` array out of a PyMC / ArviZ DataTree."""
    out = {}
    for m in marginals:
        da = idata.posterior[m.var]
        if m.coords:
            da = da.sel(m.coords)
        out[m.name] = np.asarray(da.transpose("chain", "draw").values, dtype=np.float64)
    return out


def _sample_stat(idata, name: str) -> np.ndarray | None:
    stats_group = idata.sample_stats if "sample_stats" in idata.children else None
    if stats_group is None or name not in stats_group:
        return None
    return np.asarray(stats_group[name].transpose("chain", "draw").values)


def compare_idata(marginals: Sequence[ExactMarginal], idata, *,
                  thresholds: Thresholds | None = None) -> Comparison:
    """Compare exact marginals with the posterior group of a sampled DataTree."""
    return compare_draws(marginals, draws_from_idata(idata, marginals),
                         diverging=_sample_stat(idata, "diverging"),
                         energy=_sample_stat(idata, "energy"), thresholds=thresholds)


# --------------------------------------------------------------------------- point estimates


@dataclass
class EstimateCheck:
    """One point estimate's row: where it falls in the sampled posterior.

    Attributes
    ----------
    name : str
        Display name.
    estimate : float
        The point estimate.
    nonzero : bool or None
        The estimator's support claim (True kept, False pruned, None none).
    sampled : dict
        Posterior ``mean``, ``sd``, central interval ``lower`` / ``upper`` at ``level`` and
        ``support_lower`` / ``support_upper`` at ``support_level``.
    distance_sd : float
        ``(estimate - posterior mean) / posterior sd``.
    inside : bool
        The estimate lies in the central interval at ``level``.
    zero_excluded : bool
        The central interval at ``support_level`` excludes 0.
    verdict : str
        pass, fail or inconclusive.
    reasons : list of str
        Why a row failed.
    """

    name: str
    estimate: float
    nonzero: bool | None
    sampled: dict
    distance_sd: float
    inside: bool
    zero_excluded: bool
    r_hat: float
    ess_bulk: float
    ess_tail: float
    verdict: str = ""
    reasons: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)

    def row(self) -> dict:
        """Flat dict for the CSV / JSON tables.

        Without a support claim (``nonzero`` None: a mixture's estimates, ARD's sigma2) the
        support columns (``nonzero``, ``zero_excluded``, ``posterior_support_*``) are left
        out: they would mean nothing, and a table of such rows has none of them.
        """
        support = ("nonzero", "zero_excluded", "posterior_support_lower",
                   "posterior_support_upper")
        row = {"name": self.name, "estimate": self.estimate,
               "nonzero": self.nonzero, **{f"posterior_{k}": v for k, v in self.sampled.items()},
               "distance_sd": self.distance_sd, "inside": self.inside,
               "zero_excluded": self.zero_excluded, "r_hat": self.r_hat,
               "ess_bulk": self.ess_bulk, "ess_tail": self.ess_tail, "verdict": self.verdict,
               "reasons": "; ".join(self.reasons),
               "inconsistent": "; ".join(self.inconsistent)}
        if self.nonzero is None:
            for key in support:
                row.pop(key, None)
        return row


@dataclass
class EstimateComparison:
    """Point estimates against a sampled posterior: rows, sampler health and verdict."""

    parameters: list[EstimateCheck]
    diagnostics: Diagnostics
    level: float
    support_level: float
    thresholds: Thresholds
    verdict: str
    #: A family's account of the chains' modes (the mixture's; see
    #: ``inference.families.gaussian_mixture.modes_summary``), or None.
    modes: dict | None = None
    informational: bool = False

    @property
    def binding_verdict(self) -> str | None:
        """The verdict the overall check takes from this comparison.

        Its own verdict, or for an informational comparison (:func:`as_information`) "fail"
        when it found a numerical inconsistency and None (no say) otherwise.
        """
        if not self.informational:
            return self.verdict
        return "fail" if self.verdict == "fail" else None

    def add_check(self, check: EstimateCheck, failure: str | None) -> None:
        """Append a family's own criterion and recompute the verdict.

        ``check`` is inconclusive when the sampler is unhealthy, else it fails with the
        reason ``failure`` or passes when ``failure`` is None.
        """
        if not self.diagnostics.healthy:
            check.verdict = "inconclusive"
        elif failure is None:
            check.verdict = "pass"
        else:
            check.verdict = "fail"
            check.reasons.append(failure)
        self.parameters.append(check)
        if self.diagnostics.healthy:
            self.verdict = "fail" if any(r.verdict == "fail" for r in self.parameters) else "pass"

    def rows(self) -> list[dict]:
        """Table rows, failing first, then by decreasing distance."""
        order = {"fail": 0, "inconclusive": 1, "differs": 2, "pass": 3}
        return [p.row() for p in sorted(
            self.parameters, key=lambda p: (order[p.verdict], -abs(np.nan_to_num(p.distance_sd))))]

    def support(self) -> dict:
        """The support sets: what the estimator keeps and where the posterior excludes 0."""
        claims = [p for p in self.parameters if p.nonzero is not None]
        return {"estimate_nonzero": [p.name for p in claims if p.nonzero],
                "posterior_excludes_zero": [p.name for p in claims if p.zero_excluded],
                "agree": all(p.nonzero == p.zero_excluded for p in claims)}

    def summary(self) -> dict:
        """The point-estimate part of ``summary.json``."""
        return {"verdict": self.verdict, "informational": self.informational,
                "level": self.level,
                "support_level": self.support_level, "thresholds": asdict(self.thresholds),
                "support": self.support(), "parameters": [p.row() for p in self.parameters],
                "diagnostics": asdict(self.diagnostics),
                **({"modes": self.modes} if self.modes is not None else {})}


def compare_estimates(estimates: Sequence[PointEstimate], draws: Mapping[str, np.ndarray], *,
                      diverging: np.ndarray | None = None, energy: np.ndarray | None = None,
                      thresholds: Thresholds | None = None, level: float = 0.99,
                      support_level: float = 0.95) -> EstimateComparison:
    """Judge point estimates by where they fall in a sampled posterior.

    A row fails when the estimate (unless it claims to be exactly zero) lies outside the
    posterior's equal-tailed central interval at ``level``, or when it makes a support claim
    that the posterior contradicts: ``nonzero`` is True but the central interval at
    ``support_level`` contains 0, or False but that interval excludes 0. The distance from the
    posterior mean in posterior sds is reported for every row. Sampler health is judged first,
    as in :func:`compare_draws`; an unhealthy sampler makes every row "inconclusive".

    The interval ends are estimated from the draws; an estimate or a zero within Monte Carlo
    error of an end can fall either way, and a support claim depends on where the estimator
    draws its line (ARD's relevance threshold) as much as on the posterior.

    Parameters
    ----------
    estimates : sequence of PointEstimate
        The estimates.
    draws : mapping of str to numpy.ndarray
        For each estimate's ``name``, posterior draws shaped ``(chain, draw)``.
    diverging, energy : numpy.ndarray, optional
        ``(chain, draw)`` divergence flags and Hamiltonian energy.
    thresholds : Thresholds, optional
        Sampler-health limits.
    level : float in (0, 1), default 0.99
        Central interval an estimate must lie in (an estimate 3 posterior sds from the mean of
        a normal posterior is outside the 99 % interval, at +-2.58 sds).
    support_level : float in (0, 1), default 0.95
        Central interval whose exclusion of 0 means "non-zero".

    Returns
    -------
    EstimateComparison
    """
    from arviz_stats.base import array_stats

    for key, value in (("level", level), ("support_level", support_level)):
        if not 0 < value < 1:
            raise ValueError(f"{key} must be in (0, 1), got {value!r}")
    if not estimates:
        raise ValueError("no point estimates to compare")
    thresholds = thresholds or Thresholds()
    rows = []
    for e in estimates:
        x = np.asarray(draws[e.name], dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"draws of {e.name} must be (chain, draw), got shape {x.shape}")
        lo, hi, s_lo, s_hi = np.quantile(x, [(1 - level) / 2, (1 + level) / 2,
                                             (1 - support_level) / 2, (1 + support_level) / 2])
        mean, sd = float(np.mean(x)), float(np.std(x, ddof=1))
        value = float(e.value)
        rows.append(EstimateCheck(
            name=e.name, estimate=value, nonzero=e.nonzero,
            sampled={"mean": mean, "sd": sd, "lower": float(lo), "upper": float(hi),
                     "support_lower": float(s_lo), "support_upper": float(s_hi)},
            distance_sd=(value - mean) / sd if sd > 0 else math.nan,
            inside=bool(lo <= value <= hi), zero_excluded=bool(s_lo > 0 or s_hi < 0),
            r_hat=float(array_stats.rhat(x)), ess_bulk=float(array_stats.ess(x, method="bulk")),
            ess_tail=float(array_stats.ess(x, method="tail", prob=(0.05, 0.95)))))
    diagnostics = _diagnostics(rows, draws, estimates, diverging, energy, thresholds)
    pct = f"{100 * level:g} %"
    for r in rows:
        if r.nonzero is not False and not r.inside:
            r.reasons.append(f"estimate {r.estimate:.4g} outside the posterior's {pct} interval "
                             f"[{r.sampled['lower']:.4g}, {r.sampled['upper']:.4g}] "
                             f"({r.distance_sd:+.2f} sd)")
        if r.nonzero is not None and r.nonzero != r.zero_excluded:
            r.reasons.append(
                f"estimated {'non-zero' if r.nonzero else 'zero (pruned)'} but the posterior's "
                f"{100 * support_level:g} % interval [{r.sampled['support_lower']:.4g}, "
                f"{r.sampled['support_upper']:.4g}] "
                f"{'contains' if r.nonzero else 'excludes'} 0")
        r.verdict = "inconclusive" if not diagnostics.healthy else (
            "fail" if r.reasons else "pass")
    if not diagnostics.healthy:
        verdict = "inconclusive"
    else:
        verdict = "fail" if any(r.verdict == "fail" for r in rows) else "pass"
    return EstimateComparison(rows, diagnostics, level, support_level, thresholds, verdict)


def compare_estimates_idata(estimates: Sequence[PointEstimate], idata, *,
                            thresholds: Thresholds | None = None,
                            **kwargs) -> EstimateComparison:
    """Compare point estimates with the posterior group of a sampled DataTree.

    Keyword arguments as :func:`compare_estimates`.
    """
    return compare_estimates(estimates, draws_from_idata(idata, estimates),
                             diverging=_sample_stat(idata, "diverging"),
                             energy=_sample_stat(idata, "energy"), thresholds=thresholds,
                             **kwargs)


#: An informational point-estimate comparison (:func:`as_information`) fails only when an
#: estimate is farther than this many posterior sds from the posterior mean: a distance no
#: difference of shrinkage between two versions of a model explains (on the gallery and the
#: examples the type-II ML weights lay within 3 sds of the hierarchical posterior means),
#: so it points at a computation that went wrong (a sign, a scale, a misplaced feature).
INCONSISTENT_SD = 8.0


def as_information(comparison: EstimateComparison, *,
                   max_distance_sd: float = INCONSISTENT_SD) -> EstimateComparison:
    """Turn a point-estimate comparison into information that fails only on inconsistency.

    For a model whose point estimates answer a different question from the full posterior
    (ARD's type-II maximum likelihood against the posterior with hyperpriors), an estimate
    outside the posterior's interval, or a weight kept whose interval contains 0, is a
    property of the two models, not an error. Such rows become "differs" (their reasons
    kept); a row is "fail" only when it is numerically inconsistent: a non-finite estimate or
    posterior summary, or, with a healthy sampler, an estimate that claims to be non-zero
    (or makes no claim) lying more than ``max_distance_sd`` posterior sds from the posterior
    mean. The comparison's verdict is then "fail", "inconclusive" (sampler), "differs" or
    "pass"; :attr:`EstimateComparison.binding_verdict` gives the overall check a say only in
    the first case. Edits ``comparison`` in place and returns it.
    """
    healthy = comparison.diagnostics.healthy
    for r in comparison.parameters:
        values = (r.estimate, r.sampled["mean"], r.sampled["sd"])
        r.inconsistent = []
        if not all(map(math.isfinite, values)):
            r.inconsistent.append("non-finite estimate or posterior summary")
        elif (healthy and r.nonzero is not False and math.isfinite(r.distance_sd)
              and abs(r.distance_sd) > max_distance_sd):
            r.inconsistent.append(
                f"estimate {r.distance_sd:+.1f} posterior sds from the posterior mean (more "
                f"than {max_distance_sd:g}: no difference between the models explains it)")
        if r.inconsistent:
            r.verdict = "fail"
        elif not healthy:
            r.verdict = "inconclusive"
        else:
            r.verdict = "differs" if r.reasons else "pass"
    verdicts = {r.verdict for r in comparison.parameters}
    comparison.verdict = next(v for v in ("fail", "inconclusive", "differs", "pass")
                              if v in verdicts or v == "pass")
    comparison.informational = True
    return comparison
