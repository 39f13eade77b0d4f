"""A PyMC model's random variables, their distributions, parameters, parents and shapes.

Read through PyMC's public model attributes (``free_RVs``, ``observed_RVs``,
``rvs_to_values``, ``deterministics``, ``potentials``, ``named_vars_to_dims``, ``coords``) and
PyTensor's (a random variable's ``owner.op``, its ``dist_params``, ``ndim_supp`` and
``ndims_params``; :func:`pytensor.graph.traversal.ancestors`). Nothing is compiled: shapes and
data come from :class:`~.forms.FormReader`, which runs each op's own Python implementation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import NotConjugate
from .forms import DependsOn, FormReader, UnreadableGraph

__all__ = ["ModelGraph", "RandomNode", "distribution_name"]

#: PyMC's names of the distributions behind PyTensor's random-variable ops, where the op's
#: class name minus "RV" is not it.
_NAMES = {"InvGammaRV": "InverseGamma", "ExponentialRV": "Exponential", "TRV": "StudentT",
          "HalfNormalRV": "HalfNormal", "LogNormalRV": "LogNormal",
          "MvNormalRV": "MvNormal", "MvStudentTRV": "MvStudentT"}


def distribution_name(op) -> str:
    """The PyMC distribution a random-variable op stands for (``"InverseGamma"``)."""
    cls = type(op).__name__
    if cls in _NAMES:
        return _NAMES[cls]
    return cls[:-2] if cls.endswith("RV") else cls


@dataclass
class RandomNode:
    """One random variable of the model.

    Attributes
    ----------
    name : str
        Its name in the model.
    rv : pytensor.Variable
        The variable.
    distribution : str
        PyMC's name of its distribution (``"Normal"``).
    op_class : str
        The class name of its op (``"NormalRV"``).
    params : list
        The distribution's parameters (symbolic), in the op's order.
    observed : bool
        Whether it is observed.
    data : numpy.ndarray or None
        The observed values.
    parents : tuple of str
        The free random variables its parameters depend on, in model order.
    shape : tuple of int
        Its shape.
    dims : tuple of str
        Its dims (as ``pm.sample`` names them: declared ones, else ``name_dim_i``).
    """

    name: str
    rv: object
    distribution: str
    op_class: str
    params: list
    observed: bool
    data: np.ndarray | None
    parents: tuple
    shape: tuple = ()
    dims: tuple = ()

    @property
    def size(self) -> int:
        """Number of scalars."""
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class ModelGraph:
    """The random variables of one PyMC model and how they depend on each other.

    Build with :meth:`read`.

    Attributes
    ----------
    model : pymc.Model
    nodes : dict of str to RandomNode
        Free variables in model order, then observed ones.
    free, observed : list of str
        Names, in model order.
    deterministics : dict of str to tuple
        Name -> (variable, parents).
    reader : FormReader
        Reads the parameters' graphs.
    children : dict of str to list of str
        Free variable -> the random variables whose parameters depend on it.
    """

    model: object
    nodes: dict
    free: list
    observed: list
    deterministics: dict
    reader: FormReader
    children: dict = field(default_factory=dict)

    @classmethod
    def read(cls, model, observed: dict | None = None) -> ModelGraph:
        """Read ``model``.

        Parameters
        ----------
        model : pymc.Model
        observed : dict, optional
            Observed variable name -> values to use instead of the model's data (the
            simulations of a calibration).

        Raises
        ------
        NotConjugate
            For what no conjugate family can hold: a potential, an observed variable without
            data, a graph with a free symbolic input.
        """
        from pytensor.graph.traversal import ancestors
        from pytensor.tensor.random.op import RandomVariable

        observed = observed or {}
        for pot in model.potentials:
            raise NotConjugate(pot.name or "a potential",
                               "pm.Potential adds a term to the log density that no conjugate "
                               "family holds")
        free_rvs, obs_rvs = list(model.free_RVs), list(model.observed_RVs)
        all_rvs = free_rvs + obs_rvs
        free_names = {rv: rv.name for rv in free_rvs}
        data = {}
        for rv in obs_rvs:
            if rv.name in observed:
                data[rv] = np.asarray(observed[rv.name])
                continue
            value = model.rvs_to_values.get(rv)
            try:
                data[rv] = FormReader({}, {}).constant(value)
            except (DependsOn, UnreadableGraph):
                raise NotConjugate(rv.name, "its observed values are not data (a constant or "
                                   "pm.Data)") from None
        reader = FormReader(free_names, data)
        blockers = set(all_rvs)
        free_set = set(free_rvs)
        order = {rv: i for i, rv in enumerate(free_rvs)}

        def parents_of(graphs, own=None):
            found = {v for v in ancestors(graphs, blockers=blockers)
                     if v in free_set and v is not own}
            return tuple(v.name for v in sorted(found, key=order.__getitem__))

        dims_of = model.named_vars_to_dims
        nodes = {}
        for rv in all_rvs:
            op = rv.owner.op
            params = (list(op.dist_params(rv.owner)) if isinstance(op, RandomVariable)
                      else list(rv.owner.inputs))
            node = RandomNode(
                name=rv.name, rv=rv, distribution=distribution_name(op),
                op_class=type(op).__name__, params=params, observed=rv in data,
                data=data.get(rv), parents=parents_of(params, own=rv))
            if node.observed:
                node.shape = tuple(np.shape(node.data))
            else:
                try:
                    node.shape = _shape_of(reader, rv, params)
                except (DependsOn, UnreadableGraph, AttributeError, TypeError, ValueError):
                    node.shape = _static_shape(rv)  # a variable no family takes: refused
            if not node.observed:
                reader.set_shape(rv, node.shape)
            declared = tuple(dims_of.get(rv.name) or ())
            node.dims = tuple(
                declared[i] if i < len(declared) and declared[i] is not None
                else f"{rv.name}_dim_{i}" for i in range(len(node.shape)))
            nodes[rv.name] = node
        deterministics = {det.name: (det, parents_of([det])) for det in model.deterministics}
        graph = cls(model=model, nodes=nodes, free=[rv.name for rv in free_rvs],
                    observed=[rv.name for rv in obs_rvs], deterministics=deterministics,
                    reader=reader)
        graph.children = {name: [] for name in graph.free}
        for node in nodes.values():
            for parent in node.parents:
                graph.children[parent].append(node.name)
        return graph

    def rv(self, name: str):
        """The random variable called ``name``."""
        return self.nodes[name].rv

    def dims_of(self, name: str, shape: tuple) -> tuple:
        """The dims a deterministic ``name`` of ``shape`` gets in ``pm.sample``'s output."""
        declared = tuple(self.model.named_vars_to_dims.get(name) or ())
        return tuple(declared[i] if i < len(declared) and declared[i] is not None
                     else f"{name}_dim_{i}" for i in range(len(shape)))

    def coords(self) -> dict:
        """The model's coordinates, as ``pm.sample`` puts them in its output."""
        out = {}
        for dim, values in self.model.coords.items():
            if values is not None:
                out[dim] = np.asarray(values)
        return out


def _static_shape(rv) -> tuple:
    """The shape PyTensor knows without running anything (unknown lengths as 0).

    For the variables no conjugate family takes (a symbolic random variable such as
    ``pm.ZeroSumNormal``): they are refused by name, their shape is never used.
    """
    return tuple(0 if s is None else int(s) for s in rv.type.shape)


def _shape_of(reader: FormReader, rv, params: list) -> tuple:
    """The shape of a free random variable, from its size or its parameters' shapes."""
    op = rv.owner.op
    size_var = rv.owner.inputs[1] if len(rv.owner.inputs) > 1 else None
    size = None
    if size_var is not None and getattr(size_var.type, "ndim", None) == 1:
        size = tuple(int(s) for s in reader.constant(size_var))
    ndim_supp = getattr(op, "ndim_supp", 0)
    ndims_params = list(getattr(op, "ndims_params", [0] * len(params)))
    shapes = [reader.stand_in(p).shape for p in params]
    support: tuple = ()
    if ndim_supp:
        core = next((s for s, nd in zip(shapes, ndims_params, strict=False) if nd >= 1), None)
        support = tuple(core[len(core) - ndim_supp:]) if core is not None else ()
    if size is not None:
        return size + support
    batch = [s[:len(s) - nd] for s, nd in zip(shapes, ndims_params, strict=False)]
    return tuple(np.broadcast_shapes(*batch)) + support if batch else support
