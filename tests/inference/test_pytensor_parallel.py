"""A new graph's C modules compiled side by side before PyTensor links it, with the same result."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.pytensor_parallel import compile_jobs

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter with an empty compile directory: every g++ run of an op's module is
# recorded (thread, start, end) by a spy on PyTensor's compile_str. Each scenario compiles,
# with the C path's mode, a graph of modules no other scenario shares (the constant is in the
# fused code; the dtype is in the cumulative sum's key; the sort is Python code).
_PROBE = r"""
import json, os, threading, time
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor.link.c.cmodule import GCC_compiler
from bayescheck.inference.pytensor_setup import c_mode
mode = c_mode()
calls = []
real = GCC_compiler.compile_str
def spy(module_name, src_code, *args, **kwargs):
    thread = threading.current_thread().name
    if os.environ.get("PROBE_FAIL") and thread.startswith("bayescheck-compile"):
        raise RuntimeError("an early compile that fails")
    began = time.perf_counter()
    try:
        return real(module_name, src_code, *args, **kwargs)
    finally:
        if module_name not in ("lazylinker_ext", "cutils_ext"):  # PyTensor's own, once
            calls.append([thread, began, time.perf_counter()])
GCC_compiler.compile_str = staticmethod(spy)
def scenario(jobs, constant, dtype, rank, fail=False):
    os.environ["BAYESCHECK_COMPILE_JOBS"] = str(jobs)
    os.environ["PROBE_FAIL"] = "1" if fail else ""
    x = pt.tensor("x", dtype=dtype, shape=(None,) * rank)
    y = pt.exp(x * constant) + pt.log1p(x)
    out = [y, pt.sort(x, axis=-1), pt.cumsum(x, axis=-1)]
    del calls[:]
    f = pytensor.function([x], out, mode=mode)
    value = np.linspace(0.1, 2.0, 6).reshape((2, 3) if rank == 2 else 6).astype(dtype)
    got = f(value)
    tol = 1e-6 if dtype == "float32" else 1e-14  # int32: float64 results
    same = (np.allclose(got[0], np.exp(value * constant) + np.log1p(value), rtol=tol)
            and np.array_equal(got[1], np.sort(value, axis=-1))
            and np.allclose(got[2], np.cumsum(value, axis=-1), rtol=tol))
    return {"calls": list(calls), "same": bool(same)}
out = {"parallel": scenario(2, 1.25, "float64", 1),
       "one_at_a_time": scenario(1, 1.5, "float32", 1),
       "early_compiles_fail": scenario(2, 1.75, "int32", 2, fail=True),
       "again": scenario(2, 1.25, "float64", 1)}
print(json.dumps(out))
"""


def _op_compiles(calls: list) -> tuple[list, list]:
    threads = [c for c in calls if c[0].startswith("bayescheck-compile")]
    main = [c for c in calls if not c[0].startswith("bayescheck-compile")]
    return threads, main


@pytest.mark.slow  # one interpreter, an empty compile directory, about 12 modules: ~15 s
def test_modules_are_compiled_side_by_side_and_the_function_is_the_same(tmp_path):
    staging = tmp_path / "tmp"
    staging.mkdir()
    environment = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(staging),
                       PYTENSOR_FLAGS=f"base_compiledir={tmp_path / 'compiledir'}")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _PROBE], env=environment,
                          cwd=tmp_path, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])

    threads, main = _op_compiles(result["parallel"]["calls"])
    assert result["parallel"]["same"]
    assert len(threads) >= 2 and not main  # every module compiled ahead, none by PyTensor
    # at least two g++ runs were under way at the same moment
    runs = sorted((began, end) for _, began, end in threads)
    assert any(later[0] < earlier[1] for earlier, later in zip(runs, runs[1:], strict=False))

    threads, main = _op_compiles(result["one_at_a_time"]["calls"])  # the control
    assert result["one_at_a_time"]["same"]
    assert not threads and len(main) >= 2

    threads, main = _op_compiles(result["early_compiles_fail"]["calls"])
    assert result["early_compiles_fail"]["same"]
    assert not threads and len(main) >= 2  # PyTensor's own pass compiled them all

    assert result["again"]["same"] and not result["again"]["calls"]  # all in the cache
    assert not list(staging.glob("bayescheck-compile-*"))  # no temporary directory left


@pytest.mark.parametrize("text, jobs", [("1", 1), ("3", 3), ("0", 1), ("many", 1)])
def test_the_number_of_jobs_comes_from_the_environment(monkeypatch, text, jobs):
    monkeypatch.setenv("BAYESCHECK_COMPILE_JOBS", text)
    assert compile_jobs() == jobs


def test_by_default_one_job_per_usable_core_at_most_four(monkeypatch):
    monkeypatch.delenv("BAYESCHECK_COMPILE_JOBS", raising=False)
    assert compile_jobs() == max(1, min(len(os.sched_getaffinity(0)), 4))


def test_an_interrupt_starts_no_further_compile_and_leaves_no_directory(monkeypatch, tmp_path):
    import threading
    import time

    from bayescheck.inference import pytensor_parallel

    ran, discarded, lock = [], [], threading.Lock()

    class Job:
        def __init__(self, number):
            self.number, self.module_hash = number, f"m{number}"

        def run(self):
            with lock:
                ran.append(self.number)
            if self.number == 0:
                raise KeyboardInterrupt  # Ctrl-C while the first g++ runs
            time.sleep(1.0)  # long enough for the interrupt to be seen first, even loaded
            return False

        def discard(self):
            discarded.append(self.number)

    monkeypatch.setattr(pytensor_parallel, "_missing_modules",
                        lambda order: [Job(k) for k in range(12)])
    monkeypatch.setattr(pytensor_parallel, "_claims_dir", lambda: tmp_path / "claims")
    with pytest.raises(KeyboardInterrupt):
        pytensor_parallel.precompile_nodes([], jobs=2)
    assert len(ran) <= 4  # the two running and at most a pair started meanwhile, not all 12
    assert sorted(discarded) == list(range(12))
    assert not list((tmp_path / "claims").iterdir())  # every claim released


def test_a_module_another_live_process_claimed_is_left_to_it(monkeypatch, tmp_path):
    import socket
    import subprocess as sp

    from bayescheck.inference import pytensor_parallel as pp

    monkeypatch.setattr(pp, "_claims_dir", lambda: tmp_path)
    mine = pp._claim("m1")
    assert mine is not None and pp._claim("m1") is None  # held (by this live process)
    pp._release(mine)
    assert pp._claim("m1") is not None  # released, claimed again
    gone = sp.run([sys.executable, "-c", "import os; print(os.getpid())"],
                  capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "m2").write_text(f"{socket.gethostname()} {gone}")
    assert pp._claim("m2") is not None  # its process has exited
    (tmp_path / "m3").write_text(f"another-host {os.getpid()}")
    assert pp._claim("m3") is None  # another machine's, fresh: only its age tells
    old = os.path.getmtime(tmp_path / "m3") - pp.STALE_SECONDS - 1
    os.utime(tmp_path / "m3", (old, old))
    assert pp._claim("m3") is not None  # stale


# Two processes link the same new graph at once on one empty compile directory: together
# they run each module's g++ once, as PyTensor's lock alone made them (the pool without the
# claims ran 38 g++ for 20 modules in review).
_TWIN = r"""
import json, sys, threading, time
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor.link.c.cmodule import GCC_compiler
from bayescheck.inference.pytensor_setup import c_mode
mode = c_mode()
calls = []
real = GCC_compiler.compile_str
def spy(module_name, src_code, *args, **kwargs):
    if module_name not in ("lazylinker_ext", "cutils_ext"):
        calls.append(module_name)
    return real(module_name, src_code, *args, **kwargs)
GCC_compiler.compile_str = staticmethod(spy)
x = pt.dvector("x")
m = pt.dmatrix("m")
out = [pt.exp(x * 0.5) + pt.log1p(x), pt.cumsum(x), pt.cumprod(x), pt.argmax(m, axis=0),
       pt.max(m, axis=1), m.sum(axis=0) * x[:3].sum(), pt.outer(x, x)]
while time.time() < float(sys.argv[1]):  # start together
    time.sleep(0.01)
f = pytensor.function([x, m], out, mode=mode)
got = f(np.linspace(0.1, 1.0, 5), np.arange(15.0).reshape(5, 3))
print(json.dumps({"calls": calls, "cumsum": got[1].tolist()}))
"""


@pytest.mark.slow  # two interpreters on one empty compile directory: ~8 s
def test_two_processes_compile_each_module_once_between_them(tmp_path):
    import time

    environment = dict(os.environ, PYTHONPATH=str(ROOT), BAYESCHECK_COMPILE_JOBS="2",
                       PYTENSOR_FLAGS=f"base_compiledir={tmp_path / 'compiledir'}")
    start = str(time.time() + 6.0)  # both import PyMC first, then link at the same moment
    twins = [subprocess.Popen([sys.executable, "-W", "ignore", "-c", _TWIN, start],
                              env=environment, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for twin in twins:
        out, err = twin.communicate(timeout=300)
        assert twin.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    calls = results[0]["calls"] + results[1]["calls"]
    assert len(calls) >= 4 and len(calls) == len(set(calls))  # every module once, in all
    assert results[0]["cumsum"] == results[1]["cumsum"] == np.cumsum(
        np.linspace(0.1, 1.0, 5)).tolist()


# A module that does not compile (its C code is not C), next to others compiled ahead; and a
# module that compiles with a warning, which PyTensor prints with cmodule__compilation_warning.
_BROKEN = r"""
import json, sys, threading
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.link.c.cmodule import GCC_compiler
from pytensor.link.c.op import COp
from bayescheck.inference.pytensor_setup import c_mode

class Probe(COp):
    __props__ = ("code",)
    def __init__(self, code):
        self.code = code
    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])
    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0].copy()
    def c_code(self, node, name, inputs, outputs, sub):
        return self.code.replace("@OUT", outputs[0]).replace("@IN", inputs[0])
    def c_code_cache_version(self):
        return (1,)

COPY = "Py_XDECREF(@OUT); @OUT = @IN; Py_XINCREF(@OUT);"
WARN = "\n#warning bayescheck-probe-warning\n" + COPY
mode = c_mode()
ahead = []
real = GCC_compiler.compile_str
def spy(module_name, src_code, *args, **kwargs):
    if "this is not C" in src_code or "bayescheck-probe-warning" in src_code:
        ahead.append(threading.current_thread().name.startswith("bayescheck-compile"))
    return real(module_name, src_code, *args, **kwargs)
GCC_compiler.compile_str = staticmethod(spy)
x = pt.dvector("x")
phase = sys.argv[1]
print(f"phase {phase}", flush=True)
if phase == "warning":
    pytensor.config.cmodule__compilation_warning = True
    f = pytensor.function([x], [pt.exp(x * 1.25) + pt.log1p(x), Probe(WARN)(x),
                                pt.cumsum(x)], mode=mode)
    result = bool(np.allclose(f(np.array([0.5, 2.0]))[1], [0.5, 2.0]))
else:
    try:
        pytensor.function([x], [pt.exp(x * 1.75) + pt.log1p(x), Probe("this is not C;")(x),
                                pt.cumsum(x)], mode=mode)
        result = "compiled"
    except Exception as error:
        result = type(error).__name__
sys.stdout.flush()
print(json.dumps({"result": result, "ahead": ahead}))
"""


@pytest.mark.slow  # two interpreters, an empty compile directory, a few modules: ~15 s
def test_a_module_that_does_not_compile_is_reported_once_and_warnings_are_kept(tmp_path):
    staging = tmp_path / "tmp"
    staging.mkdir()
    environment = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(staging),
                       BAYESCHECK_COMPILE_JOBS="2",
                       PYTENSOR_FLAGS=f"base_compiledir={tmp_path / 'compiledir'}")
    outputs = {}
    for phase in ("broken", "warning"):
        done = subprocess.run([sys.executable, "-W", "ignore", "-c", _BROKEN, phase],
                              env=environment, cwd=tmp_path, capture_output=True, text=True,
                              check=True)
        outputs[phase] = done.stdout + done.stderr
        outputs[phase, "json"] = json.loads(done.stdout.strip().splitlines()[-1])

    broken = outputs["broken", "json"]
    assert broken["result"] == "CompileError"
    assert broken["ahead"] == [True, False]  # compiled ahead, then by PyTensor's own pass
    assert outputs["broken"].count("You can find the C code in this temporary file") == 1
    [kept] = staging.glob("pytensor_compilation_error_*")  # and one such file, the one named
    assert str(kept) in outputs["broken"]

    warning = outputs["warning", "json"]
    assert warning["result"] is True and warning["ahead"] == [True]  # compiled ahead, once
    assert outputs["warning"].count("bayescheck-probe-warning") == 1 + 1  # source line + gcc
