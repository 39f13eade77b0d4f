"""The wheel is the product: built, installed (not editable) into a fresh venv, and run.

The installed distribution must hold exactly one top-level import name, ``bayescheck``, with
every subpackage and the examples, and must work from a folder that has ``models/``,
``inference/`` and ``reports/`` packages of its own (a user's project), which must not shadow
ours.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.nuts]

ROOT = Path(__file__).resolve().parents[2]


def _run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"),
          str(ROOT)])
    (wheel,) = (tmp / "dist").glob("bayescheck-*.whl")
    _run([sys.executable, "-m", "venv", str(tmp / "venv")])
    python = tmp / "venv" / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(wheel)])
    return wheel, python


def test_the_wheel_holds_one_top_level_name_and_every_package(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"bayescheck", wheel.name.split("-py3")[0]
                                                + ".dist-info"}
    # every folder of the source tree with Python modules is in the wheel
    for folder in ("models", "inference", "reports"):
        for source in (ROOT / folder).rglob("*.py"):
            if "__pycache__" not in source.parts:
                assert f"bayescheck/{source.relative_to(ROOT).as_posix()}" in names, source
    assert "bayescheck/examples/beta_bernoulli/coin.toml" in names


def test_installed_commands_run_beside_a_users_own_models_package(installed, tmp_path):
    _, python = installed
    work = tmp_path / "project"
    for name in ("models", "inference", "reports"):
        (work / name).mkdir(parents=True)
        (work / name / "__init__.py").write_text(f"raise SystemExit('the user\\'s {name} was "
                                                 f"imported instead of bayescheck\\'s')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    located = _run([str(python), "-c", "import bayescheck, bayescheck.reports.cli as c; "
                    "print(bayescheck.__file__); print(c.__file__)"], cwd=work, env=env)
    assert all("site-packages" in line for line in located.stdout.split())
    spec = Path(located.stdout.split()[0]).parent / "examples" / "beta_bernoulli" / "coin.toml"
    command = python.parent / "bayescheck"
    _run([str(command), "fit", str(spec), "--out", "fitted"], cwd=work, env=env)
    posterior = json.loads((work / "fitted" / "posterior.json").read_text())
    assert posterior["model"] == "beta_bernoulli"
    _run([str(command), "check", str(spec), "--out", "checked", "--draws", "500"], cwd=work,
         env=env)
    assert json.loads((work / "checked" / "summary.json").read_text())["verdict"] == "pass"
