"""PyTensor's BLAS flags remembered between processes, and the C path's compile mode."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference import pytensor_setup

ROOT = Path(__file__).resolve().parents[2]


def _fresh_interpreter(code: str, compiledir: Path, extra_flags: str = "") -> dict:
    """Run ``code`` in a new interpreter on ``compiledir``; the JSON of its last line."""
    flags = f"base_compiledir={compiledir}" + (f",{extra_flags}" if extra_flags else "")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTENSOR_FLAGS=flags)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _flags_in_new_process(compiledir: Path, extra_flags: str = "") -> dict:
    """``settle_blas_ldflags`` in a fresh interpreter: its answer and whether it searched."""
    code = (
        "import json, pytensor\n"
        "from pytensor.link.c import cmodule\n"
        "searched = []\n"
        "real = cmodule.default_blas_ldflags\n"
        "def counted():\n"
        "    searched.append(1)\n"
        "    return real()\n"
        "pytensor.config._config_var_dict['blas__ldflags']._default = counted\n"
        "from inference.pytensor_setup import settle_blas_ldflags\n"
        "flags = settle_blas_ldflags()\n"
        "print(json.dumps({'flags': flags, 'searched': len(searched),\n"
        "                  'config': pytensor.config.blas__ldflags}))\n")
    return _fresh_interpreter(code, compiledir, extra_flags)


@pytest.mark.slow  # three interpreters importing PyTensor: about 6 s
def test_blas_flags_are_searched_once_and_a_users_value_wins(tmp_path):
    first = _flags_in_new_process(tmp_path)
    second = _flags_in_new_process(tmp_path)
    assert first["searched"] == 1 and second["searched"] == 0
    assert first["flags"] == second["flags"] == second["config"]
    cached = list(tmp_path.glob(f"*/{pytensor_setup.BLAS_CACHE_NAME}"))
    assert len(cached) == 1 and list(json.loads(cached[0].read_text()).values()) == [
        first["flags"]]
    users = _flags_in_new_process(tmp_path, "blas__ldflags=-lmy_blas")
    assert users == {"flags": "-lmy_blas", "searched": 0, "config": "-lmy_blas"}


def test_the_blas_key_follows_the_library_search_path(monkeypatch):
    key = pytensor_setup.blas_key()
    assert pytensor_setup.blas_key() == key
    monkeypatch.setenv("LD_LIBRARY_PATH", "/somewhere/else")
    assert pytensor_setup.blas_key() != key


def test_the_c_mode_computes_what_numpy_does():
    """A matrix-vector product and its gradient, as the regression's log density has them.

    Without a BLAS library the product must not become the Python ``Gemv`` (the mode leaves
    that rewrite out); with one, nothing is left out.
    """
    import pytensor
    import pytensor.tensor as pt

    x = np.linspace(-1.0, 1.0, 40).reshape(20, 2)
    y = np.sin(np.arange(20.0))
    w = pt.dvector("w")
    logp = -0.5 * pt.sum((y - pt.as_tensor(x) @ w) ** 2)
    f = pytensor.function([w], [logp, pytensor.grad(logp, w)], mode=pytensor_setup.c_mode())
    point = np.array([0.3, -0.7])
    for _ in range(3):  # buffers reused between calls (no garbage collection of them)
        value, gradient = f(point)
        residual = y - x @ point
        assert np.isclose(value, -0.5 * residual @ residual)
        assert np.allclose(gradient, x.T @ residual)
    ops = {type(node.op).__name__ for node in f.maker.fgraph.apply_nodes}
    if not pytensor.config.blas__ldflags:
        assert "Gemv" not in ops


def test_the_counts_of_a_categorical_likelihood_are_folded_once():
    """``sum(log(p)[codes])``'s gradient increments ones into zeros at the codes: a constant.

    The C mode folds it (no ``AdvancedIncSubtensor`` left to run at each call) and gives
    the values the plain ``CVM`` mode gives.
    """
    import pytensor
    import pytensor.tensor as pt

    codes = np.array([0, 2, 2, 1, 0, 2, 3])
    logits = pt.tensor("logits", dtype="float64", shape=(4,))  # static, as PyMC declares
    p = pt.special.softmax(logits)
    logp = pt.sum(pt.log(p)[codes])
    outputs = [logp, pytensor.grad(logp, logits)]
    folded = pytensor.function([logits], outputs, mode=pytensor_setup.c_mode())
    plain = pytensor.function([logits], outputs, mode="CVM")
    ops = {type(node.op).__name__ for node in folded.maker.fgraph.apply_nodes}
    assert "AdvancedIncSubtensor" not in ops
    assert "AdvancedIncSubtensor" in {type(n.op).__name__
                                      for n in plain.maker.fgraph.apply_nodes}
    for point in (np.zeros(4), np.array([0.3, -1.0, 2.0, 0.1])):
        for got, want in zip(folded(point), plain(point), strict=True):
            assert np.allclose(got, want, rtol=1e-13, atol=0)
        counts = np.bincount(codes, minlength=4)
        assert np.allclose(folded(point)[1], counts - codes.size * np.exp(point) /
                           np.exp(point).sum())


def _march_in_new_process(compiledir: Path, extra_flags: str = "") -> dict:
    """``settle_march_flags`` in a fresh interpreter: its answer and whether PyTensor tested."""
    code = (
        "import json, pytensor\n"
        "from pytensor.link.c import cmodule\n"
        "tested = []\n"
        "real = cmodule.try_march_flag\n"
        "def counted(flags):\n"
        "    tested.append(1)\n"
        "    return real(flags)\n"
        "cmodule.try_march_flag = counted\n"
        "from inference.pytensor_setup import settle_march_flags\n"
        "flags = settle_march_flags()\n"
        "args = cmodule.GCC_compiler.compile_args()\n"
        "print(json.dumps({'flags': flags, 'tested': len(tested),\n"
        "                  'in_args': flags is not None and all(f in args for f in flags)}))\n")
    return _fresh_interpreter(code, compiledir, extra_flags)


@pytest.mark.slow  # three interpreters importing PyTensor, one g++ test program: about 6 s
def test_march_flags_are_detected_once_and_a_users_march_wins(tmp_path):
    first = _march_in_new_process(tmp_path)
    second = _march_in_new_process(tmp_path)
    assert first["tested"] >= 1 and second["tested"] == 0
    assert first["flags"] == second["flags"] and first["in_args"] and second["in_args"]
    cached = list(tmp_path.glob(f"*/{pytensor_setup.MARCH_CACHE_NAME}"))
    assert len(cached) == 1 and list(json.loads(cached[0].read_text()).values()) == [
        first["flags"]]
    users = _march_in_new_process(tmp_path, "gcc__cxxflags=-march=x86-64")
    assert users == {"flags": None, "tested": 0, "in_args": False}


def test_the_march_key_follows_the_processor_and_the_compiler_flags(monkeypatch):
    key = pytensor_setup.march_key()
    assert pytensor_setup.march_key() == key
    monkeypatch.setattr(pytensor_setup, "_processor", lambda: ["another processor"])
    assert pytensor_setup.march_key() != key
    monkeypatch.undo()
    import pytensor

    monkeypatch.setattr(pytensor.config, "gcc__cxxflags", "-O1")
    assert pytensor_setup.march_key() != key


def test_the_processor_is_read_from_proc_cpuinfo():
    found = pytensor_setup._processor()
    if os.path.exists("/proc/cpuinfo"):
        assert any(item.startswith(("model name=", "flags=", "Features=")) for item in found)


def _fold_diag(values):
    """Constant-fold ``diag(values) * 2`` (an ``AllocDiag``: an op with an inner graph)."""
    import pytensor.tensor as pt
    from pytensor.graph.rewriting.utils import rewrite_graph

    folded = rewrite_graph(pt.diag(pt.constant(values)) * 2.0, include=("canonicalize",))
    return folded


@pytest.mark.parametrize("without_c", [True, False])
def test_constant_folding_of_an_inner_graph_compiles_no_c(monkeypatch, without_c):
    from pytensor.graph.basic import Constant
    from pytensor.link.c.cmodule import ModuleCache
    from pytensor.tensor.rewriting.basic import unconditional_constant_folding as folding

    monkeypatch.setattr(folding, "fn", folding.fn)  # whatever happens here is undone after
    assert pytensor_setup.fold_inner_graphs_in_python()
    if not without_c:  # the negative control: PyTensor's own linking of the inner graph
        monkeypatch.setattr(folding, "fn", folding.fn.original)
    modules = []
    real = ModuleCache.module_from_key
    monkeypatch.setattr(ModuleCache, "module_from_key",
                        lambda self, *a, **k: modules.append(1) or real(self, *a, **k))
    values = np.array([1.5, -2.0, 3.25]) + (0.0 if without_c else 1.0)
    folded = _fold_diag(values)
    assert isinstance(folded, Constant) and np.array_equal(folded.data, np.diag(values) * 2.0)
    assert (modules == []) is without_c  # C modules were looked up only without the change


def test_folding_without_c_leaves_other_python_linking_alone(monkeypatch):
    # A scan's gradient in FAST_COMPILE (its inner graph linked for impl="py", outside
    # constant folding) must give what the C path gives, after the change as before.
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.rewriting.basic import unconditional_constant_folding as folding

    monkeypatch.setattr(folding, "fn", folding.fn)
    assert pytensor_setup.fold_inner_graphs_in_python()
    x = pt.dvector("x")
    out = pytensor.scan(lambda x_t, acc: acc * x_t + pt.sin(acc), sequences=[x],
                        outputs_info=[pt.constant(np.float64(1.0))], return_updates=False)
    gradient = pytensor.grad(out[-1] + out.sum(), x)
    values = np.array([0.3, 1.7, -0.4, 2.2, 0.9])
    python = pytensor.function([x], gradient, mode="FAST_COMPILE")(values)
    c = pytensor.function([x], gradient, mode=pytensor_setup.c_mode())(values)
    np.testing.assert_allclose(python, c, rtol=1e-12)
