"""Minimum-risk Bayes decisions and a discrete Bayes-rule calculator.

Decisions
---------
Given posterior class probabilities ``P(c_j | x)`` (one row per case) and a loss
matrix ``loss[i, j]`` = loss of deciding ``i`` when the truth is ``j``, the
conditional risk of option ``i`` is

    R(c_i | x) = sum_j loss[i, j] P(c_j | x),

and the Bayes decision is ``argmin_i R(c_i | x)`` (ties go to the lowest index).
Zero-one loss (``1 - I``) gives ``R(c_i | x) = 1 - P(c_i | x)``: the minimum-error,
maximum-posterior rule. The loss matrix may have more rows than classes (extra
options such as "reject"), never a different number of columns.

Because the risk is linear in the probabilities, a sampled posterior is used by
averaging the posterior predictive class probabilities over the draws first
(``proba_draws.mean(axis=0)``); the risk of the average equals the average risk.

Bayes' rule
-----------
:func:`bayes_rule` turns a prior over hypotheses and the likelihood of one
observation under each hypothesis into the posterior, in log space.

Errors are :class:`ValueError` whose message names the parameter, what was
expected and what was received.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Decision",
    "BayesRuleResult",
    "zero_one_loss",
    "validate_loss",
    "conditional_risk",
    "bayes_decision",
    "bayes_rule",
]

PROBA_ATOL = 1e-9


def zero_one_loss(n_classes: int) -> np.ndarray:
    """Return the zero-one loss matrix ``1 - I`` of shape ``(n_classes, n_classes)``."""
    if isinstance(n_classes, bool) or int(n_classes) != n_classes or n_classes < 2:
        raise ValueError(f"n_classes: expected an integer >= 2, received {n_classes!r}")
    n = int(n_classes)
    return 1.0 - np.eye(n)


def validate_loss(loss: Any, *, n_classes: int) -> np.ndarray:
    """Check a loss matrix and return it as float64.

    Parameters
    ----------
    loss : array_like, shape (n_options, n_classes)
        ``loss[i, j]``: loss of deciding option ``i`` when the truth is class ``j``.
    n_classes : int
        Number of classes (columns expected).

    Raises
    ------
    ValueError
        Wrong shape (the message gives the expected and the received shape),
        non-finite or negative entries (the message gives the first one's row and column).
    """
    try:
        L = np.asarray(loss, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"loss: expected a numeric matrix of shape (n_options, {n_classes}), received {loss!r}"
        ) from None
    if L.ndim != 2 or L.shape[1] != n_classes or L.shape[0] < 1:
        raise ValueError(
            f"loss: expected a matrix of shape (n_options, {n_classes}) "
            f"(one column per class, ({n_classes}, {n_classes}) for one option per class), "
            f"received shape {L.shape}"
        )
    bad = ~np.isfinite(L) | (L < 0)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"loss: expected finite non-negative entries, received {float(L[i, j])!r} at row {i}, "
            f"column {j}"
        )
    return L


def _validate_proba(proba: Any) -> np.ndarray:
    P = np.asarray(proba, dtype=float)
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] < 2:
        raise ValueError(
            "proba: expected class probabilities of shape (n_rows, n_classes) with n_classes >= "
            "2, "
            f"received shape {np.shape(proba)}"
        )
    bad = ~np.isfinite(P) | (P < 0) | (P > 1)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"proba: expected probabilities in [0, 1], received {float(P[i, j])!r} at row {i}, "
            f"column {j}"
        )
    s = P.sum(axis=1)
    off = np.abs(s - 1.0) > PROBA_ATOL * P.shape[1]
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"proba: expected each row to sum to 1, received a sum of {float(s[i])!r} at row {i}"
        )
    return P


def conditional_risk(*, proba: Any, loss: Any) -> np.ndarray:
    """Conditional risk ``R(option_i | x) = sum_j loss[i, j] P(c_j | x)`` of every option.

    Parameters
    ----------
    proba : array_like, shape (n_rows, n_classes) or (n_classes,)
        Posterior class probabilities; each row sums to 1.
    loss : array_like, shape (n_options, n_classes)

    Returns
    -------
    numpy.ndarray, shape (n_rows, n_options)
        The expected loss of each option, for each row.
    """
    P = _validate_proba(proba)
    L = validate_loss(loss, n_classes=P.shape[1])
    return P @ L.T


@dataclass(frozen=True, eq=False)
class Decision:
    """Minimum-risk decisions for a batch of rows.

    Attributes
    ----------
    index : numpy.ndarray of int, shape (n_rows,)
        Index of the chosen option (row of the loss matrix).
    label : numpy.ndarray, shape (n_rows,)
        The chosen option's label (``options`` if given, else the index).
    risk : numpy.ndarray, shape (n_rows, n_options)
        Conditional risk of every option (the expected risk of each option).
    min_risk : numpy.ndarray, shape (n_rows,)
        Risk of the chosen option.
    bayes_risk : float
        Mean of ``min_risk`` over the rows: the empirical Bayes risk.
    options : tuple
        Labels of the options.
    """

    index: np.ndarray
    label: np.ndarray
    risk: np.ndarray
    min_risk: np.ndarray
    bayes_risk: float
    options: tuple


def bayes_decision(*, proba: Any, loss: Any = None, options: Sequence | None = None) -> Decision:
    """Minimum-risk Bayes decision for each row.

    Parameters
    ----------
    proba : array_like, shape (n_rows, n_classes) or (n_classes,)
        Posterior (or posterior predictive) class probabilities.
    loss : array_like, shape (n_options, n_classes), optional
        ``loss[i, j]``: loss of deciding ``i`` when the truth is ``j``. Default:
        zero-one loss, i.e. the maximum-posterior class.
    options : sequence, optional
        Labels of the options (rows of ``loss``), for example the class labels.

    Returns
    -------
    Decision
    """
    P = _validate_proba(proba)
    L = zero_one_loss(P.shape[1]) if loss is None else validate_loss(loss, n_classes=P.shape[1])
    R = P @ L.T
    idx = np.argmin(R, axis=1)
    if options is None:
        opts = tuple(range(L.shape[0]))
    else:
        opts = tuple(options)
        if len(opts) != L.shape[0]:
            raise ValueError(
                f"options: expected {L.shape[0]} labels (one per row of the loss matrix), received "
                f"{len(opts)}"
            )
    labels = np.empty(idx.size, dtype=object)
    labels[:] = [opts[i] for i in idx]
    min_risk = R[np.arange(idx.size), idx]
    return Decision(
        index=idx,
        label=labels,
        risk=R,
        min_risk=min_risk,
        bayes_risk=float(min_risk.mean()),
        options=opts,
    )


@dataclass(frozen=True, eq=False)
class BayesRuleResult:
    """Outcome of :func:`bayes_rule`.

    Attributes
    ----------
    posterior : numpy.ndarray
        ``P(h | D)`` per hypothesis.
    joint : numpy.ndarray
        ``P(D | h) P(h)`` per hypothesis (the "paths" to the observation).
    evidence : float
        ``P(D) = sum_h P(D | h) P(h)``.
    labels : tuple
        Hypothesis labels (keys of the mappings, or indices).
    """

    posterior: np.ndarray
    joint: np.ndarray
    evidence: float
    labels: tuple

    def __getitem__(self, label: Any) -> float:
        """Posterior probability of one hypothesis, by label."""
        if label not in self.labels:
            raise ValueError(f"label: expected one of {list(self.labels)!r}, received {label!r}")
        return float(self.posterior[self.labels.index(label)])


def _as_vector(name: str, value: Any, labels: tuple | None) -> tuple[np.ndarray, tuple]:
    if isinstance(value, Mapping):
        keys = tuple(value.keys())
        if labels is not None:
            if set(keys) != set(labels):
                raise ValueError(
                    f"{name}: expected the hypotheses {list(labels)!r}, received {list(keys)!r}"
                )
            keys = labels
        vec = [value[k] for k in keys]
    else:
        vec = value
        keys = labels
    try:
        arr = np.asarray(vec, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected numbers, received {value!r}") from None
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, received shape {arr.shape}")
    if keys is None:
        keys = tuple(range(arr.size))
    return arr, keys


def bayes_rule(*, prior: Any, likelihoods: Any) -> BayesRuleResult:
    """Posterior over discrete hypotheses after one observation: ``P(h | D) ∝ P(D | h) P(h)``.

    Parameters
    ----------
    prior : mapping or array_like, shape (n_hypotheses,)
        ``P(h)``; non-negative, sums to 1 (within 1e-9). A mapping names the hypotheses.
    likelihoods : mapping or array_like, shape (n_hypotheses,)
        ``P(D | h)`` of the observed data under each hypothesis (non-negative;
        need not sum to 1). A mapping must have the prior's keys.

    Returns
    -------
    BayesRuleResult
        Computed in log space: ``log P(h | D) = log P(D|h) + log P(h) - logsumexp(...)``.

    Raises
    ------
    ValueError
        Mismatched lengths or keys, negative or non-finite values, a prior that does
        not sum to 1, or an observation impossible under every hypothesis (evidence 0).

    Examples
    --------
    The diagnostic test of the source material:

    >>> r = bayes_rule(prior={"cancer": 0.008, "healthy": 0.992},
    ...                likelihoods={"cancer": 0.98, "healthy": 0.03})
    >>> round(r["cancer"], 4)
    0.2085
    """
    names = None
    for given in (prior, likelihoods):
        if isinstance(given, Mapping):
            names = tuple(given.keys())
            break
    p, labels = _as_vector("prior", prior, names)
    lik, _ = _as_vector("likelihoods", likelihoods, names)
    if lik.size != p.size:
        raise ValueError(
            f"likelihoods: expected {p.size} values (one per hypothesis of the prior), received "
            f"{lik.size}"
        )
    for name, arr in (("prior", p), ("likelihoods", lik)):
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name}: expected finite non-negative values, received {float(arr[i])!r} for "
                f"hypothesis {labels[i]!r}"
            )
    if p.max() > 1 or abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(
            f"prior: expected probabilities summing to 1, received a sum of {float(p.sum())!r}"
        )
    from scipy.special import logsumexp

    with np.errstate(divide="ignore"):
        log_joint = np.log(p) + np.log(lik)
    log_evidence = logsumexp(log_joint)
    if not np.isfinite(log_evidence):
        raise ValueError(
            "likelihoods: expected the observation to be possible under at least one hypothesis "
            "with prior mass, received P(D) = 0"
        )
    return BayesRuleResult(
        posterior=np.exp(log_joint - log_evidence),
        joint=np.exp(log_joint),
        evidence=float(np.exp(log_evidence)),
        labels=labels,
    )
