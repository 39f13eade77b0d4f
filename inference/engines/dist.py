"""A frozen ``scipy.stats`` distribution without the cost of freezing one."""

from __future__ import annotations

__all__ = ["Dist"]


class Dist:
    """A frozen ``scipy.stats`` distribution, cheap to create.

    ``Dist("t", df, loc, scale)`` answers ``mean()``, ``std()``, ``ppf(q)``, ``cdf(x)``,
    ``pdf(x)``, ... like ``scipy.stats.t(df, loc, scale)``, by calling the unfrozen
    distribution's methods. scipy's own frozen objects rebuild their docstrings on creation
    (milliseconds each), which dominated streams that summarise every batch and calibration
    runs that fit thousands of simulations; and ``scipy.stats`` is imported only on first
    use, so the analytic path does not pay for it until a number is asked for.

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

    def mean(self):
        """Mean."""
        return self.scipy.mean(*self.args, **self.kwds)

    def std(self):
        """Standard deviation."""
        return self.scipy.std(*self.args, **self.kwds)

    def var(self):
        """Variance."""
        return self.scipy.var(*self.args, **self.kwds)

    def ppf(self, q):
        """Quantile function."""
        return self.scipy.ppf(q, *self.args, **self.kwds)

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
