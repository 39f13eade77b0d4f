"""The precompiled header of PyTensor's C modules: built once, used by GCC, checked first."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter: settle the header, then compile a small function on the C path
# with GCC's -H added to every module's compile, which names each header it reads: "!" marks
# a precompiled header it used, "x" one it found and refused. Invalid precompiled headers
# are made an error besides. Then -H once more on a file of our own with the flags given on
# the command line (the negative control adds one the header was not built with).
_PROBE = r"""
import json, os, subprocess, sys
import numpy as np, pymc, pytensor, pytensor.tensor as pt
from pytensor.link.c import cmodule
from bayescheck.inference import pytensor_pch
from bayescheck.inference.pytensor_setup import c_mode
if os.environ.get("PROBE_MISSING_HEADER"):  # a header that cannot be built
    pytensor_pch.HEADERS = (*pytensor_pch.HEADERS, "no/such/header.h")
modules = []
real = cmodule.output_subprocess_Popen
def traced(command, *args, **kwargs):
    source = [c for c in command if str(c).endswith("mod.cpp")]
    if not source:
        return real(command, *args, **kwargs)
    done = real([*command, "-H"], *args, **kwargs)
    lines = done[1].decode().splitlines()
    op = not any(s in source[0] for s in ("lazylinker_ext", "cutils_ext"))
    modules.append([op, [l for l in lines if l.endswith("Python.h.gch")]])
    return done
cmodule.output_subprocess_Popen = traced
mode = c_mode()
added = pytensor_pch.settle_precompiled_header()
pytensor.config.gcc__cxxflags += " -Werror=invalid-pch"
x = pt.dvector("x")
f = pytensor.function([x], [pt.exp(x).sum() * pt.log1p(x) / x.shape[0]], mode=mode)
value = f(np.array([0.5, 2.0]))[0]
expected = np.exp([0.5, 2.0]).sum() * np.log1p([0.5, 2.0]) / 2
open("probe.cpp", "w").write("#include <Python.h>\n")
command = [pytensor.config.cxx, "-g", *pytensor_pch._LINKER_FLAGS,
           *cmodule.GCC_compiler.compile_args(), *sys.argv[1:],
           *(f"-I{d}" for d in pytensor_pch._include_dirs()), "-fvisibility=hidden",
           "-H", "-fsyntax-only", "probe.cpp"]
seen = subprocess.run(command, capture_output=True, text=True).stderr
print(json.dumps({"added": added, "same": bool(np.allclose(value, expected, rtol=1e-15)),
                  "modules": modules,
                  "used": [l for l in seen.splitlines() if l.endswith("Python.h.gch")]}))
"""


def _probe(tmp_path: Path, *extra: str, env: dict | None = None,
           compiledir: Path | None = None) -> dict:
    compiledir = compiledir or tmp_path / "compiledir"
    environment = dict(os.environ, PYTHONPATH=str(ROOT),
                       PYTENSOR_FLAGS=f"base_compiledir={compiledir}")
    environment.update(env or {})
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _PROBE, *extra],
                          env=environment, cwd=tmp_path, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _headers(root: Path) -> list[Path]:
    return list(root.glob("*/bayescheck-pch/*/Python.h.gch"))


DAY = 86400.0


def _aged(path: Path, age: float, data: bytes = b"x" * 100) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def _header_dir(root: Path, key: str, age: float,
                names=("Python.h.gch", "Python.h.gch.json", "in-use")) -> Path:
    for name in names:
        _aged(root / key / name, age)
    return root / key


@pytest.mark.slow  # four interpreters importing PyMC, two building the header: ~25 s
def test_the_header_is_built_once_used_for_every_op_and_checked(tmp_path):
    first = _probe(tmp_path)
    headers = _headers(tmp_path / "compiledir")
    assert len(headers) == 1
    assert first["added"] == ["-g0", f"-I{headers[0].parent}"]
    assert first["same"]
    ops = [seen for op, seen in first["modules"] if op]
    assert ops, first["modules"]  # the function compiled op modules on this empty cache
    assert all(len(seen) == 1 and seen[0].startswith("! ") for seen in ops), ops
    # and the probe with the modules' own flags agrees
    assert len(first["used"]) == 1 and first["used"][0].startswith("! "), first["used"]
    built = headers[0].stat().st_mtime_ns

    second = _probe(tmp_path)
    assert second["added"] == first["added"] and second["used"] == first["used"]
    assert second["modules"] == []  # every module was in PyTensor's cache
    assert headers[0].stat().st_mtime_ns == built  # and the header was not built again

    # The probe can fail: with a code-generation flag the header was not built with, GCC
    # finds it and refuses it ("x"), and goes on to the real Python.h.
    refused = _probe(tmp_path, "-fno-PIC")
    assert len(refused["used"]) == 1 and refused["used"][0].startswith("x "), refused["used"]

    # A header cut short (GCC would fail on it, not refuse it) is built again; building it
    # evicts another key's directory unused for a month, and a killed build's file.
    data = headers[0].read_bytes()
    headers[0].write_bytes(data[: len(data) // 2])
    stale = _header_dir(headers[0].parents[1], "0" * 20, 32 * DAY)
    killed = _aged(headers[0].parent / "building.999999999.abcdefgh.gch", 2 * 3600)
    again = _probe(tmp_path)
    assert not stale.exists() and not killed.exists()
    assert again["added"] == first["added"] and again["used"][0].startswith("! ")
    size = headers[0].stat().st_size  # a whole header again (its size varies by a few bytes
    assert size > len(data) // 2 + 1000  # with the name of the file it was built from)
    assert json.loads(headers[0].with_name("Python.h.gch.json").read_text())["size"] == size

    # And one damaged in place, its size unchanged (GCC crashes on such a file).
    data = bytearray(headers[0].read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(b ^ 0xFF for b in data[middle:middle + 64])
    headers[0].write_bytes(bytes(data))
    stamp = headers[0].stat().st_mtime_ns
    again = _probe(tmp_path)
    assert again["added"] == first["added"] and again["used"][0].startswith("! ")
    assert headers[0].stat().st_mtime_ns != stamp

    # So is one whose headers changed since (the record of one is made stale here).
    record = headers[0].with_name("Python.h.gch.json")
    recorded = json.loads(record.read_text())
    assert any(path.endswith("/Python.h") for path in recorded["headers"])
    first_header = next(iter(recorded["headers"]))
    recorded["headers"][first_header] = [0, 0]
    record.write_text(json.dumps(recorded))
    stamp = headers[0].stat().st_mtime_ns
    again = _probe(tmp_path)
    assert again["used"][0].startswith("! ") and headers[0].stat().st_mtime_ns != stamp
    assert json.loads(record.read_text())["headers"][first_header] != [0, 0]


@pytest.mark.slow  # three interpreters importing PyMC: about 12 s
def test_no_header_when_turned_off_unusable_or_when_it_does_not_compile(tmp_path):
    off = _probe(tmp_path, env={"BAYESCHECK_PCH": "0"})
    assert off["added"] == [] and off["same"] and off["used"] == []
    assert not list((tmp_path / "compiledir").glob("*/bayescheck-pch"))

    # PyTensor splits gcc__cxxflags at spaces: a compile directory with one gets no header
    # (its -I flag would be cut in two and every module would fail to compile).
    spaced = _probe(tmp_path, compiledir=tmp_path / "with space")
    assert spaced["added"] == [] and spaced["same"]
    assert not _headers(tmp_path / "with space")

    # A header that does not compile: the failure is recorded for its key, nothing is
    # added, and the function still compiles (without it) and computes the same.
    broken = _probe(tmp_path, env={"PROBE_MISSING_HEADER": "1"})
    assert broken["added"] == [] and broken["same"] and broken["used"] == []
    failed = list((tmp_path / "compiledir").glob("*/bayescheck-pch/*/failed"))
    assert len(failed) == 1 and "no/such/header.h" in failed[0].read_text()
    assert not _headers(tmp_path / "compiledir")


def test_old_header_directories_and_killed_builds_are_evicted(tmp_path, monkeypatch):
    from bayescheck.inference import pytensor_pch
    from bayescheck.models.disk_cache import MAX_AGE_SECONDS, using

    monkeypatch.setattr(pytensor_pch, "_pch_root", lambda: tmp_path)
    month = MAX_AGE_SECONDS + DAY
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    old = _header_dir(tmp_path, "old", month)  # another compiler's, flags', PyTensor's
    failed = _header_dir(tmp_path, "failed", month, names=("failed",))
    recent = _header_dir(tmp_path, "recent", month - 2 * DAY)
    busy = _header_dir(tmp_path, "busy", month)
    current = _header_dir(tmp_path, "current", month)  # the one just built
    killed = _aged(current / f"building.{dead}.abcdefgh.gch", 7200)
    building = [_aged(current / f"building.{os.getpid()}.abcdefgh.gch", 7200),
                _aged(current / f"building.{dead}.ijklmnop.h", 600)]
    with using(busy / "in-use"):  # a process that runs with it
        os.utime(busy / "in-use", (time.time() - month, time.time() - month))
        assert sorted(pytensor_pch.evict_old_headers(keep="current")) == ["failed", "old"]
    assert not old.exists() and not failed.exists() and not killed.exists()
    assert recent.exists() and busy.exists() and all(p.exists() for p in building)
    assert pytensor_pch.evict_old_headers(keep="current") == ["busy"]  # released


def test_a_process_using_a_header_holds_it_while_it_runs(tmp_path, monkeypatch):
    import types

    import pytensor
    from bayescheck.inference import pytensor_pch, pytensor_setup
    from bayescheck.models import disk_cache

    if "g++" not in os.path.basename(pytensor.config.cxx or ""):
        pytest.skip("the header is for g++")
    monkeypatch.delenv("BAYESCHECK_PCH", raising=False)
    monkeypatch.setitem(sys.modules, "pymc", sys.modules.get("pymc")
                        or types.ModuleType("pymc"))  # its flags do not matter here
    monkeypatch.setattr(pytensor_setup, "settle_march_flags", lambda: None)
    monkeypatch.setattr(pytensor.config, "gcc__cxxflags", pytensor.config.gcc__cxxflags)
    monkeypatch.setattr(pytensor_pch, "_SETTLED", None)
    monkeypatch.setattr(pytensor_pch, "_pch_root", lambda: tmp_path)
    monkeypatch.setattr(pytensor_pch, "_key", lambda command: "k")
    monkeypatch.setattr(pytensor_pch, "_is_current", lambda directory: True)
    monkeypatch.setattr(disk_cache, "_HELD", [])
    directory = _header_dir(tmp_path, "k", 2 * DAY, names=("Python.h.gch",))
    try:
        assert pytensor_pch.settle_precompiled_header() == ["-g0", f"-I{directory}"]
        assert time.time() - (directory / "in-use").stat().st_mtime < 60  # marked as used
        for path in directory.iterdir():
            os.utime(path, (0, 0))
        assert pytensor_pch.evict_old_headers() == [] and directory.exists()
    finally:
        for fd in disk_cache._HELD:
            os.close(fd)  # as when the process exits
    assert pytensor_pch.evict_old_headers() == ["k"] and not directory.exists()
