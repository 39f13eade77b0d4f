"""A frozen ``scipy.stats`` distribution without the cost of freezing one."""

from __future__ import annotations

import numpy as np

__all__ = ["Dist"]

# the families with a fast path, and how many shape parameters each has
_SHAPES = {"norm": 0, "t": 1, "beta": 2, "invgamma": 1}


class Dist:
    """A frozen ``scipy.stats`` distribution, cheap to create.

    ``Dist("t", df, loc, scale)`` answers ``mean()``, ``std()``, ``ppf(q)``, ``cdf(x)``,
    ``pdf(x)``, ... like ``scipy.stats.t(df, loc, scale)``, by calling the unfrozen
    distribution's methods. scipy's own frozen objects rebuild their docstrings on creation
    (milliseconds each), which dominated streams that summarise every batch and calibration
    runs that fit thousands of simulations; and ``scipy.stats`` is imported only on first
    use, so the analytic path does not pay for it until a number is asked for.

    For ``norm``, ``t``, ``beta`` and ``invgamma`` with valid parameters, ``mean``, ``var``
    and ``std`` never import scipy: they evaluate the very expressions scipy 1.18 evaluates
    (the same order of operations), so the numbers are equal to the last bit. ``ppf`` (at
    0 < q < 1) calls the :mod:`scipy.special` function the distribution's own ``ppf`` calls
    (``ndtri``, ``stdtrit``, ``betaincinv``, ``gammainccinv``), which imports
    :mod:`scipy.special` only (a third of :mod:`scipy.stats`' import); anything else goes to
    ``scipy.stats``.

    Parameters
    ----------
    family : str
        Name of a ``scipy.stats`` distribution (``"norm"``, ``"t"``, ``"invgamma"``, ...).
    *args, **kwds
        Its shape, ``loc`` and ``scale`` parameters, as for the frozen distribution.
    """

    __slots__ = ("args", "family", "kwds")

    def __init__(self, family: str, *args, **kwds):
        self.family = family
        self.args = args
        self.kwds = kwds

    def __repr__(self) -> str:
        params = [*map(repr, self.args), *(f"{k}={v!r}" for k, v in self.kwds.items())]
        return f"Dist({self.family!r}, {', '.join(params)})"

    @property
    def scipy(self):
        """The unfrozen ``scipy.stats`` distribution."""
        from scipy import stats

        return getattr(stats, self.family)

    def frozen(self):
        """The equivalent frozen ``scipy.stats`` object."""
        return self.scipy(*self.args, **self.kwds)

    def _valid(self):
        """``(shapes, loc, scale)`` as arrays when the fast path applies, else None."""
        n = _SHAPES.get(self.family)
        if n is None or len(self.args) > n + 2 or set(self.kwds) - {"loc", "scale"}:
            return None
        shapes = tuple(np.asarray(a) for a in self.args[:n])
        rest = dict(zip(("loc", "scale"), self.args[n:], strict=False))
        if len(shapes) < n or set(rest) & set(self.kwds):
            return None
        rest.update(self.kwds)
        loc, scale = np.asarray(rest.get("loc", 0)), np.asarray(rest.get("scale", 1))
        ok = np.all(scale > 0) and np.all(loc == loc) and all(np.all(a > 0) for a in shapes)
        return (shapes, loc, scale) if ok else None

    def _moments(self):
        """Standardised ``(mean, variance)`` as scipy's ``_stats`` gives them, or None."""
        if self.family == "beta" and len(self.args) == 2 and not self.kwds \
                and all(type(x) in (float, np.float64) for x in self.args):
            # one Beta marginal of many (a CPT entry each): the same operations on floats,
            # without the arrays (a fit summary asks this of thousands of entries); x * x,
            # not x**2, which raises OverflowError on floats where numpy gives inf
            a, b = float(self.args[0]), float(self.args[1])
            if a > 0 and b > 0:
                a_plus_b = a + b
                return a / a_plus_b, a * b / (a_plus_b * a_plus_b * (a_plus_b + 1)), 0.0, 1.0
        valid = self._valid()
        if valid is None:
            return None
        shapes, loc, scale = valid
        if self.family == "norm":
            mu, mu2 = 0.0, 1.0
        elif self.family == "t":
            (df,) = shapes
            if not np.all((df > 2) & np.isfinite(df)):
                return None
            mu, mu2 = np.where(df > 1, 0.0, np.inf), df / (df - 2.0)
        elif self.family == "beta":
            a, b = shapes
            a_plus_b = a + b
            mu, mu2 = a / a_plus_b, a * b / (a_plus_b * a_plus_b * (a_plus_b + 1))
        else:  # invgamma
            (a,) = shapes
            if not np.all(a > 2):
                return None
            mu, mu2 = 1.0 / (a - 1.0), 1.0 / (a - 1.0) ** 2 / (a - 2.0)
        shape = np.broadcast_shapes(*(np.shape(x) for x in (*shapes, loc, scale)))
        return (np.broadcast_to(mu, shape), np.broadcast_to(mu2, shape), loc, scale)

    def mean(self):
        """Mean."""
        m = self._moments()
        if m is None:
            return self.scipy.mean(*self.args, **self.kwds)
        mu, _, loc, scale = m
        return np.asarray(mu * scale + loc, dtype=float)[()]

    def std(self):
        """Standard deviation."""
        if self._moments() is None:
            return self.scipy.std(*self.args, **self.kwds)
        return np.sqrt(self.var())

    def var(self):
        """Variance."""
        m = self._moments()
        if m is None:
            return self.scipy.var(*self.args, **self.kwds)
        _, mu2, _, scale = m
        return np.asarray(mu2 * scale * scale, dtype=float)[()]

    def ppf(self, q):
        """Quantile function."""
        valid = self._valid()
        q = np.asarray(q)
        if valid is None or not np.all((0 < q) & (q < 1)):
            return self.scipy.ppf(q, *self.args, **self.kwds)
        from scipy import special

        shapes, loc, scale = valid
        if self.family == "norm":
            x = special.ndtri(q)
        elif self.family == "t":
            x = special.stdtrit(shapes[0], q)
        elif self.family == "beta":
            x = special.betaincinv(*shapes, q)
        else:
            x = 1.0 / special.gammainccinv(shapes[0], q)
        return np.asarray(x * scale + loc, dtype=float)[()]

    def cdf(self, x):
        """Cumulative distribution function."""
        return self.scipy.cdf(x, *self.args, **self.kwds)

    def pdf(self, x):
        """Density."""
        return self.scipy.pdf(x, *self.args, **self.kwds)

    def logpdf(self, x):
        """Log density."""
        return self.scipy.logpdf(x, *self.args, **self.kwds)

    def interval(self, confidence):
        """Central interval holding ``confidence`` of the mass."""
        return self.scipy.interval(confidence, *self.args, **self.kwds)

    def rvs(self, size=None, random_state=None):
        """Random draws."""
        return self.scipy.rvs(*self.args, size=size, random_state=random_state, **self.kwds)
