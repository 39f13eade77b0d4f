"""The precompiled header of PyTensor's C modules: built once, used by GCC, never wrong."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter: settle the header, compile a small function on the C path with
# invalid precompiled headers made an error, and ask GCC (-H) which headers a module with
# PyTensor's own flags (and PyMC's, added at its import) reads. GCC marks a precompiled
# header it uses with "!" and one it finds but cannot use with "x".
_PROBE = r"""
import json, subprocess, sys
import numpy as np, pymc, pytensor, pytensor.tensor as pt
from pytensor.link.c.cmodule import GCC_compiler
import os
from inference import pytensor_pch
from inference.pytensor_setup import c_mode
if os.environ.get("PROBE_MISSING_HEADER"):  # a header that cannot be built
    pytensor_pch.HEADERS = (*pytensor_pch.HEADERS, "no/such/header.h")
mode = c_mode()
added = pytensor_pch.settle_precompiled_header()
pytensor.config.gcc__cxxflags += " -Werror=invalid-pch"
x = pt.dvector("x")
f = pytensor.function([x], [pt.exp(x).sum() * pt.log1p(x)], mode=mode)
value = f(np.array([0.5, 2.0]))[0]
expected = np.exp([0.5, 2.0]).sum() * np.log1p([0.5, 2.0])
extra = sys.argv[1:]
source = "probe.cpp"
open(source, "w").write("#include <Python.h>\n#include <numpy/arrayobject.h>\n")
command = [pytensor.config.cxx, "-g", *pytensor_pch._LINKER_FLAGS,
           *GCC_compiler.compile_args(), *extra,
           *(f"-I{d}" for d in pytensor_pch._include_dirs()), "-fvisibility=hidden",
           "-H", "-fsyntax-only", source]
seen = subprocess.run(command, capture_output=True, text=True).stderr
used = [line for line in seen.splitlines() if line.endswith("Python.h.gch")]
print(json.dumps({"added": added, "same": bool(np.allclose(value, expected, rtol=1e-15)),
                  "used": used}))
"""


def _probe(tmp_path: Path, *extra: str, env: dict | None = None) -> dict:
    environment = dict(os.environ, PYTHONPATH=str(ROOT),
                       PYTENSOR_FLAGS=f"base_compiledir={tmp_path / 'compiledir'}")
    environment.update(env or {})
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _PROBE, *extra],
                          env=environment, cwd=tmp_path, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # three interpreters importing PyTensor, one building the header: ~12 s
def test_the_header_is_built_once_and_gcc_uses_it(tmp_path):
    first = _probe(tmp_path)
    headers = list((tmp_path / "compiledir").glob("*/bayescheck-pch/*/Python.h.gch"))
    assert len(headers) == 1
    assert first["added"] == ["-g0", f"-I{headers[0].parent}"]
    assert first["same"]
    # GCC read the precompiled header ("!"), with the flags PyTensor compiles modules with
    assert len(first["used"]) == 1 and first["used"][0].startswith("! "), first["used"]
    built = headers[0].stat().st_mtime_ns

    second = _probe(tmp_path)
    assert second == first and headers[0].stat().st_mtime_ns == built  # not built again

    # The probe can fail: with a code-generation flag the header was not built with, GCC
    # finds it and refuses it ("x"), and goes on to the real Python.h.
    refused = _probe(tmp_path, "-fno-PIC")
    assert len(refused["used"]) == 1 and refused["used"][0].startswith("x "), refused["used"]


@pytest.mark.slow  # two interpreters importing PyTensor: about 6 s
def test_no_header_when_turned_off_or_when_it_does_not_compile(tmp_path):
    off = _probe(tmp_path, env={"BAYESCHECK_PCH": "0"})
    assert off["added"] == [] and off["same"] and off["used"] == []
    assert not list((tmp_path / "compiledir").glob("*/bayescheck-pch"))

    # A header that does not compile: the failure is recorded for its key, nothing is
    # added, and the function still compiles (without it) and computes the same.
    broken = _probe(tmp_path, env={"PROBE_MISSING_HEADER": "1"})
    assert broken["added"] == [] and broken["same"] and broken["used"] == []
    failed = list((tmp_path / "compiledir").glob("*/bayescheck-pch/*/failed"))
    assert len(failed) == 1 and "no/such/header.h" in failed[0].read_text()
    assert not list((tmp_path / "compiledir").glob("*/bayescheck-pch/*/Python.h.gch"))
