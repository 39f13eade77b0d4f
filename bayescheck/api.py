"""The functions of the :mod:`bayescheck` facade: specs given as paths or :class:`Spec`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bayescheck.inference.checking.cost import DEFAULT_MAX_HOURS
from bayescheck.models.spec import Spec, load_spec

if TYPE_CHECKING:
    import pandas as pd

    from bayescheck.inference.result import AnalyticFit

__all__ = ["calibrate", "check", "exact_posterior", "fit", "predict"]


def _spec(spec: Spec | str | Path) -> Spec:
    return spec if isinstance(spec, Spec) else load_spec(spec)


def _posterior(fitted) -> tuple[dict, str]:
    """``posterior.json``'s content from a fit, a dict, the file or its folder; and its name."""
    from bayescheck.inference.result import AnalyticFit

    if isinstance(fitted, AnalyticFit):
        return fitted.to_json(), "the fit given"
    if isinstance(fitted, dict):
        return fitted, "the fit given"
    from bayescheck.reports.posterior_file import read_posterior

    path = Path(fitted)
    folder = path if path.is_dir() else path.parent
    return read_posterior(folder, option="fit"), str(folder / "posterior.json")


def fit(spec: Spec | str | Path, *, out: str | Path | None = None,
        resume: bool = False, progress: bool = False) -> AnalyticFit:
    """Fit a spec's model analytically (closed form, EM or type-II ML).

    Parameters
    ----------
    spec : Spec or str or pathlib.Path
        A spec object, or the path of a spec file.
    out : str or pathlib.Path, optional
        Folder for the streaming checkpoint (nothing else is written).
    resume : bool
        Continue a stream from the checkpoint in ``out``.
    progress : bool
        Print a line per batch to stderr.

    Returns
    -------
    inference.AnalyticFit
        ``parameters`` (what ``posterior.json`` holds), the exact marginals, the evidence.
    """
    from bayescheck.inference.families import fit as dispatch_fit

    return dispatch_fit(_spec(spec), out=out, resume=resume, progress=progress)


def check(spec: Spec | str | Path, out: str | Path | None = None, *,
          draws: int | None = None, tune: int | None = None, chains: int | None = None,
          seed: int | None = None, sampler: str = "nutpie", retry: bool = True,
          report: bool = True, progress: bool = False,
          max_hours: float | None = DEFAULT_MAX_HOURS, adaptation: str | None = None):
    """Fit, sample with NUTS and compare (``bayescheck check``).

    Parameters
    ----------
    spec : Spec or str or pathlib.Path
        A spec object, or the path of a spec file.
    out : str or pathlib.Path, optional
        Output folder for the report files (``posterior.json``, ``summary.json``,
        ``comparison.csv``, ``posterior.nc``, ``report.html``, ...); None keeps everything in
        memory and writes nothing.
    draws, tune, chains, seed : int, optional
        Override the spec's ``[sampling]``.
    sampler : {"nutpie", "pymc"}
        NUTS implementation.
    retry : bool
        Sample once more, longer and with another seed, when only the sampler's health stood
        in the way of a verdict.
    report : bool
        With ``out``: draw ``report.html`` (seconds of figures).
    progress : bool
        Show progress on stderr: the estimated cost of each sampling, then a bar of the draws
        (on a terminal).
    max_hours : float or None
        Refuse (``TooLarge``, a ``ValueError``) a sampling whose estimated time is above this
        many hours (None: no limit); see ``bayescheck check --max-hours``.
    adaptation : {"diag", "low_rank"}, optional
        Override the spec's ``[sampling] adaptation``: the mass matrix nutpie adapts
        (``"low_rank"`` follows strongly correlated directions).

    Returns
    -------
    bayescheck.inference.checking.check.CheckResult
        ``verdict`` (``"pass"``, ``"fail"``, ``"inconclusive"``), the comparisons, the draws
        and the fit.
    """
    options = dict(draws=draws, tune=tune, chains=chains, seed=seed, sampler=sampler,
                   retry=retry, progress=progress, max_hours=max_hours, adaptation=adaptation)
    if out is None:
        from bayescheck.inference.checking.check import run_check

        return run_check(_spec(spec), **options)
    from bayescheck.reports.check import run_check

    return run_check(_spec(spec), out, report=report, **options)


def calibrate(spec: Spec | str | Path, out: str | Path | None = None, *,
              simulations: int = 1000, seed: int = 0, engine: str = "analytic",
              draws: int = 199, tune: int = 500, alpha: float = 0.01,
              block: int | None = None, progress: bool = False):
    """Simulation-based calibration of the engine against the declaration.

    What ``bayescheck calibrate`` runs.

    Parameters
    ----------
    spec : Spec or str or pathlib.Path
        A spec object, or the path of a spec file.
    out : str or pathlib.Path, optional
        Output folder for ``calibration.json``; None writes nothing.
    simulations : int
        Simulated data sets (0 or at least 10).
    seed : int
        Seed of the prior-predictive simulations (and of NUTS).
    engine : {"analytic", "nuts"}
        What computes each simulated data set's posterior.
    draws, tune : int
        NUTS draws kept and tuning steps per chain, with ``engine="nuts"``.
    alpha : float
        Family-wise false-alarm rate of the uniformity tests.
    block : int, optional
        Simulations per compiled declaration under NUTS, for a model that declares its
        simulations together.
    progress : bool
        Show progress and a time estimate on stderr.

    Returns
    -------
    bayescheck.inference.checking.calibration.CalibrationResult
    """
    options = dict(simulations=simulations, seed=seed, engine=engine, draws=draws,
                   tune=tune, alpha=alpha, block=block, progress=progress)
    if out is None:
        from bayescheck.inference.checking.sbc import check_calibratable, run_sbc

        spec = _spec(spec)
        check_calibratable(spec, simulations)
        progress = options.pop("progress")
        return run_sbc(spec, log_info=progress, **options).result
    from bayescheck.reports.calibrate import run_calibration

    return run_calibration(_spec(spec), out, **options)


def predict(spec: Spec | str | Path, fitted, data=None, *, level: float = 0.9,
            loss: str | Path | None = None, target=None) -> pd.DataFrame:
    """A fit's predictions for new rows, as ``bayescheck predict`` writes them.

    Parameters
    ----------
    spec : Spec or str or pathlib.Path
        The spec the fit came from.
    fitted : AnalyticFit or dict or str or pathlib.Path
        The fit: the object :func:`fit` returns, the content of ``posterior.json``, or the
        path of that file or of the folder holding it.
    data : pandas.DataFrame or str or pathlib.Path or DataSource, optional
        The new rows (a frame, a file or a glob); None for the count models, whose
        prediction is the next outcome.
    level : float
        Mass of the central predictive interval (regression, ARD).
    loss : str or pathlib.Path, optional
        Naive and semi-naive Bayes: a loss matrix CSV.
    target : str or sequence of str, optional
        bayesian_network: the node(s) to predict (default the spec's query targets).

    Returns
    -------
    pandas.DataFrame
        Regression and ARD: ``row``, ``mean``, ``sd``, ``lower_<level>``,
        ``upper_<level>``; mixture: ``p_<component>``, ``component``, ``log_density``;
        counts: ``outcome``, ``probability``; naive Bayes: class probabilities, decision and
        risks.
    """
    import pandas as pd

    from bayescheck.data.sources import DataSource
    from bayescheck.reports.predict import prediction_table

    spec = _spec(spec)
    posterior, where = _posterior(fitted)
    if isinstance(data, pd.DataFrame):
        source = DataSource.from_frame(data)
    elif data is None or isinstance(data, DataSource):
        source = data
    else:
        source = DataSource(Path(data).resolve(), text=getattr(spec.data, "text", False))
    return prediction_table(spec, posterior, source, level=level,
                            loss=None if loss is None else Path(loss), target=target,
                            where=where)


def exact_posterior(spec: Spec | str | Path, fitted, *, draws: int = 1000, chains: int = 4,
                    seed: int | None = 0):
    """Independent draws from a fit's exact posterior, as an ArviZ-ready ``xarray.DataTree``.

    For the models whose posterior is a known distribution: linear regression (``theta``
    over ``feature``; ``sigma2`` for unknown noise), Beta-Bernoulli (``p``),
    Dirichlet-categorical (``pi`` over ``category``) and naive Bayes (the declared model's
    ``class_weight``, ``p_<feature>``, ``mu`` and ``sigma2``), discrete Bayesian networks
    (``cpt_<node>``, a Dirichlet per row), semi-naive Bayes (SPODE / TAN: the network's
    ``cpt_<node>``; AODE: every SPODE's ``joint_<s>`` and ``cond_<s>_<f>``) and ARD
    (``w_relevant`` and ``w``: the Gaussian posterior of the weights given the type-II
    maximum-likelihood ``alpha`` and ``sigma2``, which the group's attributes record; the
    hyperparameters are not integrated over). The ``posterior`` group has
    the PyMC declaration's variable names, dims and coordinates, so ``az.summary(tree)`` sits
    next to ``az.summary`` of the NUTS draws.

    Parameters
    ----------
    spec : Spec or str or pathlib.Path
        The spec the fit came from.
    fitted : AnalyticFit or dict or str or pathlib.Path
        As for :func:`predict`.
    draws, chains : int
        Draws per chain and number of chains.
    seed : int, optional
        Seed of the generator.

    Returns
    -------
    xarray.DataTree
    """
    from bayescheck.inference.families.exact import exact_posterior as tree

    posterior, _ = _posterior(fitted)
    return tree(_spec(spec).model.name, posterior, draws=draws, chains=chains, seed=seed)
