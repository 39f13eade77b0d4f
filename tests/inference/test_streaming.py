"""Streaming that loses nothing: checkpoints, resume after SIGKILL, batches fed twice."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.output_files import MANIFEST_NAME
from bayescheck.inference.families import fit
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME
from bayescheck.models import DataError, SpecError, load_spec

ROOT = Path(__file__).resolve().parents[2]

SPEC = """model = "linear_regression"
[data]
path = "batches/*.csv"
target = "y"
intercept = true
[prior]
mean = 0.0
cov = 5.0
[likelihood]
noise_sd = 0.5
"""


def make_stream(tmp_path, n_batches=6, rows=30, seed=0):
    rng = np.random.default_rng(seed)
    (tmp_path / "batches").mkdir(exist_ok=True)
    for i in range(n_batches):
        X = rng.normal(size=(rows, 2))
        y = 1.0 + X @ [0.5, -1.0] + 0.5 * rng.normal(size=rows)
        pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y}).to_csv(
            tmp_path / "batches" / f"{i}.csv", index=False)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    return spec


def posterior_json(out):
    return json.loads((Path(out) / "posterior.json").read_text())["parameters"]["theta"]


def test_checkpoint_resume_equals_uninterrupted(tmp_path):
    spec_path = make_stream(tmp_path)
    whole = fit(load_spec(spec_path), out=tmp_path / "whole")
    # Stream the first four batches, then resume with the rest present.
    held = tmp_path / "held"
    held.mkdir()
    for i in (4, 5):
        shutil.move(tmp_path / "batches" / f"{i}.csv", held / f"{i}.csv")
    first = fit(load_spec(spec_path), out=tmp_path / "part")
    assert first.record.n_rows == 120
    for i in (4, 5):
        shutil.move(held / f"{i}.csv", tmp_path / "batches" / f"{i}.csv")
    resumed = fit(load_spec(spec_path), out=tmp_path / "part", resume=True)
    assert resumed.record.n_rows == whole.record.n_rows == 180
    np.testing.assert_allclose(resumed.posterior.state.mean, whole.posterior.state.mean, rtol=1e-12)
    np.testing.assert_allclose(resumed.posterior.state.cov, whole.posterior.state.cov, rtol=1e-12)
    assert len(resumed.record.trajectory) == 6


@pytest.mark.slow
def test_sigkill_midway_then_resume(tmp_path):
    """Batch 3 is a FIFO: the fit blocks opening it, after checkpointing batches 0-2. It is
    killed there with SIGKILL, the FIFO replaced by the real file, and the fit resumed."""
    spec_path = make_stream(tmp_path)
    whole = fit(load_spec(spec_path), out=tmp_path / "whole")
    real = (tmp_path / "batches" / "3.csv").read_bytes()
    (tmp_path / "batches" / "3.csv").unlink()
    os.mkfifo(tmp_path / "batches" / "3.csv")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BAYESCHECK_CHECKPOINT_SECONDS": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "reports", "fit", str(spec_path), "--out",
                             str(out)], stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    deadline = time.time() + 120
    while len(lines) < 3 and time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
    assert len(lines) == 3 and lines[-1].startswith("batch 3/6"), lines
    time.sleep(0.2)
    assert proc.poll() is None  # still blocked on the FIFO
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "posterior.json").exists()
    (tmp_path / "batches" / "3.csv").unlink()
    (tmp_path / "batches" / "3.csv").write_bytes(real)
    done = subprocess.run([sys.executable, "-m", "reports", "fit", str(spec_path), "--out",
                           str(out), "--resume"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "batch 4/6" in done.stderr and "batch 1/6" not in done.stderr
    resumed = posterior_json(out)
    np.testing.assert_allclose(resumed["mean"], whole.posterior.state.mean, rtol=1e-12)
    np.testing.assert_allclose(resumed["cov"], whole.posterior.state.cov, rtol=1e-12)


def test_batch_fed_twice_is_refused(tmp_path):
    spec_path = make_stream(tmp_path, n_batches=3)
    shutil.copy(tmp_path / "batches" / "1.csv", tmp_path / "batches" / "7.csv")
    with pytest.raises(DataError, match=r"7\.csv: same content as batch .*1\.csv"):
        fit(load_spec(spec_path), out=tmp_path / "out")


def test_batch_fed_again_after_resume_is_refused(tmp_path):
    spec_path = make_stream(tmp_path, n_batches=3)
    fit(load_spec(spec_path), out=tmp_path / "out")
    shutil.copy(tmp_path / "batches" / "0.csv", tmp_path / "batches" / "3.csv")
    with pytest.raises(DataError, match="refusing to count it twice"):
        fit(load_spec(spec_path), out=tmp_path / "out", resume=True)


def test_changed_batch_is_refused_on_resume(tmp_path):
    spec_path = make_stream(tmp_path, n_batches=3)
    fit(load_spec(spec_path), out=tmp_path / "out")
    path = tmp_path / "batches" / "1.csv"
    path.write_text(path.read_text().replace("x1,x2,y\n", "x1,x2,y\n0,0,0\n"))
    with pytest.raises(DataError, match=r"1\.csv: content changed"):
        fit(load_spec(spec_path), out=tmp_path / "out", resume=True)


def test_resume_with_another_prior_is_refused(tmp_path):
    spec_path = make_stream(tmp_path, n_batches=3)
    fit(load_spec(spec_path), out=tmp_path / "out")
    spec_path.write_text(SPEC.replace("cov = 5.0", "cov = 6.0"))
    with pytest.raises(SpecError, match="another model, prior or columns"):
        fit(load_spec(spec_path), out=tmp_path / "out", resume=True)


def test_resume_without_checkpoint_starts_from_the_beginning(tmp_path, capsys):
    # The crash came before the first checkpoint: nothing to continue, nothing to refuse.
    spec_path = make_stream(tmp_path, n_batches=2)
    resumed = fit(load_spec(spec_path), out=tmp_path / "empty", resume=True)
    err = capsys.readouterr().err
    assert "no checkpoint" in err and "starting from the beginning" in err
    whole = fit(load_spec(spec_path))
    assert resumed.record.n_rows == whole.record.n_rows == 60
    np.testing.assert_array_equal(resumed.posterior.parameters["theta"]["mean"],
                                  whole.posterior.parameters["theta"]["mean"])


def test_checkpoint_is_written_atomically(tmp_path):
    spec_path = make_stream(tmp_path, n_batches=2)
    fit(load_spec(spec_path), out=tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    # no temporary file left behind
    assert names == sorted([MANIFEST_NAME, CHECKPOINT_NAME])


def test_natural_order_of_batches(tmp_path):
    spec_path = make_stream(tmp_path, n_batches=12, rows=5)
    result = fit(load_spec(spec_path))
    order = [Path(b["name"]).name for b in result.record.batches]
    assert order == [f"{i}.csv" for i in range(12)]


def test_checkpoint_of_the_xtx_layout_is_refused(tmp_path, monkeypatch):
    """A version-1 checkpoint (linear-Gaussian states holding X'X) is refused with a clear
    error on resume, not misread; the same file at the current version loads."""
    import bayescheck.inference.scale.streaming as streaming
    from bayescheck.inference.engines.linear_gaussian import GaussianPosterior

    state = GaussianPosterior.flat(2, noise_var=1.0)
    path = tmp_path / CHECKPOINT_NAME
    monkeypatch.setattr(streaming, "CHECKPOINT_VERSION", 1)
    streaming.save_checkpoint(path, state, [], [], "key")
    monkeypatch.undo()
    with pytest.raises(SpecError, match="another model or version"):
        streaming.load_checkpoint(path, GaussianPosterior, "key")
    streaming.save_checkpoint(path, state, [], [], "key")
    loaded = streaming.load_checkpoint(path, GaussianPosterior, "key").state
    np.testing.assert_array_equal(loaded.root, state.root)


def _count_saves(monkeypatch):
    import bayescheck.inference.scale.streaming as streaming
    saves = []
    real = streaming.save_checkpoint

    def counting(path, state, records, *args, **kwargs):
        saves.append(len(records))
        return real(path, state, records, *args, **kwargs)

    monkeypatch.setattr(streaming, "save_checkpoint", counting)
    return saves


@pytest.mark.parametrize("seconds, expected", [("0", [1, 2, 3, 4, 5, 6]), ("3600", [6])])
def test_checkpoint_on_an_interval_and_at_the_end(tmp_path, monkeypatch, seconds, expected):
    spec_path = make_stream(tmp_path)
    saves = _count_saves(monkeypatch)
    monkeypatch.setenv("BAYESCHECK_CHECKPOINT_SECONDS", seconds)
    result = fit(load_spec(spec_path), out=tmp_path / "out")
    assert saves == expected
    resumed = fit(load_spec(spec_path), out=tmp_path / "out", resume=True)  # nothing new
    assert saves == expected  # nothing absorbed, nothing written
    np.testing.assert_array_equal(resumed.posterior.state.mean, result.posterior.state.mean)


def test_a_bad_batch_keeps_the_batches_before_it(tmp_path, monkeypatch):
    """With no interval checkpoint yet, an error in batch 4 still leaves batches 1-3 saved;
    fixing the file and resuming gives the uninterrupted result."""
    spec_path = make_stream(tmp_path)
    whole = fit(load_spec(spec_path), out=tmp_path / "whole")
    monkeypatch.setenv("BAYESCHECK_CHECKPOINT_SECONDS", "3600")
    bad = tmp_path / "batches" / "3.csv"
    good = bad.read_text()
    lines = good.splitlines()
    lines[5] = "1.0,oops,2.0"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"3\.csv, column 'x2', row 5: not a number"):
        fit(load_spec(spec_path), out=tmp_path / "out")
    bad.write_text(good)
    saves = _count_saves(monkeypatch)
    resumed = fit(load_spec(spec_path), out=tmp_path / "out", resume=True)
    assert saves == [6]
    assert [Path(b["name"]).name for b in resumed.record.batches] == [f"{i}.csv" for i in range(6)]
    np.testing.assert_array_equal(resumed.posterior.state.root, whole.posterior.state.root)


def test_checkpoint_interval_must_be_a_number(tmp_path, monkeypatch):
    spec_path = make_stream(tmp_path, n_batches=1)
    monkeypatch.setenv("BAYESCHECK_CHECKPOINT_SECONDS", "soon")
    with pytest.raises(SpecError, match="BAYESCHECK_CHECKPOINT_SECONDS.*'soon'"):
        fit(load_spec(spec_path), out=tmp_path / "out")


def test_checkpoints_sharing_encoded_records_load_the_same_trajectory(tmp_path):
    """A stream passes one list of encoded trajectory records to every checkpoint (each
    record encoded once); what loads back is the trajectory, as when every checkpoint
    encodes it whole, NaN included; a record left out of the list would be seen."""
    import bayescheck.inference.scale.streaming as streaming
    from bayescheck.inference.engines.linear_gaussian import GaussianPosterior

    state = GaussianPosterior.flat(2, noise_var=1.0)
    steps = [{"batch": f"b{i}", "rows": i, "mean": {"x": i / 7}} for i in range(5)]
    steps[2]["mean"]["x"] = float("nan")
    records = [streaming.BatchRecord(s["batch"], f"{i:032x}", i) for i, s in enumerate(steps)]
    shared, fresh = tmp_path / "shared.npz", tmp_path / "fresh.npz"
    encoded: list[str] = []
    for k in (1, 3, 5):  # checkpoints after 1, 3 and 5 batches
        streaming.save_checkpoint(shared, state, records[:k], steps[:k], "key", encoded=encoded)
        streaming.save_checkpoint(fresh, state, records[:k], steps[:k], "key")
        a = streaming.load_checkpoint(shared, GaussianPosterior, "key")
        b = streaming.load_checkpoint(fresh, GaussianPosterior, "key")
        assert json.dumps(a.trajectory) == json.dumps(b.trajectory) == json.dumps(steps[:k])
        assert a.records == b.records == records[:k]
    assert len(encoded) == 5
    encoded.pop(1)  # negative control: a list that lost a record gives another trajectory
    streaming.save_checkpoint(shared, state, records, steps, "key", encoded=encoded)
    assert streaming.load_checkpoint(shared, GaussianPosterior, "key").trajectory != steps
