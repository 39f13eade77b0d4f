"""The exact posterior of a user's PyMC model: its summary, evidence, marginals and draws."""

from __future__ import annotations

import itertools

import numpy as np
from bayescheck.inference.result import ExactMarginal

from .forms import DependsOn, NotAffine, UnreadableGraph
from .graph import ModelGraph
from .recognise import observed_only_log_density, recognise

__all__ = ["MODEL_NAME", "ExactPosterior", "exact"]

#: ``posterior.json``'s ``"model"`` for a user's own PyMC model (a spec's is its family's name).
MODEL_NAME = "pymc model"


def exact(model, *, observed: dict | None = None) -> ExactPosterior:
    """Recognise the conjugate structure of a PyMC model and solve its posterior exactly.

    Parameters
    ----------
    model : pymc.Model
        A model written as usual (``with pm.Model(): ...``), with observed data.
    observed : dict, optional
        Observed variable name -> values to use instead of the model's data.

    Returns
    -------
    ExactPosterior

    Raises
    ------
    bayescheck.NotConjugate
        Naming the first variable that breaks conjugacy, and why.
    """
    graph = ModelGraph.read(model, observed=observed)
    blocks = recognise(graph)
    return ExactPosterior(graph, blocks, observed_only_log_density(graph))


class ExactPosterior:
    """The exact posterior of a PyMC model whose structure is conjugate.

    Made by :func:`exact`. ``family`` says what was recognised, ``summary()`` gives the
    marginals as ``az.summary`` would, ``log_evidence`` the exact log marginal likelihood,
    ``sample()`` independent draws shaped like ``pm.sample``'s output.
    """

    def __init__(self, graph: ModelGraph, blocks: list, observed_log_density: float = 0.0):
        self.graph = graph
        self.blocks = blocks
        self._observed_only = observed_log_density
        self._deterministics: dict | None = None

    def __repr__(self) -> str:
        return f"ExactPosterior({self.family!r}, log_evidence={self.log_evidence:.6g})"

    @property
    def model(self):
        """The PyMC model."""
        return self.graph.model

    @property
    def family(self) -> str:
        """What was recognised, in words (blocks joined by " + ")."""
        return " + ".join(b.family for b in self.blocks) or "no latent variables"

    @property
    def log_evidence(self) -> float:
        """log p(observed data), every latent integrated out."""
        return float(sum(b.log_evidence for b in self.blocks) + self._observed_only)

    @property
    def variables(self) -> dict:
        """Free variable name -> its exact marginals (a ``VariablePosterior``), in model order."""
        found = {}
        for b in self.blocks:
            found.update(b.variables)
        return {name: found[name] for name in self.graph.free}

    def deterministics(self) -> dict:
        """Deterministic name -> exact marginals, for those affine in one Gaussian block."""
        if self._deterministics is None:
            self._deterministics = {}
            reader = self.graph.reader
            for name, (var, parents) in self.graph.deterministics.items():
                for block in self.blocks:
                    if not parents or not set(parents) <= set(block.latents):
                        continue
                    latents = {self.graph.rv(p): p for p in getattr(block, "latents", [])
                               if p in getattr(block, "slices", {})}
                    try:
                        form = reader.affine(var, latents)
                    except (NotAffine, DependsOn, UnreadableGraph):
                        break
                    marginal = block.affine_marginal(name, form, tuple(form.shape))
                    if marginal is not None:
                        self._deterministics[name] = marginal
                    break
        return self._deterministics

    def _ordered(self, deterministics: bool = True) -> list:
        """(name, VariablePosterior, dims) of every variable with exact marginals."""
        variables = self.variables
        dets = self.deterministics() if deterministics else {}
        out = []
        for name in self.model.named_vars:
            if name in variables:
                v = variables[name]
                out.append((name, v, self.graph.nodes[name].dims))
            elif name in dets:
                v = dets[name]
                out.append((name, v, self.graph.dims_of(name, v.shape)))
        return out

    def scalar_labels(self, name: str, dims: tuple, shape: tuple):
        """(index, label, coords) of every scalar, labelled as ``az.summary`` does."""
        coords = self.graph.coords()
        values = [coords.get(d, np.arange(n)) if len(coords.get(d, ())) == n
                  else np.arange(n) for d, n in zip(dims, shape, strict=True)]
        for index in itertools.product(*(range(n) for n in shape)):
            if not index:
                yield (), name, {}
                continue
            picked = [values[i][j] for i, j in enumerate(index)]
            label = f"{name}[{', '.join(str(p) for p in picked)}]"
            yield index, label, {d: _plain(p) for d, p in zip(dims, picked, strict=True)}

    def summary(self, ci_prob: float = 0.89, *, deterministics: bool = True):
        """The exact marginals as a table like ``az.summary(..., kind="stats")``.

        Parameters
        ----------
        ci_prob : float
            Probability of the equal-tailed interval (ArviZ's default, 0.89).
        deterministics : bool
            Include the deterministics affine in the latents of one Gaussian block (others
            have no closed-form marginal here; their draws are in :meth:`sample`).

        Returns
        -------
        pandas.DataFrame
            Index ``"theta[A]"``..., columns ``mean``, ``sd``, ``eti<pct>_lb``,
            ``eti<pct>_ub``.
        """
        import pandas as pd

        pct = round(100 * ci_prob)
        lo_q, hi_q = (1 - ci_prob) / 2, (1 + ci_prob) / 2
        rows, index = [], []
        for name, v, dims in self._ordered(deterministics):
            dist = v.dist()
            mean = np.broadcast_to(dist.mean(), v.shape)
            sd = np.broadcast_to(dist.std(), v.shape)
            lo = np.broadcast_to(dist.ppf(lo_q), v.shape)
            hi = np.broadcast_to(dist.ppf(hi_q), v.shape)
            for i, label, _ in self.scalar_labels(name, dims, v.shape):
                index.append(label)
                rows.append((float(mean[i]), float(sd[i]), float(lo[i]), float(hi[i])))
        return pd.DataFrame(rows, index=index,
                            columns=["mean", "sd", f"eti{pct}_lb", f"eti{pct}_ub"])

    def marginals(self, *, deterministics: bool = False) -> list:
        """One :class:`~bayescheck.inference.result.ExactMarginal` per scalar (the oracles)."""
        out = []
        for name, v, dims in self._ordered(deterministics):
            for i, label, coords in self.scalar_labels(name, dims, v.shape):
                out.append(ExactMarginal(label, name, coords, v.at(i)))
        return out

    def to_json(self) -> dict:
        """``posterior.json``'s content: the family, each variable's marginal, the evidence."""
        parameters = {}
        for name, v, _ in self._ordered(True):
            dist = v.dist()
            parameters[name] = {"mean": np.asarray(dist.mean()).tolist(),
                                "sd": np.asarray(dist.std()).tolist(), **v.to_json()}
        return {"model": MODEL_NAME, "family": self.family, "parameters": parameters,
                "log_evidence": self.log_evidence}

    def draws(self, n: int, *, random_seed=None) -> dict:
        """``n`` independent draws of every free variable: name -> ``(n,) + shape``."""
        rng = np.random.default_rng(random_seed)
        out = {}
        for block in self.blocks:
            out.update(block.draw(rng, n))
        return {name: out[name] for name in self.graph.free}

    def sample(self, draws: int = 1000, chains: int = 4, random_seed=None):
        """Independent draws from the exact posterior, shaped like ``pm.sample``'s output.

        Parameters
        ----------
        draws, chains : int
            Draws per chain and chains (independent draws, split into chains so that ArviZ
            treats them as it treats a sampler's).
        random_seed : int or numpy.random.Generator, optional

        Returns
        -------
        xarray.DataTree
            Groups ``posterior`` (every free variable and deterministic, with the model's
            dims and coords), ``observed_data`` and ``constant_data``.
        """
        from arviz_base import from_dict
        from pymc.backends.arviz import (
            coords_and_dims_for_inferencedata,
            find_constants,
            find_observations,
        )

        n = draws * chains
        free = self.draws(n, random_seed=random_seed)
        posterior = dict(free)
        posterior.update(self._push_deterministics(free, n))
        ordered = {name: posterior[name].reshape((chains, draws) + posterior[name].shape[1:])
                   for name in self.model.named_vars if name in posterior}
        coords, dims = coords_and_dims_for_inferencedata(self.model)
        tree = from_dict({"posterior": ordered, "observed_data": find_observations(self.model),
                          "constant_data": find_constants(self.model)},
                         coords=coords, dims=dims)
        tree.posterior.attrs["inference_library"] = "bayescheck (exact posterior, " \
                                                    "independent draws)"
        tree.posterior.attrs["family"] = self.family
        return tree

    def _push_deterministics(self, free: dict, n: int) -> dict:
        """The model's deterministics at each draw (one vectorised PyTensor function)."""
        if not self.graph.deterministics:
            return {}
        import pytensor
        import pytensor.tensor as pt
        from pytensor.graph.replace import clone_replace, vectorize_graph

        names = list(self.graph.deterministics)
        outputs = [self.graph.deterministics[d][0] for d in names]
        data = {self.graph.rv(o): pt.as_tensor(np.asarray(self.graph.nodes[o].data))
                for o in self.graph.observed}
        inputs, batched = [], {}
        for name in self.graph.free:
            rv = self.graph.rv(name)
            core = rv.type()
            inputs.append(core)
            batched[core] = pt.tensor(dtype=rv.dtype, shape=(None,) + tuple(rv.type.shape))
        outputs = clone_replace(outputs, replace={**data, **{self.graph.rv(f): i for f, i in
                                                           zip(self.graph.free, inputs,
                                                               strict=True)}})
        vectorised = vectorize_graph(outputs, replace=batched)
        fn = pytensor.function(list(batched.values()), vectorised, mode="FAST_COMPILE",
                               on_unused_input="ignore")
        values = fn(*(free[name].astype(self.graph.rv(name).dtype) for name in self.graph.free))
        return {name: np.asarray(v) for name, v in zip(names, values, strict=True)}


def _plain(value):
    """A numpy scalar as the Python value it holds (for coords in ``sel``)."""
    return value.item() if isinstance(value, np.generic) else value
