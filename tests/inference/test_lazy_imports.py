"""nutpie imported without arviz_plots, matplotlib and Numba; its Numba path still works.

Each probe runs in a fresh interpreter: in the test process nutpie may already be imported
the ordinary way, and then :func:`bayescheck.inference.lazy_imports.import_nutpie` has nothing to do.
"""

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bayescheck.inference.lazy_imports import frames_without_source

ROOT = Path(__file__).resolve().parents[2]


def _probe(code: str, timeout: int = 300) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


IMPORT_PROBE = """
import json, sys
from bayescheck.inference.lazy_imports import import_nutpie
nutpie = import_nutpie()
import arviz_base
ns = sys.modules['nutpie.sample']  # nutpie.sample is also the function's name
report = {
    'loaded': sorted(m for m in ('matplotlib', 'arviz_plots', 'numba', 'arviz')
                     if m in sys.modules),
    'from_dict_is_arviz_base': ns.arviz.from_dict is arviz_base.from_dict,
    'none_left': sorted(k for k, v in sys.modules.items() if v is None and k in ('numba', 'arviz')),
    'same_again': import_nutpie() is nutpie,
}
import arviz  # the real namespace package, not the stand-in
report['real_arviz_after'] = 'arviz_plots' in sys.modules and arviz is not ns.arviz
print('REPORT', json.dumps(report))
"""


@pytest.mark.slow
def test_import_nutpie_leaves_out_plots_and_numba():
    report = _probe(IMPORT_PROBE)
    assert report == {"loaded": [], "from_dict_is_arviz_base": True, "none_left": [],
                      "same_again": True, "real_arviz_after": True}


@pytest.mark.slow
def test_real_arviz_importable_after_and_stand_in_forwards_other_names():
    from bayescheck.inference.lazy_imports import _arviz_standin

    standin = _arviz_standin()
    import arviz_base

    assert standin.dict_to_dataset is arviz_base.dict_to_dataset
    # a name arviz_base lacks comes from the real package (arviz_stats' summary)
    import arviz

    assert standin.summary is arviz.summary
    with pytest.raises(AttributeError):
        standin.no_such_name_anywhere  # noqa: B018


NUMBA_PROBE = """
import json, sys
import numpy as np
import pymc as pm
from bayescheck.inference.lazy_imports import import_nutpie
nutpie = import_nutpie()
assert 'numba' not in sys.modules
with pm.Model() as model:
    pm.Normal('mu', 1.0, 2.0)
compiled = nutpie.compile_pymc_model(model)  # nutpie's own Numba path
trace = nutpie.sample(compiled, chains=2, cores=1, draws=300, tune=300, seed=1,
                      progress_bar=False)
draws = trace.posterior['mu'].values.ravel()
print('REPORT', json.dumps({'kind': type(compiled).__name__, 'mean': float(draws.mean()),
                            'sd': float(draws.std()), 'n': int(draws.size)}))
"""


@pytest.mark.nuts
def test_numba_path_works_after_the_lazy_import():
    report = _probe(NUMBA_PROBE, timeout=600)
    assert report["kind"] == "CompiledPyMCModel"
    # N(1, 2): 600 draws; the mean within 5 MCSEs (ESS at least ~150 for this target)
    assert abs(report["mean"] - 1.0) < 5 * 2.0 / 150 ** 0.5
    assert 1.6 < report["sd"] < 2.4


def test_frames_without_source_restores_inspect_stack():
    real = inspect.stack
    with frames_without_source():
        frames = inspect.stack()
        assert inspect.stack is not real
    assert inspect.stack is real
    here = frames[0]
    assert here.filename == __file__ and here.function.startswith("test_frames")
    assert here.code_context is None


def test_frames_without_source_restores_on_error():
    real = inspect.stack
    with pytest.raises(RuntimeError), frames_without_source():
        raise RuntimeError("inside")
    assert inspect.stack is real


@pytest.mark.slow
def test_a_nutpie_the_stand_ins_cannot_import_falls_back_to_a_plain_import():
    from unittest import mock

    import bayescheck.inference.lazy_imports as lazy

    calls = []
    real = lazy.importlib.import_module

    def import_module(name, package=None):
        if name == "nutpie":
            calls.append(name)
            if len(calls) == 1:
                raise ImportError("this nutpie needs numba at import")
        return real(name, package)

    saved = {k: v for k, v in sys.modules.items() if k == "nutpie" or k.startswith("nutpie.")}
    for k in saved:
        del sys.modules[k]
    try:
        with mock.patch.object(lazy.importlib, "import_module", import_module):
            nutpie = lazy.import_nutpie()
        assert calls == ["nutpie", "nutpie"]
        assert hasattr(nutpie, "compile_pymc_model")
        assert sys.modules.get("numba", "absent") is not None  # the refusal was undone
    finally:
        sys.modules.update(saved)
