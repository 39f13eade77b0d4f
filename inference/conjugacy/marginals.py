"""The exact marginal posterior of one model variable, elementwise over its shape."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from bayescheck.inference.engines.dist import Dist

__all__ = ["VariablePosterior"]


@dataclass
class VariablePosterior:
    """Each scalar of a variable has a marginal of one ``scipy.stats`` family.

    Attributes
    ----------
    name : str
        The variable.
    shape : tuple of int
        Its shape.
    family : str
        The ``scipy.stats`` family of every scalar's marginal (``"norm"``, ``"t"``,
        ``"beta"``, ``"gamma"``, ``"invgamma"``).
    args : tuple of numpy.ndarray
        Shape parameters, location and scale, each of ``shape``.
    kwds : dict of str to numpy.ndarray
        Keyword parameters (``scale``), each of ``shape``.
    """

    name: str
    shape: tuple
    family: str
    args: tuple
    kwds: dict = field(default_factory=dict)

    def __post_init__(self):
        self.args = tuple(np.broadcast_to(np.asarray(a, dtype=float), self.shape)
                          for a in self.args)
        self.kwds = {k: np.broadcast_to(np.asarray(v, dtype=float), self.shape)
                     for k, v in self.kwds.items()}

    def dist(self) -> Dist:
        """Every scalar's marginal at once (arrays of ``shape``)."""
        return Dist(self.family, *self.args, **self.kwds)

    def at(self, index: tuple) -> Dist:
        """The marginal of the scalar at ``index``."""
        return Dist(self.family, *(float(a[index]) for a in self.args),
                    **{k: float(v[index]) for k, v in self.kwds.items()})

    def to_json(self) -> dict:
        """The distribution and its parameters, as lists."""
        return {"distribution": self.family,
                "args": [np.asarray(a).tolist() for a in self.args],
                **{k: np.asarray(v).tolist() for k, v in self.kwds.items()}}
