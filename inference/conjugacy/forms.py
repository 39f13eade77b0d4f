"""Reading a PyTensor expression as an affine map or a monomial of a model's latent variables.

A parameter of a random variable in a PyMC model is a PyTensor graph whose leaves are
constants, ``pm.Data`` (shared variables) and other random variables. Conjugacy is a statement
about the *form* of that graph: a Normal mean affine in Gaussian latents
(``X @ beta + alpha[group]``), a Normal scale proportional to a power of a variance
(``sigma2 ** 0.5``), a Poisson rate that picks one element of a Gamma vector times an exposure.

:class:`FormReader` walks the graph op by op, from the leaves up, and gives every variable one
of three values:

- :class:`Const`: a number (array) that no free random variable influences. Its value is
  computed by the op's own ``perform`` (PyTensor's Python implementation of every op).
- :class:`Affine`: ``offset + sum_k coef_k @ vec(z_k)`` for the latents ``z_k``, each
  coefficient array of shape ``shape + (size of z_k,)``. Only ops that keep a graph affine are
  followed (sums, products and quotients by constants, matrix products with a constant side,
  indexing, reshaping, joining, broadcasting, sums over axes); anything else raises
  :class:`NotAffine` naming the op.
- :class:`Monomial`: ``c * v[g] ** p`` elementwise for one positive latent ``v`` (each
  element involves at most one element of ``v``): products, quotients, square roots,
  reciprocals, powers by constants, absolute values and signs (``v > 0``), indexing and
  reshaping. Anything else raises :class:`NotMonomial`.

Ops that only move elements around (indexing, transposing, reshaping, joining, broadcasting,
``pm.Deterministic``'s view) are not re-implemented: the op itself is run on arrays of element
*positions*, which says where each output element comes from, and the forms' arrays are
gathered accordingly. So every indexing rule of NumPy that PyTensor supports holds without a
line of it here.

The walk is iterative (a model may chain hundreds of variables), stops at random variables
(a latent is a leaf, an observed variable is the constant of its data) and is memoised per
reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

__all__ = [
    "Affine",
    "Const",
    "DependsOn",
    "FormReader",
    "Monomial",
    "NotAffine",
    "NotMonomial",
    "UnreadableGraph",
]


class UnreadableGraph(Exception):
    """A graph the reader cannot evaluate (a free symbolic input, an op without ``perform``)."""


class DependsOn(Exception):
    """The expression depends on a free random variable outside the set being read.

    Attributes
    ----------
    variable : str
        That variable's name.
    """

    def __init__(self, variable: str):
        super().__init__(variable)
        self.variable = variable


class NotAffine(Exception):
    """The expression is not affine in the latents; the message names the op that breaks it."""


class NotMonomial(Exception):
    """The expression is not ``c * v[g] ** p``; the message names the op that breaks it."""


@dataclass
class Const:
    """A value no free random variable influences."""

    value: np.ndarray

    @property
    def shape(self) -> tuple:
        """Shape of the value."""
        return np.shape(self.value)


@dataclass
class Affine:
    """``offset + sum_k coefs[k] @ vec(z_k)``, elementwise over ``offset``'s shape.

    Attributes
    ----------
    offset : numpy.ndarray
        Value at z = 0, float64.
    coefs : dict of str to numpy.ndarray
        Latent name -> coefficients, shape ``offset.shape + (size of the latent,)``.
    """

    offset: np.ndarray
    coefs: dict

    @property
    def shape(self) -> tuple:
        """Shape of the expression."""
        return self.offset.shape


@dataclass
class Monomial:
    """``c * v.flat[g] ** p`` elementwise, for one positive latent ``v``.

    Attributes
    ----------
    latent : str
        The name of ``v``.
    c : numpy.ndarray
        Constant factors.
    g : numpy.ndarray of int
        Flat index into ``v`` of each element; -1 where the element does not involve ``v``.
    p : numpy.ndarray
        Exponents (0 where ``g`` is -1).
    """

    latent: str
    c: np.ndarray
    g: np.ndarray
    p: np.ndarray

    @property
    def shape(self) -> tuple:
        """Shape of the expression."""
        return self.c.shape


def _op_label(node) -> str:
    """A short name for a node's op, for messages (``Exp``, ``Dot``, ``Sigmoid``)."""
    op = node.op
    scalar = getattr(op, "scalar_op", None)
    if scalar is not None:
        return type(scalar).__name__
    core = getattr(op, "core_op", None)
    if core is not None:
        return type(core).__name__
    return type(op).__name__


def _pad(a: np.ndarray, ndim: int, trailing: int = 0) -> np.ndarray:
    """``a`` with leading axes of length 1 so that it has ``ndim`` + ``trailing`` axes."""
    missing = ndim + trailing - a.ndim
    return a.reshape((1,) * missing + a.shape) if missing > 0 else a


def _broadcast_coef(coef: np.ndarray, shape: tuple) -> np.ndarray:
    """Coefficients of shape ``s + (d,)`` broadcast to ``shape + (d,)``."""
    d = coef.shape[-1]
    return np.broadcast_to(_pad(coef, len(shape), 1), shape + (d,))


def _is_identity(m: np.ndarray) -> bool:
    return m.ndim == 2 and m.shape[0] == m.shape[1] and np.array_equal(m, np.eye(m.shape[0]))


class _Classes:
    """The PyTensor classes the reader dispatches on, imported once."""

    def __init__(self):
        from pytensor.compile import ops as compile_ops
        from pytensor.compile.builders import OpFromGraph
        from pytensor.graph.basic import Constant
        from pytensor.scalar import basic as ps
        from pytensor.tensor import basic as ptb
        from pytensor.tensor import extra_ops, subtensor
        from pytensor.tensor.blockwise import Blockwise
        from pytensor.tensor.elemwise import DimShuffle, Elemwise
        from pytensor.tensor.math import Dot, Sum
        from pytensor.tensor.random.op import RandomVariable
        from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
        from pytensor.tensor.sharedvar import TensorSharedVariable

        self.constant, self.shared = Constant, TensorSharedVariable
        self.random_variable = RandomVariable
        self.elemwise, self.blockwise, self.dot, self.sum = Elemwise, Blockwise, Dot, Sum
        self.op_from_graph = OpFromGraph
        self.cumop = extra_ops.CumOp
        self.shape_ops = (Shape, Shape_i)
        self.ps = ps
        # ops that only move elements: which of their inputs carry data
        first = (DimShuffle, subtensor.Subtensor, subtensor.AdvancedSubtensor, Reshape,
                 SpecifyShape, ptb.Alloc,
                 compile_ops.ViewOp, compile_ops.DeepCopyOp, ptb.ExtractDiag,
                 extra_ops.Repeat, ptb.TensorFromScalar, ptb.ScalarFromTensor)
        self.gather_first = first
        self.gather_all = (ptb.MakeVector,)
        self.gather_join = (ptb.Join,)
        self.set_subtensor = (subtensor.IncSubtensor, subtensor.AdvancedIncSubtensor)


@cache
def _classes() -> _Classes:
    return _Classes()


class FormReader:
    """Read expressions of one PyMC model as constants, affine maps or monomials.

    Parameters
    ----------
    free : dict
        Free random variable -> its name.
    observed : dict
        Observed random variable -> its data (numpy array): an observed variable is the
        constant of its data wherever it appears in another variable's parameters.
    shapes : dict, optional
        Free random variable -> its shape, filled in as they become known
        (:meth:`set_shape`).
    """

    def __init__(self, free: dict, observed: dict, shapes: dict | None = None):
        self.k = _classes()
        self.free = dict(free)
        self.observed = dict(observed)
        self.shapes = dict(shapes or {})
        self._const: dict = {}

    def set_shape(self, rv, shape: tuple) -> None:
        """Record the shape of the free random variable ``rv``."""
        self.shapes[rv] = tuple(int(s) for s in shape)

    # ------------------------------------------------------------------ traversal

    def _walk(self, var, leaf, apply_node, memo: dict):
        """Post-order evaluation of ``var``: ``leaf(v)`` for leaves, ``apply_node`` for ops."""
        if var in memo:
            return memo[var]
        stack = [(var, False)]
        while stack:
            v, expanded = stack.pop()
            if v in memo:
                continue
            value = leaf(v)
            if value is not None:
                memo[v] = value
                continue
            node = v.owner
            if not expanded:
                stack.append((v, True))
                stack.extend((i, False) for i in node.inputs if i not in memo)
                continue
            outputs = apply_node(node, [memo[i] for i in node.inputs])
            for out, value in zip(node.outputs, outputs, strict=True):
                memo[out] = value
        return memo[var]

    def _root_value(self, v):
        """The value of a leaf that is data (a constant, ``pm.Data``, an observed variable)."""
        k = self.k
        if v in self.observed:
            return Const(np.asarray(self.observed[v]))
        if isinstance(v, k.constant):
            return Const(np.asarray(v.data))
        if isinstance(v, k.shared):
            return Const(np.asarray(v.get_value(borrow=True)))
        if v.owner is None:
            if v.name is None and getattr(v.type, "dtype", None) is None:
                return Const(None)  # a non-tensor input (a random generator): never read
            raise UnreadableGraph(f"the graph has a free input {v.name or v} with no value")
        return None

    def _perform(self, node, values: list) -> list:
        """Run ``node``'s op on numbers (PyTensor's Python implementation)."""
        storage = [[None] for _ in node.outputs]
        try:
            node.op.perform(node, values, storage)
        except NotImplementedError:
            return self._compiled(node, values)
        return [np.asarray(s[0]) for s in storage]

    @staticmethod
    def _compiled(node, values: list) -> list:
        """The op on numbers through a compiled function, for an op without ``perform``."""
        import pytensor
        from pytensor.compile.mode import Mode

        inputs = [i.type() for i in node.inputs]
        outputs = node.op.make_node(*inputs).outputs
        fn = pytensor.function(inputs, outputs, mode=Mode(linker="py", optimizer=None))
        result = fn(*values)
        return [np.asarray(r) for r in (result if isinstance(result, list) else [result])]

    def constant(self, var) -> np.ndarray:
        """The value of an expression that depends on no free random variable.

        Raises
        ------
        DependsOn
            When it does.
        """
        def leaf(v):
            if v in self.free:
                raise DependsOn(self.free[v])
            return self._root_value(v)

        def apply_node(node, inputs):
            return [Const(x) for x in self._perform(node, [i.value for i in inputs])]

        return self._walk(var, leaf, apply_node, self._const).value

    def stand_in(self, var) -> np.ndarray:
        """The value of ``var`` with every free random variable at 1: for its shape only."""
        def leaf(v):
            if v in self.shapes:
                return Const(np.ones(self.shapes[v]))
            if v in self.free:
                raise DependsOn(self.free[v])  # a latent whose shape is not known yet
            if v in self._const:
                return self._const[v]
            return self._root_value(v)

        def apply_node(node, inputs):
            return [Const(x) for x in self._perform(node, [i.value for i in inputs])]

        with np.errstate(all="ignore"):
            return self._walk(var, leaf, apply_node, {}).value

    # ------------------------------------------------------------------ gathers

    def _gather(self, node, values: list) -> list | None:
        """Where each element of ``node``'s output comes from, or None if the op is no gather.

        Returns the flat positions into the concatenation of the data inputs (in input
        order) and the indices of those inputs.
        """
        k = self.k
        op = node.op
        n = len(node.inputs)
        if isinstance(op, k.gather_first):
            data = [0]
        elif isinstance(op, k.gather_all):
            data = list(range(n))
        elif isinstance(op, k.gather_join):
            data = list(range(1, n))
        elif isinstance(op, k.set_subtensor) and getattr(op, "set_instead_of_inc", False):
            data = [0, 1]
        else:
            return None
        args, start = [], 0
        for i, v in enumerate(values):
            if i in data:
                size = int(np.prod(v.shape, dtype=np.int64))
                args.append(np.arange(start, start + size, dtype=np.float64).reshape(v.shape))
                start += size
            elif isinstance(v, Const):
                args.append(v.value)
            else:
                raise NotAffine(f"{_op_label(node)} with an index or shape that depends on "
                                f"a latent variable")
        positions = self._perform(node, args)[0]
        return [np.asarray(positions).astype(np.int64), data]

    # ------------------------------------------------------------------ affine

    def affine(self, var, latents: dict):
        """``var`` as :class:`Const` or :class:`Affine` in ``latents``.

        Parameters
        ----------
        var : pytensor.Variable
            The expression.
        latents : dict
            Free random variable -> name, for the latents the map may involve; each must have
            a shape (:meth:`set_shape`).

        Raises
        ------
        NotAffine, DependsOn
        """
        def leaf(v):
            if v in latents:
                shape = self.shapes[v]
                d = int(np.prod(shape, dtype=np.int64))
                return Affine(np.zeros(shape), {latents[v]: np.eye(d).reshape(shape + (d,))})
            if v in self.free:
                raise DependsOn(self.free[v])
            if v in self._const:
                return self._const[v]
            return self._root_value(v)

        return self._walk(var, leaf, self._affine_node, {})

    def _affine_node(self, node, inputs: list) -> list:
        if all(isinstance(i, Const) for i in inputs):
            return [Const(x) for x in self._perform(node, [i.value for i in inputs])]
        k = self.k
        op = node.op
        if isinstance(op, k.op_from_graph):
            return self._inline(node, inputs, self._affine_node)
        if isinstance(op, k.shape_ops):
            return [Const(x) for x in self._perform(node, [_shape_stand_in(i) for i in inputs])]
        if isinstance(op, k.elemwise):
            return [self._affine_elemwise(node, inputs)]
        if isinstance(op, k.sum):
            return [_affine_sum(inputs[0], op.axis)]
        if isinstance(op, k.cumop) and getattr(op, "mode", "add") == "add":
            return [_affine_cumsum(inputs[0], op.axis)]
        if isinstance(op, k.dot) or (isinstance(op, k.blockwise)
                                      and isinstance(op.core_op, k.dot)):
            return [_affine_matmul(node, *inputs)]
        gathered = self._gather(node, inputs)
        if gathered is not None:
            positions, data = gathered
            return [_affine_take([inputs[i] for i in data], positions)]
        raise NotAffine(_op_label(node))

    def _inline(self, node, inputs: list, apply_node) -> list:
        """An op defined by an inner graph (``OpFromGraph``, as ``pt.einsum``), read inside."""
        op = node.op
        memo = dict(zip(op.inner_inputs, inputs, strict=True))

        def leaf(v):
            return self._root_value(v)

        return [self._walk(out, leaf, apply_node, memo) for out in op.inner_outputs]

    def _affine_elemwise(self, node, inputs: list):
        ps = self.k.ps
        scalar = node.op.scalar_op
        shape = tuple(np.broadcast_shapes(*(i.shape for i in inputs)))
        forms = [i for i in inputs if not isinstance(i, Const)]
        if isinstance(scalar, ps.Add):
            return _affine_sum_of(inputs, shape)
        if isinstance(scalar, ps.Sub):
            return _affine_sum_of([inputs[0], _affine_scale(inputs[1], -1.0)], shape)
        if isinstance(scalar, ps.Neg):
            return _affine_scale(inputs[0], -1.0)
        if isinstance(scalar, ps.Mul):
            if len(forms) > 1:
                raise NotAffine("Mul of two expressions that both depend on latent variables")
            factor = np.ones(())
            for i in inputs:
                if isinstance(i, Const):
                    factor = factor * i.value
            return _affine_scale(_affine_broadcast(forms[0], shape), factor)
        if isinstance(scalar, ps.TrueDiv):
            if not isinstance(inputs[1], Const):
                raise NotAffine("TrueDiv by an expression that depends on a latent variable")
            return _affine_scale(_affine_broadcast(inputs[0], shape), 1.0 / inputs[1].value)
        if isinstance(scalar, ps.Identity) or (
                isinstance(scalar, ps.Cast) and str(scalar.o_type.dtype).startswith("float")):
            return inputs[0]
        if isinstance(scalar, ps.Second):
            return _affine_broadcast(_as_affine(inputs[1]), shape)
        if isinstance(scalar, ps.Switch):
            if not isinstance(inputs[0], Const):
                raise NotAffine("Switch on a condition that depends on a latent variable")
            return _affine_where(inputs[0].value, inputs[1], inputs[2], shape)
        raise NotAffine(type(scalar).__name__)

    # ------------------------------------------------------------------ monomial

    def monomial(self, var, latent, name: str):
        """``var`` as :class:`Const` or :class:`Monomial` in the positive latent ``latent``.

        Raises
        ------
        NotMonomial, DependsOn
        """
        shape = self.shapes[latent]
        size = int(np.prod(shape, dtype=np.int64))
        memo = {latent: Monomial(name, np.ones(shape), np.arange(size).reshape(shape),
                                 np.ones(shape))}

        def leaf(v):
            if v in self.free:
                raise DependsOn(self.free[v])
            if v in self._const:
                return self._const[v]
            return self._root_value(v)

        return self._walk(var, leaf, self._monomial_node, memo)

    def _monomial_node(self, node, inputs: list) -> list:
        if all(isinstance(i, Const) for i in inputs):
            return [Const(x) for x in self._perform(node, [i.value for i in inputs])]
        k = self.k
        op = node.op
        if isinstance(op, k.op_from_graph):
            return self._inline(node, inputs, self._monomial_node)
        if isinstance(op, k.shape_ops):
            return [Const(x) for x in self._perform(node, [_shape_stand_in(i) for i in inputs])]
        if isinstance(op, k.elemwise):
            return [self._monomial_elemwise(node, inputs)]
        try:
            gathered = self._gather(node, inputs)
        except NotAffine as exc:
            raise NotMonomial(str(exc)) from None
        if gathered is not None:
            positions, data = gathered
            return [_monomial_take([inputs[i] for i in data], positions)]
        raise NotMonomial(_op_label(node))

    def _monomial_elemwise(self, node, inputs: list):
        ps = self.k.ps
        scalar = node.op.scalar_op
        shape = tuple(np.broadcast_shapes(*(i.shape for i in inputs)))
        latent = next(i.latent for i in inputs if isinstance(i, Monomial))
        monos = [_as_monomial(i, latent, shape) for i in inputs]
        if isinstance(scalar, ps.Mul):
            out = monos[0]
            for m in monos[1:]:
                out = _monomial_product(out, m)
            return out
        if isinstance(scalar, ps.TrueDiv):
            return _monomial_product(monos[0], _monomial_power(monos[1], -1.0))
        if isinstance(scalar, ps.Reciprocal):
            return _monomial_power(monos[0], -1.0)
        if isinstance(scalar, ps.Sqrt):
            return _monomial_power(monos[0], 0.5)
        if isinstance(scalar, ps.Sqr):
            return _monomial_power(monos[0], 2.0)
        if isinstance(scalar, ps.Pow):
            if not isinstance(inputs[1], Const):
                raise NotMonomial("Pow with an exponent that depends on a latent variable")
            return _monomial_power(monos[0], np.broadcast_to(inputs[1].value, shape))
        if isinstance(scalar, ps.Neg):
            m = monos[0]
            return Monomial(m.latent, -m.c, m.g, m.p)
        if isinstance(scalar, ps.Abs):  # the latent is positive
            m = monos[0]
            return Monomial(m.latent, np.abs(m.c), m.g, m.p)
        if isinstance(scalar, ps.Sign):  # the latent is positive: the sign of c
            return Const(np.sign(monos[0].c))
        if isinstance(scalar, ps.Identity) or (
                isinstance(scalar, ps.Cast) and str(scalar.o_type.dtype).startswith("float")):
            return inputs[0]
        if isinstance(scalar, ps.Second):
            return monos[1]
        raise NotMonomial(type(scalar).__name__)


def _shape_stand_in(value):
    """An array of the shape of ``value`` (for ops that read only shapes)."""
    return value.value if isinstance(value, Const) else np.zeros(value.shape)


# ---------------------------------------------------------------------- affine arithmetic


def _as_affine(value) -> Affine:
    if isinstance(value, Affine):
        return value
    return Affine(np.asarray(value.value, dtype=np.float64), {})


def _affine_broadcast(value, shape: tuple) -> Affine:
    a = _as_affine(value)
    if a.shape == shape:
        return a
    return Affine(np.broadcast_to(_pad(a.offset, len(shape)), shape),
                  {k: _broadcast_coef(c, shape) for k, c in a.coefs.items()})


def _affine_sum_of(values: list, shape: tuple) -> Affine:
    offset = np.zeros(shape)
    coefs: dict = {}
    for v in values:
        a = _as_affine(v)
        offset = offset + _pad(a.offset, len(shape))
        for k, c in a.coefs.items():
            c = _broadcast_coef(c, shape)
            coefs[k] = coefs[k] + c if k in coefs else c
    return Affine(np.broadcast_to(offset, shape), coefs)


def _affine_scale(value, factor) -> Affine:
    a = _as_affine(value)
    factor = np.asarray(factor, dtype=np.float64)
    shape = tuple(np.broadcast_shapes(a.shape, factor.shape))
    a = _affine_broadcast(a, shape)
    f = _pad(factor, len(shape))
    return Affine(a.offset * f, {k: c * f[..., None] for k, c in a.coefs.items()})


def _affine_where(cond, x, y, shape: tuple) -> Affine:
    x, y = _affine_broadcast(x, shape), _affine_broadcast(y, shape)
    cond = np.broadcast_to(_pad(np.asarray(cond, dtype=bool), len(shape)), shape)
    coefs = {}
    for k in {*x.coefs, *y.coefs}:
        d = (x.coefs.get(k) if k in x.coefs else y.coefs[k]).shape[-1]
        cx = x.coefs.get(k, np.zeros(shape + (d,)))
        cy = y.coefs.get(k, np.zeros(shape + (d,)))
        coefs[k] = np.where(cond[..., None], cx, cy)
    return Affine(np.where(cond, x.offset, y.offset), coefs)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in np.atleast_1d(axis).tolist())


def _affine_sum(value, axis) -> Affine:
    a = _as_affine(value)
    axes = _axes(axis, a.offset.ndim)
    return Affine(np.sum(a.offset, axis=axes), {k: np.sum(c, axis=axes)
                                                for k, c in a.coefs.items()})


def _affine_cumsum(value, axis) -> Affine:
    a = _as_affine(value)
    if axis is None:
        size = a.offset.size
        a = Affine(a.offset.reshape(size), {k: c.reshape(size, c.shape[-1])
                                            for k, c in a.coefs.items()})
        axis = 0
    axis = axis % a.offset.ndim
    return Affine(np.cumsum(a.offset, axis=axis), {k: np.cumsum(c, axis=axis)
                                                   for k, c in a.coefs.items()})


def _affine_take(values: list, positions: np.ndarray) -> Affine:
    """Gather the elements at flat ``positions`` of the concatenated ``values``."""
    forms = [_as_affine(v) for v in values]
    if len(forms) == 1 and positions.size == forms[0].offset.size and np.array_equal(
            positions.reshape(-1), np.arange(positions.size)):  # a reshape: no copy
        f = forms[0]
        return Affine(f.offset.reshape(positions.shape),
                      {k: c.reshape(positions.shape + (c.shape[-1],)) for k, c in
                       f.coefs.items()})
    offset = np.concatenate([f.offset.reshape(-1) for f in forms])
    coefs = {}
    for k in dict.fromkeys(k for f in forms for k in f.coefs):
        d = next(f.coefs[k].shape[-1] for f in forms if k in f.coefs)
        flat = np.concatenate([f.coefs[k].reshape(-1, d) if k in f.coefs
                               else np.zeros((f.offset.size, d)) for f in forms])
        coefs[k] = flat[positions]
    return Affine(offset[positions], coefs)


def _matmul_const_left(a: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``a @ F`` for coefficients of F shaped ``(..., k, m, d)``: ``(..., n, m, d)``."""
    if a.ndim == 2:
        k = coef.shape[-3]
        moved = np.moveaxis(coef, -3, 0)
        rest = moved.shape[1:]
        flat = moved.reshape(k, -1)
        prod = a.copy() if _is_identity(flat) else a @ flat
        return np.moveaxis(prod.reshape((a.shape[0],) + rest), 0, -3)
    moved = np.moveaxis(coef, -1, 0)  # (d, ..., k, m)
    return np.moveaxis(np.matmul(a, moved), 0, -1)


def _matmul_const_right(coef: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``F @ b`` for coefficients of F shaped ``(..., n, k, d)``: ``(..., n, m, d)``."""
    moved = np.moveaxis(coef, -1, -2)  # (..., n, d, k)
    return np.moveaxis(np.matmul(moved, b), -1, -2)


def _affine_matmul(node, x, y) -> Affine:
    if not isinstance(x, Const) and not isinstance(y, Const):
        raise NotAffine(f"{_op_label(node)} of two expressions that both depend on latent "
                        f"variables")
    if isinstance(x, Const):
        a = np.asarray(x.value, dtype=np.float64)
        f = _as_affine(y)
        if f.offset.ndim == 1:  # (..., n, k) @ (k,)
            left = lambda c: np.matmul(a, c)  # noqa: E731
        elif a.ndim == 1:  # (k,) @ (..., k, m)
            left = lambda c: np.einsum("k,...kmd->...md", a, c)  # noqa: E731
        else:
            left = lambda c: _matmul_const_left(a, c)  # noqa: E731
        return Affine(np.matmul(a, f.offset), {k: left(c) for k, c in f.coefs.items()})
    b = np.asarray(y.value, dtype=np.float64)
    f = _as_affine(x)
    if f.offset.ndim == 1:  # (k,) @ (..., k, m)
        right = lambda c: np.einsum("kd,...km->...md", c, b)  # noqa: E731
    elif b.ndim == 1:  # (..., n, k) @ (k,)
        right = lambda c: np.einsum("...nkd,k->...nd", c, b)  # noqa: E731
    else:
        right = lambda c: _matmul_const_right(c, b)  # noqa: E731
    return Affine(np.matmul(f.offset, b), {k: right(c) for k, c in f.coefs.items()})


# ---------------------------------------------------------------------- monomial arithmetic


def _as_monomial(value, latent: str, shape: tuple) -> Monomial:
    if isinstance(value, Monomial):
        m = value
    else:
        c = np.asarray(value.value, dtype=np.float64)
        m = Monomial(latent, c, np.full(c.shape, -1, dtype=np.int64), np.zeros(c.shape))
    if m.latent != latent:
        raise NotMonomial(f"a product of {m.latent} and {latent}")
    if m.shape != shape:
        m = Monomial(latent, np.broadcast_to(_pad(m.c, len(shape)), shape),
                     np.broadcast_to(_pad(m.g, len(shape)), shape),
                     np.broadcast_to(_pad(m.p, len(shape)), shape))
    return m


def _monomial_product(x: Monomial, y: Monomial) -> Monomial:
    both = (x.g >= 0) & (y.g >= 0)
    if np.any(both & (x.g != y.g)):
        raise NotMonomial(f"a product of two different elements of {x.latent}")
    p = x.p + y.p
    g = np.where(x.g >= 0, x.g, y.g)
    g = np.where(p == 0, -1, g)
    return Monomial(x.latent, x.c * y.c, g, p)


def _monomial_power(m: Monomial, k) -> Monomial:
    k = np.asarray(k, dtype=np.float64)
    if np.any((m.c < 0) & (k != np.round(k))):
        raise NotMonomial("a fractional power of a negative factor")
    with np.errstate(divide="ignore"):
        c = np.power(m.c, k)
    p = m.p * k
    return Monomial(m.latent, c, np.where(p == 0, -1, m.g), p)


def _monomial_take(values: list, positions: np.ndarray) -> Monomial:
    latent = next(v.latent for v in values if isinstance(v, Monomial))
    monos = [_as_monomial(v, latent, v.shape) for v in values]
    c = np.concatenate([m.c.reshape(-1) for m in monos])
    g = np.concatenate([m.g.reshape(-1) for m in monos])
    p = np.concatenate([m.p.reshape(-1) for m in monos])
    return Monomial(latent, c[positions], g[positions], p[positions])
