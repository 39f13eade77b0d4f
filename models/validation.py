"""Checks of a model's arguments, shared by the model objects and the spec loader.

A model object validates its own arguments in ``__post_init__`` with these functions, so a
model built in Python and one read from a spec are refused for the same reasons, with the
same words. A failure raises :class:`InvalidArgument`, which names the argument; the spec
loader (:func:`spec_keys`) turns it into a :class:`~bayescheck.models.errors.SpecError` naming the
file and the dotted key instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .errors import BayescheckError, SpecError

__all__ = ["MAX_PRIOR_WEIGHT", "MIN_CONCENTRATION", "InvalidArgument", "concentration",
           "concentration_too_small", "covariance", "positive_number", "prior_weight",
           "spec_keys", "vector"]

#: Largest prior weight accepted (a pseudo-count: a Dirichlet concentration, a prior sample
#: size kappa, degrees of freedom, an inverse-gamma shape). It is about 1 / eps of float64
#: (2^52 = 4.5e15): a prior worth more observations than that leaves the data below the
#: rounding of every posterior combination such as (kappa m0 + N xbar) / (kappa + N), and
#: products like kappa N or kappa (m0 - xbar)^2 stay far from overflow.
MAX_PRIOR_WEIGHT = 1e15

#: Smallest Dirichlet concentration of one table entry (a CPT entry, a class weight, a
#: category probability). Below it the Beta marginal of an entry in a row without data has
#: (a + b)^2 below float64's smallest normal number: its variance divides by zero and the
#: evidence loses its digits.
MIN_CONCENTRATION = 1e-150


class InvalidArgument(BayescheckError, ValueError):
    """An argument of a model object is unusable: names the argument and what is wrong.

    It is a :class:`ValueError` for Python users and a
    :class:`~bayescheck.models.errors.BayescheckError` (exit code 2) on the command line.

    Parameters
    ----------
    argument : str
        The constructor argument, for example ``"prior_cov"``.
    message : str
        What is wrong, what was expected and what was received.
    """

    def __init__(self, argument: str, message: str):
        self.argument = argument
        self.message = message
        super().__init__(f"{argument}: {message}")


@contextmanager
def spec_keys(path: Path | None, keys: Mapping[str, str]) -> Iterator[None]:
    """Re-raise :class:`InvalidArgument` as a :class:`SpecError` naming the spec's key.

    Parameters
    ----------
    path : pathlib.Path or None
        The spec file.
    keys : mapping of str to str
        Constructor argument -> dotted spec key (``{"prior_cov": "prior.cov"}``).
    """
    try:
        yield
    except InvalidArgument as exc:
        raise SpecError(exc.message, path=path, key=keys.get(exc.argument, exc.argument)) \
            from None


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, (bool, np.bool_))


def positive_number(value, argument: str) -> float:
    """A finite positive number as a float.

    Raises
    ------
    InvalidArgument
        On a string, a boolean, a non-finite or a non-positive value.
    """
    if not _is_number(value):
        raise InvalidArgument(argument, f"expected a positive number, got {value!r} "
                                        f"({type(value).__name__})")
    if not math.isfinite(value):
        raise InvalidArgument(argument, f"expected a finite number, got {value!r}")
    if value <= 0:
        raise InvalidArgument(argument, f"expected a positive number, got {value!r}")
    return float(value)


def prior_weight(value, argument: str, *, minimum: float = 0.0,
                 strict: bool = False) -> float:
    """A prior weight (pseudo-count) as a float: ``minimum <= value <= MAX_PRIOR_WEIGHT``.

    ``strict`` makes the lower bound strict (``value > minimum``).

    Raises
    ------
    InvalidArgument
        On a string, a boolean, a non-finite value, one below the bound or above
        :data:`MAX_PRIOR_WEIGHT`.
    """
    bound = f"{'>' if strict else '>='} {minimum:g}"
    if not _is_number(value):
        raise InvalidArgument(argument, f"expected a number {bound}, got {value!r} "
                                        f"({type(value).__name__})")
    if not math.isfinite(value):
        raise InvalidArgument(argument, f"expected a finite number, got {value!r}")
    if value < minimum or (strict and value == minimum):
        raise InvalidArgument(argument, f"expected a number {bound}, got {value!r}")
    if value > MAX_PRIOR_WEIGHT:
        raise InvalidArgument(argument, f"{value:.6g} is too large: a prior worth more than "
                                        f"{MAX_PRIOR_WEIGHT:.0e} observations leaves the data "
                                        f"below float64's rounding; fix the parameter instead")
    return float(value)


def concentration_too_small(what: str) -> str:
    """The message refusing a Dirichlet concentration below :data:`MIN_CONCENTRATION`.

    Parameters
    ----------
    what : str
        The value refused, as the user gave it (``"concentration = 1e-200"``).
    """
    return (f"{what} is below {MIN_CONCENTRATION:.0e}: the table rows without data would "
            f"have a prior too small for float64 arithmetic (their variances divide by zero); "
            f"use a larger prior")


def concentration(value, argument: str) -> float:
    """A Dirichlet concentration per table entry: ``MIN_CONCENTRATION <= value <= 1e15``.

    The one rule for the concentrations of naive Bayes, semi-naive Bayes and networks.

    Raises
    ------
    InvalidArgument
        On a string, a boolean, a non-finite or non-positive value, one below
        :data:`MIN_CONCENTRATION` or above :data:`MAX_PRIOR_WEIGHT`.
    """
    value = prior_weight(value, argument, strict=True)
    if value < MIN_CONCENTRATION:
        raise InvalidArgument(argument, concentration_too_small(f"{value:.6g}"))
    return value


def _float_array(value, argument: str, what: str) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise InvalidArgument(argument, f"expected {what}, got {value!r}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidArgument(argument, f"expected {what}, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise InvalidArgument(argument, f"expected finite numbers, got {value!r}")
    return arr


def vector(value, dim: int, argument: str, *, max_magnitude: float | None = None) -> np.ndarray:
    """A finite float vector of length ``dim`` (a number is repeated ``dim`` times).

    ``max_magnitude`` bounds the entries, for a vector whose squares are summed (a prior
    mean enters the evidence as mean' P mean).
    """
    arr = _float_array(value, argument, f"a number or {dim} numbers")
    if arr.ndim == 0:
        arr = np.full(dim, float(arr))
    if arr.shape != (dim,):
        raise InvalidArgument(argument, f"expected a number or {dim} numbers, got shape "
                                        f"{arr.shape}")
    if max_magnitude is not None and np.any(np.abs(arr) > max_magnitude):
        big = float(arr[np.argmax(np.abs(arr))])
        raise InvalidArgument(argument, f"{big:.6g} is too large: its square overflows float64 "
                                        f"sums (limit {max_magnitude:.0e} in magnitude); "
                                        f"rescale")
    return arr


def covariance(value, dim: int, argument: str) -> np.ndarray:
    """A ``dim x dim`` covariance matrix, checked, as a float64 array.

    ``value`` is a positive number (times the identity), ``dim`` positive numbers (the
    diagonal) or a symmetric positive definite ``dim x dim`` matrix whose inverse (the
    precision the engines work with) is representable in float64.

    Raises
    ------
    InvalidArgument
        Saying which of these conditions fails.
    """
    arr = _float_array(value, argument, "a number, a list of numbers or a list of lists of "
                                        "numbers of equal length")
    if arr.ndim == 0:
        if arr <= 0:
            raise InvalidArgument(argument, f"a scalar covariance must be positive, got "
                                            f"{float(arr)}")
        arr = float(arr) * np.eye(dim)
    elif arr.ndim == 1:
        if arr.shape != (dim,):
            raise InvalidArgument(argument, f"a diagonal covariance needs {dim} numbers, got "
                                            f"{arr.size}")
        if np.any(arr <= 0):
            raise InvalidArgument(argument, f"diagonal variances must be positive, got "
                                            f"{arr.tolist()}")
        arr = np.diag(arr)
    elif arr.shape != (dim, dim):
        raise InvalidArgument(argument, f"a full covariance must be {dim} x {dim}, got shape "
                                        f"{arr.shape}")
    elif not np.allclose(arr, arr.T, rtol=1e-12, atol=0):
        i, j = np.unravel_index(np.argmax(np.abs(arr - arr.T)), arr.shape)
        raise InvalidArgument(argument, f"covariance matrix is not symmetric: entry "
                                        f"[{i}, {j}] is {float(arr[i, j])!r} but [{j}, {i}] "
                                        f"is {float(arr[j, i])!r}")
    # numpy, not scipy.linalg: only a yes / no is taken from these factors (the matrix is
    # returned as given), and importing scipy would cost a small fit most of its start-up.
    try:
        chol = np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise InvalidArgument(argument, "covariance matrix is not positive definite") from None
    # Subnormal or tiny variances pass the factorisation, but their inverse overflows.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        try:
            inv = np.linalg.inv(chol)
        except np.linalg.LinAlgError:  # a zero pivot: as unusable as an overflow
            inv = np.full_like(chol, np.inf)
        finite = np.all(np.isfinite(inv)) and np.all(np.isfinite(inv.T @ inv)) and \
            np.all(np.diag(chol) > 0)
    if not finite:
        raise InvalidArgument(argument, f"covariance is too small for float64: its inverse "
                                        f"(the prior precision) overflows (smallest variance "
                                        f"{float(np.min(np.diag(arr))):.3g}); use variances "
                                        f"above 1e-300 or rescale the features")
    return arr
