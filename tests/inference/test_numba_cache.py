"""Numba's compiled nutpie model kept on disk (inference.numba_cache) and its warm-up child."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pymc as pm
import pytest
from bayescheck.inference import numba_cache, numba_warmup, nuts_budget
from bayescheck.inference.numba_cache import is_cached, model_digest, remember
from bayescheck.inference.nuts_budget import graph_size

ROOT = Path(__file__).resolve().parents[2]


def coin_model(heads=7, n=10, a=2.0):
    with pm.Model() as model:
        p = pm.Beta("p", a, 2.0)
        pm.Binomial("k", n=n, p=p, observed=heads)
    return model


def data_coin_model(heads=7):
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0)
        pm.Binomial("k", n=10, p=p, observed=pm.Data("heads", heads))
    return model


def test_the_digest_follows_shared_data_too():
    assert model_digest(data_coin_model()) == model_digest(data_coin_model())
    assert model_digest(data_coin_model(6)) != model_digest(data_coin_model())


def test_the_digest_follows_the_model_not_the_object():
    assert model_digest(coin_model()) == model_digest(coin_model())
    assert model_digest(coin_model(heads=6)) != model_digest(coin_model())  # the data
    assert model_digest(coin_model(a=3.0)) != model_digest(coin_model())  # the prior
    assert graph_size(coin_model()).exact == model_digest(coin_model())


def test_the_index_records_a_digest(tmp_path, monkeypatch):
    monkeypatch.setattr(numba_cache, "cache_dir", lambda: tmp_path)
    assert not is_cached("abc") and numba_cache.known("abc") is None
    remember("abc", True, cpu_seconds=1.5)
    assert is_cached("abc") and not is_cached("abd")
    assert numba_cache.known("abc") == {"stored": True, "cpu_seconds": 1.5}
    remember("abe", False)  # compiled, but Numba could not cache it
    assert not is_cached("abe") and numba_cache.known("abe") == {"stored": False}
    monkeypatch.setenv("BAYESCHECK_NUMBA_REUSE", "1")
    assert numba_warmup.start_warmup(coin_model(), "abe") is None  # not tried again


@pytest.mark.parametrize("reuse", ["1", "0"])
def test_a_cached_model_goes_straight_to_numba(monkeypatch, reuse, chosen_paths):
    """auto: a model whose compiled Numba model is on disk skips the C path; others do not.

    Unless ``BAYESCHECK_NUMBA_REUSE=0``: then both take the C path.
    """
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setenv("BAYESCHECK_NUMBA_REUSE", reuse)
    monkeypatch.setattr(nuts_budget, "_ABANDONED", {})
    cached = graph_size(coin_model()).exact
    monkeypatch.setattr(nuts_budget, "is_cached", lambda digest: digest == cached)
    for model in (coin_model(), coin_model(heads=3)):
        with pytest.raises(chosen_paths.stop):
            nuts_budget.sample_nutpie_budgeted(model, draws=10, tune=10, chains=1, seed=0,
                                               cores=1, progress_bar=False)
    assert chosen_paths == (["numba", "c"] if reuse == "1" else ["c", "c"])


@pytest.mark.nuts
def test_a_long_c_run_asked_to_starts_the_warm_up_and_no_other(monkeypatch,
                                                              auto_without_cache):
    started = []
    monkeypatch.setattr(nuts_budget, "start_warmup",
                        lambda model, digest: started.append(digest))
    model = coin_model()
    for min_seconds, warm_up in ((1e9, True), (0.0, False), (0.0, True)):
        monkeypatch.setattr(nuts_budget, "MIN_C_SECONDS", min_seconds)
        ran = nuts_budget.sample_nutpie_budgeted(model, draws=50, tune=50, chains=1, seed=1,
                                                 cores=1, progress_bar=False, warm_up=warm_up)
        assert ran.backend == "c"
    assert started == [graph_size(model).exact]  # only the long run that asked for it


# A process that compiles (or loads) a coin's Numba path and evaluates it through the cfunc
# nutpie calls, next to PyTensor's C-path log density and gradient of the same model.
PROBE = r"""
import ctypes, json, sys
import numpy as np, pymc as pm
from bayescheck.inference.numba_cache import compile_numba_cached
heads = int(sys.argv[1])
with pm.Model() as model:
    p = pm.Beta("p", 2.0, 2.0)
    pm.Binomial("k", n=10, p=p,
                observed=pm.Data("heads", heads) if sys.argv[2] == "data" else heads)
compiled, stored = compile_numba_cached(model)
logp_c = compiled.compiled_logp_func
dlogp = model.logp_dlogp_function(ravel_inputs=True)
dlogp.set_extra_values({})
rows = []
for x in (-1.3, 0.2, 2.5):
    point = np.array([x]); grad = np.zeros(1); value = np.zeros(())
    code = logp_c.ctypes(1, point.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                         grad.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                         value.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), None)
    ref_value, ref_grad = dlogp(point)
    rows.append([code, float(value), float(grad[0]), float(ref_value), float(ref_grad[0])])
print(json.dumps({"stored": stored, "hits": logp_c.cache_hits,
                  "expand_hits": compiled.compiled_expand_func.cache_hits,
                  "module": sys.modules[type(compiled).__module__].__name__,
                  "wrapper": logp_c._pyfunc.__module__, "rows": rows}))
"""


def probe(heads: int, observed: str = "constant") -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", PROBE, str(heads), observed],
                         capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def assert_exact(rows):
    for code, value, grad, ref_value, ref_grad in rows:
        assert code == 0
        assert value == pytest.approx(ref_value, rel=1e-13, abs=1e-13)
        assert grad == pytest.approx(ref_grad, rel=1e-13, abs=1e-13)


@pytest.mark.slow
def test_a_second_process_loads_the_compiled_model_and_a_changed_one_gets_its_own():
    first = probe(7)
    assert first["stored"]
    assert_exact(first["rows"])
    again = probe(7)
    assert again["stored"] and again["hits"] == 1 and again["expand_hits"] == 1
    assert again["wrapper"] == first["wrapper"]
    assert again["rows"] == first["rows"]
    changed = probe(3)  # other data: another PyTensor key, another module
    assert changed["wrapper"] != first["wrapper"]
    assert_exact(changed["rows"])
    # had the 7-heads model been reused, the log density would be the 7-heads one
    assert [r[1] for r in changed["rows"]] != [r[1] for r in first["rows"]]
    shared = probe(4, "data")  # pm.Data: frozen into constants, so it can be cached
    assert shared["stored"]
    assert_exact(shared["rows"])


@pytest.mark.slow
def test_the_warm_up_child_records_the_model_and_refuses_a_wrong_digest(monkeypatch):
    model = coin_model(heads=5)
    digest = model_digest(model)
    numba_cache._index_path(digest).unlink(missing_ok=True)
    monkeypatch.setenv("BAYESCHECK_NUMBA_REUSE", "1")
    wrong = "0" * 64
    try:
        child = numba_warmup.start_warmup(model, digest)
        assert child is not None
        assert numba_warmup.start_warmup(model, digest) is None  # one child per model
        assert child.wait(timeout=600) == 0
        assert is_cached(digest)
        assert numba_warmup.start_warmup(model, digest) is None  # cached: nothing to do
        lock, payload, log = numba_warmup._paths(digest)
        assert not lock.exists() and not payload.exists() and not log.exists()

        child = numba_warmup.start_warmup(model, wrong)
        assert child.wait(timeout=600) == 1
        assert not is_cached(wrong)
        assert "another digest" in numba_warmup._paths(wrong)[2].read_text()
    finally:
        numba_warmup._paths(wrong)[2].unlink(missing_ok=True)


def test_the_numba_path_falls_back_to_nutpies_own_compile(monkeypatch):
    """A failing cache (full disk, another nutpie) or a model sampled once: nutpie compiles."""
    from bayescheck.inference import nutpie_compile

    own = []

    class Module:
        @staticmethod
        def compile_pymc_model(model, **kwargs):
            own.append(model)
            return "nutpie's"

    def broken(model, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(nutpie_compile, "nutpie_compile_pymc", lambda: Module)
    monkeypatch.setattr(nutpie_compile, "compile_numba_cached", broken)
    first, second = coin_model(), coin_model(heads=2)
    assert nutpie_compile.compile_for_nutpie(first, backend="numba") == ("nutpie's", "numba")
    monkeypatch.setattr(nutpie_compile, "compile_numba_cached",
                        lambda model, **kwargs: pytest.fail("store=False must not cache"))
    assert nutpie_compile.compile_for_nutpie(second, backend="numba", store=False) == (
        "nutpie's", "numba")
    assert own == [first, second]


@pytest.mark.nuts
def test_a_failing_warm_up_start_leaves_the_run(monkeypatch, auto_without_cache):
    monkeypatch.setattr(nuts_budget, "MIN_C_SECONDS", 0.0)

    def read_only(model, digest):
        raise PermissionError("read-only compile directory")

    monkeypatch.setattr(nuts_budget, "start_warmup", read_only)
    ran = nuts_budget.sample_nutpie_budgeted(coin_model(), draws=50, tune=50, chains=1,
                                             seed=1, cores=1, progress_bar=False,
                                             warm_up=True)
    assert ran.backend == "c" and ran.trace is not None


def test_warm_up_is_off_when_asked(monkeypatch):
    monkeypatch.setenv("BAYESCHECK_NUMBA_REUSE", "0")
    assert numba_warmup.start_warmup(coin_model(), "d" * 64) is None


DAY = 86400.0


def _aged(path: Path, age: float, data: bytes = b"x" * 100) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def _wrapper_files(root: Path, name: str, age: float) -> list[Path]:
    """A model's wrapper module as the cache holds it: the module, Numba's and Python's files."""
    cached = root / "wrappers" / "__pycache__"
    return [_aged(root / "wrappers" / f"{name}.py", age),
            _aged(cached / f"{name}.build.<locals>.logp-24.py312.nbi", age),
            _aged(cached / f"{name}.build.<locals>.logp-24.py312.1.nbc", age),
            _aged(cached / f"{name}.cpython-312.pyc", age)]


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_old_models_and_killed_writes_are_evicted_fresh_and_loading_ones_kept(tmp_path,
                                                                             monkeypatch):
    from bayescheck.models.disk_cache import MAX_AGE_SECONDS, using

    monkeypatch.setattr(numba_cache, "cache_dir", lambda: tmp_path)
    month, dead = MAX_AGE_SECONDS + DAY, _dead_pid()
    old, recent, busy = (f"bayescheck_nutpie_{c * 40}" for c in "012")
    old_files = _wrapper_files(tmp_path, old, month)
    recent_files = _wrapper_files(tmp_path, recent, month - 2 * DAY)
    busy_files = _wrapper_files(tmp_path, busy, month)
    index = tmp_path / "index"
    old_entry = [_aged(index / ("a" * 64), month), _aged(index / ("a" * 64 + ".log"), month)]
    recent_entry = _aged(index / ("b" * 64), DAY)
    gone = [_aged(tmp_path / "wrappers" / f"tmp{dead}.abcdefgh.tmp", 7200),
            _aged(tmp_path / "wrappers" / "tmpabcdefgh.tmp", 7200),  # named before the pid
            _aged(tmp_path / "wrappers" / "__pycache__" / f"{old}.x.nbi.tmp.0123abcd", 7200),
            _aged(index / f"{'c' * 64}.{dead}.tmp", 7200)]
    kept = [_aged(tmp_path / "wrappers" / f"tmp{os.getpid()}.abcdefgh.tmp", 7200),
            _aged(index / f"{'d' * 64}.{dead}.tmp", 600)]
    with using(tmp_path / "wrappers" / f"{busy}.used", create=True):  # another's compile
        for path in (*busy_files, tmp_path / "wrappers" / f"{busy}.used"):
            os.utime(path, (time.time() - month, time.time() - month))
        removed = numba_cache.evict_old_entries()
    assert sorted(removed) == sorted([old, "a" * 64])
    assert not any(p.exists() for p in (*old_files, *old_entry, *gone))
    assert all(p.exists() for p in (*recent_files, *busy_files, recent_entry, *kept))


def test_a_new_index_entry_evicts_and_reading_one_marks_it(tmp_path, monkeypatch):
    from bayescheck.models.disk_cache import MAX_AGE_SECONDS

    monkeypatch.setattr(numba_cache, "cache_dir", lambda: tmp_path)
    old = _aged(tmp_path / "index" / ("a" * 64), MAX_AGE_SECONDS + DAY)
    used = _aged(tmp_path / "index" / ("b" * 64), MAX_AGE_SECONDS + DAY,
                 json.dumps({"stored": False}).encode())
    assert numba_cache.known("b" * 64) == {"stored": False}  # read: marked as used now
    remember("c" * 64, False)
    assert not old.exists() and used.exists()


def test_an_entry_whose_wrappers_were_evicted_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(numba_cache, "cache_dir", lambda: tmp_path)
    name = "bayescheck_nutpie_" + "0" * 40
    _wrapper_files(tmp_path, name, 0)
    remember("a" * 64, True, wrapper=name)
    remember("b" * 64, True)  # recorded before entries named their wrappers: trusted
    assert is_cached("a" * 64) and is_cached("b" * 64)
    (tmp_path / "wrappers" / f"{name}.py").unlink()
    assert not is_cached("a" * 64) and is_cached("b" * 64)


def test_the_wrapper_name_of_a_compiled_model():
    class Wrapped:
        pass

    def logp():
        pass

    logp.__module__ = "bayescheck_nutpie_" + "0" * 40
    compiled = Wrapped()
    compiled.compiled_logp_func = Wrapped()
    compiled.compiled_logp_func.__wrapped__ = logp
    assert numba_cache.wrapper_name(compiled) == logp.__module__
    logp.__module__ = "nutpie.compile_pymc"  # nutpie's own path: no module of ours
    assert numba_cache.wrapper_name(compiled) is None
    assert numba_cache.wrapper_name("nutpie's") is None


def test_a_new_wrapper_module_evicts_and_one_evicted_is_written_again(tmp_path, monkeypatch):
    from bayescheck.models.disk_cache import MAX_AGE_SECONDS

    monkeypatch.setattr(numba_cache, "cache_dir", lambda: tmp_path)
    old = "bayescheck_nutpie_" + "0" * 40
    old_files = _wrapper_files(tmp_path, old, MAX_AGE_SECONDS + DAY)
    module = None
    try:
        with numba_cache._wrapper_module(["k"], 1, 1) as (module, written):
            assert written and (tmp_path / "wrappers" / f"{module.__name__}.used").exists()
        assert not any(p.exists() for p in old_files)  # written: the old model evicted
        new = sorted(tmp_path.glob(f"wrappers/{module.__name__}.*"))
        assert [p.suffix for p in new] == [".py", ".used"]
        for path in new:
            os.utime(path, (0, 0))
        assert numba_cache.evict_old_entries() == [module.__name__]
        assert not any(p.exists() for p in new)
        # evicted (by another process) since this one imported it: written again
        with numba_cache._wrapper_module(["k"], 1, 1) as (again, written):
            assert written and again is module and new[0].exists()
        with numba_cache._wrapper_module(["k"], 1, 1) as (again, written):
            assert not written
    finally:
        if module is not None:
            sys.modules.pop(module.__name__, None)
