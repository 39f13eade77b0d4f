"""`fit --scheduler ... --resume`: cluster checkpoints, interruptions, interoperation, refusals.

One LocalCluster of 2 thread workers serves the module (processes=False: the workers run
in this process, so a wrapper of `inference.distributed._partition` counts the partitions
the workers compute). An interruption is simulated two ways: a partition that fails (the
run stops on the error and keeps what it merged), and a kill after k partitions (the
checkpoint written after the k-th merge, nothing written after it, as with SIGKILL).
"""

from __future__ import annotations

import json
import operator
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from bayescheck.inference.families import fit  # noqa: E402
from bayescheck.inference.families.linear_regression import batch_statistic, prior_posterior  # noqa: E402
from bayescheck.inference.scale import distributed as dist  # noqa: E402
from bayescheck.inference.scale.streaming import (  # noqa: E402
    CHECKPOINT_NAME,
    BatchRecord,
    load_checkpoint,
    model_key,
)
from bayescheck.models.errors import DataError, SpecError  # noqa: E402
from bayescheck.models.spec import load_spec  # noqa: E402
from bayescheck.reports.cli import main  # noqa: E402

pytestmark = pytest.mark.slow

RTOL = 1e-12
FILES = 12


@pytest.fixture(scope="module")
def address():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(autouse=True)
def every_partition(monkeypatch):
    """A checkpoint after every merged partition (and every streamed batch)."""
    monkeypatch.setenv("BAYESCHECK_CHECKPOINT_SECONDS", "0")


COMPUTED: list[str] = []
_PARTITION = dist._partition


def _counting_partition(name, statistic):
    # Module level: Dask pickles a task's function by reference to this module, which the
    # thread workers share with the test (a closure would be copied by value).
    COMPUTED.append(Path(name).name)
    return _PARTITION(name, statistic)


@pytest.fixture
def computed(monkeypatch):
    """The names of the files whose statistic the workers computed."""
    COMPUTED.clear()
    monkeypatch.setattr(dist, "_partition", _counting_partition)
    return COMPUTED


class Killed(BaseException):
    """The client process dies: nothing after it runs (no final checkpoint)."""


@pytest.fixture
def kill_after(monkeypatch):
    """``kill_after(k)``: the client dies once its k-th checkpoint is on disk."""
    original = dist.save_checkpoint

    def arm(k):
        calls = []

        def save(*args, **kwargs):
            calls.append(1)
            if len(calls) <= k:
                original(*args, **kwargs)
            if len(calls) == k:
                raise Killed
        monkeypatch.setattr(dist, "save_checkpoint", save)

    yield arm
    monkeypatch.setattr(dist, "save_checkpoint", original)


# ---- data of the five families ---------------------------------------------------------


def _regression(rng, n):
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + rng.normal(scale=0.7, size=n)
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "y": y})


def _coin(rng, n):
    return pd.DataFrame({"heads": rng.integers(0, 2, size=n)})


def _die(rng, n):  # labels appear in different files: the category order must agree
    return pd.DataFrame({"face": rng.choice(list("abcde"[: 2 + n % 4]), size=n)})


def _naive(rng, n):
    label = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], size=n),
                         "size": rng.normal(size=n) + (label == "x") * 2.0,
                         "weight": rng.normal(50.0, 5.0, size=n), "label": label})


FAMILIES = {
    "known_noise": (_regression, "x2", """model = "linear_regression"
[data]
path = "PATH"
target = "y"
intercept = true
[prior]
mean = 0.0
cov = 10.0
[likelihood]
noise_sd = 0.7
"""),
    "unknown_noise": (_regression, "x2", """model = "linear_regression"
[data]
path = "PATH"
target = "y"
[prior]
mean = [0.0, 0.0, 0.0]
cov = [4.0, 4.0, 4.0]
noise_shape = 2.0
noise_scale = 1.0
"""),
    "beta_bernoulli": (_coin, "heads", """model = "beta_bernoulli"
[data]
path = "PATH"
target = "heads"
[prior]
a = 2.0
b = 3.0
"""),
    "dirichlet_categorical": (_die, None, """model = "dirichlet_categorical"
[data]
path = "PATH"
target = "face"
"""),
    "naive_bayes": (_naive, "size", """model = "naive_bayes"
[data]
path = "PATH"
target = "label"
features = ["colour", "size", "weight"]
[data.features_kind]
colour = "categorical"
size = "gaussian"
weight = "gaussian"
[prior]
gaussian = "nig"
"""),
}


def _write(tmp: Path, family: str, *, suffix="csv", seed=1) -> tuple[Path, list[pd.DataFrame]]:
    make, _, text = FAMILIES[family]
    rng = np.random.default_rng(seed)
    frames = [make(rng, int(n)) for n in rng.integers(20, 80, size=FILES)]
    (tmp / "parts").mkdir()
    for i, frame in enumerate(frames):
        _save(frame, tmp / "parts" / f"{i}.{suffix}")
    path = tmp / "spec.toml"
    path.write_text(text.replace("PATH", f"parts/*.{suffix}"))
    return path, frames


def _save(frame, path: Path):
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)


def _spoil(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    bad = frame.copy()
    bad[column] = bad[column].astype(object)
    bad.loc[3, column] = "oops" if column != "heads" else 7
    return bad


def _checkpoint(out: Path) -> list[BatchRecord]:
    with np.load(out / CHECKPOINT_NAME) as npz:
        meta = json.loads(str(npz["meta"]))
    return [BatchRecord(**r) for r in meta["records"]]


def _close(a, b, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=0)


def _assert_same_fit(resumed, whole, family: str, *, file_order=True):
    """Equal posteriors: counts exactly, floating-point statistics to 1e-12 relative.

    Every file once; in file order unless a stream resumed a cluster's checkpoint (the
    stream lists batches in the order it absorbed them, the checkpoint's first).
    """
    if file_order:
        assert resumed.record.batches == whole.record.batches
    else:
        assert sorted(resumed.record.batches, key=str) == sorted(whole.record.batches, key=str)
    assert resumed.record.n_rows == whole.record.n_rows
    p, q = resumed.posterior.parameters, whole.posterior.parameters
    if family in ("known_noise", "unknown_noise"):
        _close(p["theta"]["mean"], q["theta"]["mean"])
        # relative to the matrix's scale: entries that are 0 in exact arithmetic (diabetes's
        # centred features against the intercept, 1e-14 here) have no relative digits
        cov = np.asarray(q["theta"]["cov"])
        np.testing.assert_allclose(p["theta"]["cov"], cov, rtol=RTOL,
                                   atol=RTOL * np.abs(cov).max())
        _close(resumed.posterior.log_evidence, whole.posterior.log_evidence)
        if family == "unknown_noise":
            _close(p["sigma2"]["scale"], q["sigma2"]["scale"])
    elif family == "naive_bayes":
        s, t = p["statistics"], q["statistics"]
        for key in ("classes", "categories", "class_counts", "category_counts"):
            assert s[key] == t[key]
        _close(s["gaussian_mean"], t["gaussian_mean"])
        _close(s["gaussian_m2"], t["gaussian_m2"])
    else:  # integer counts: exactly
        assert p == q
        assert resumed.posterior.log_evidence == pytest.approx(
            whole.posterior.log_evidence, rel=RTOL
        )


# ---- interruptions ------------------------------------------------------------------------


@pytest.mark.parametrize("family", list(FAMILIES))
def test_killed_after_k_partitions_resumes_to_the_uninterrupted_fit(tmp_path, address, family,
                                                                    computed, kill_after):
    spec_path, _ = _write(tmp_path, family, suffix="parquet" if family == "unknown_noise"
                          else "csv")
    spec = load_spec(spec_path)
    whole = fit(spec, scheduler=address)
    out = tmp_path / "out"
    kill_after(5)
    with pytest.raises(Killed):
        fit(spec, out=out, scheduler=address)
    covered = _checkpoint(out)
    assert len(covered) == 5 and len({r.name for r in covered}) == 5
    kill_after(10**9)
    computed.clear()
    resumed = fit(spec, out=out, resume=True, scheduler=address)
    # only the 7 files the checkpoint does not cover were read again (naive Bayes reads
    # them twice: its label pass, then the statistics)
    uncovered = sorted(Path(b["name"]).name for b in resumed.record.batches
                       if b["name"] not in {r.name for r in covered})
    assert len(uncovered) == FILES - 5
    assert sorted(set(computed)) == uncovered
    assert len(computed) == (2 if family == "naive_bayes" else 1) * (FILES - 5)
    _assert_same_fit(resumed, whole, family)
    _assert_same_fit(resumed, fit(spec), family)  # and the single-process stream
    assert len(_checkpoint(out)) == FILES  # the end's checkpoint covers everything


@pytest.mark.parametrize("family", ["known_noise", "naive_bayes", "beta_bernoulli"])
def test_a_failed_partition_keeps_the_others_and_resumes(tmp_path, address, family, computed):
    spec_path, frames = _write(tmp_path, family)
    column = FAMILIES[family][1]
    whole = fit(load_spec(spec_path), scheduler=address)
    bad = tmp_path / "parts" / f"{FILES - 1}.csv"
    _save(_spoil(frames[-1], column), bad)
    out = tmp_path / "out"
    with pytest.raises(DataError, match=f"{FILES - 1}.csv"):
        fit(load_spec(spec_path), out=out, scheduler=address)
    covered = _checkpoint(out)
    assert 1 <= len(covered) < FILES and str(bad) not in {r.name for r in covered}
    _save(frames[-1], bad)  # repaired: it was never absorbed, so it may change
    computed.clear()
    resumed = fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    reads = 2 if family == "naive_bayes" else 1  # its label pass, then the statistics
    assert len(computed) == reads * (FILES - len(covered))
    _assert_same_fit(resumed, whole, family)


def test_the_comparison_sees_a_double_count(tmp_path, address, kill_after):
    """Negative: the checkpoint's 5 files counted again (its state updated with all 12
    files) fails the equality the tests above rely on; the resume itself passes it."""
    spec_path, _ = _write(tmp_path, "known_noise")
    spec = load_spec(spec_path)
    whole = fit(spec, scheduler=address)
    out = tmp_path / "out"
    kill_after(5)
    with pytest.raises(Killed):
        fit(spec, out=out, scheduler=address)
    kill_after(10**9)
    done = load_checkpoint(out / CHECKPOINT_NAME, type(prior_posterior(spec.model)),
                           model_key(spec))
    with dist.cluster(address):
        every, _ = dist.reduce_partitions(spec.data, partial(batch_statistic, spec.model),
                                          operator.add)
    doubled = done.state.update(every)
    assert doubled.n > whole.record.n_rows
    with pytest.raises(AssertionError):
        _close(doubled.mean, whole.posterior.parameters["theta"]["mean"])
    resumed = fit(spec, out=out, resume=True, scheduler=address)
    _close(
        resumed.posterior.parameters["theta"]["mean"], whole.posterior.parameters["theta"]["mean"]
    )


# ---- a checkpoint of either kind resumes in either place ---------------------------------


@pytest.mark.parametrize("family", ["unknown_noise", "dirichlet_categorical"])
def test_a_stream_checkpoint_resumes_on_the_cluster_and_back(tmp_path, address, family,
                                                            computed):
    spec_path, frames = _write(tmp_path, family)
    spec = load_spec(spec_path)
    whole = fit(spec)
    column = FAMILIES[family][1] or "face"
    last = tmp_path / "parts" / f"{FILES - 1}.csv"
    spoiled = _spoil(frames[-1], column)
    if family == "dirichlet_categorical":  # a label is any text: an empty cell is bad
        spoiled = frames[-1].astype(object)
        spoiled.loc[3, column] = None
    _save(spoiled, last)
    out = tmp_path / "stream"
    with pytest.raises(DataError):
        fit(spec, out=out)  # the stream stops at the last file with 11 absorbed
    assert len(_checkpoint(out)) == FILES - 1
    _save(frames[-1], last)
    computed.clear()
    on_cluster = fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    assert computed == [last.name]
    _assert_same_fit(on_cluster, whole, family)

    # cluster -> stream: a cluster checkpoint of 5 partitions finished by the stream
    out = tmp_path / "cluster"
    original = dist.save_checkpoint
    calls = []

    def save_then_die(*args, **kwargs):
        calls.append(1)
        if len(calls) <= 5:
            original(*args, **kwargs)
        if len(calls) == 5:
            raise Killed

    dist.save_checkpoint = save_then_die
    try:
        with pytest.raises(Killed):
            fit(load_spec(spec_path), out=out, scheduler=address)
    finally:
        dist.save_checkpoint = original
    assert len(_checkpoint(out)) == 5
    in_process = fit(load_spec(spec_path), out=out, resume=True)
    _assert_same_fit(in_process, whole, family, file_order=False)


# ---- refusals -----------------------------------------------------------------------------


@pytest.fixture
def interrupted(tmp_path, address, kill_after):
    """A regression spec and an output folder whose checkpoint covers 5 of its 12 files."""
    spec_path, frames = _write(tmp_path, "known_noise")
    out = tmp_path / "out"
    kill_after(5)
    with pytest.raises(Killed):
        fit(load_spec(spec_path), out=out, scheduler=address)
    kill_after(10**9)
    return spec_path, frames, out, _checkpoint(out)


def test_a_covered_file_that_changed_is_refused_by_name(interrupted, address, capsys):
    spec_path, frames, out, covered = interrupted
    changed = Path(covered[2].name)
    frame = pd.read_csv(changed)
    frame.loc[0, "y"] += 1.0
    frame.to_csv(changed, index=False)
    code = main(["fit", str(spec_path), "--out", str(out), "--resume", "--quiet",
                 "--scheduler", address])
    err = capsys.readouterr().err
    assert code == 2
    assert changed.name in err and "content changed since this batch was absorbed" in err


def test_a_covered_file_that_is_gone_is_refused_by_name(interrupted, address):
    spec_path, _, out, covered = interrupted
    Path(covered[0].name).unlink()
    with pytest.raises(DataError, match="no longer matched") as info:
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    assert Path(covered[0].name).name in str(info.value)


def test_a_copy_of_a_covered_file_is_not_counted_twice(interrupted, address):
    spec_path, _, out, covered = interrupted
    (Path(covered[1].name).parent / "99.csv").write_bytes(Path(covered[1].name).read_bytes())
    with pytest.raises(DataError, match="twice"):
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)


def test_tampered_or_foreign_checkpoints_are_refused(interrupted, address):
    spec_path, _, out, _ = interrupted
    text = spec_path.read_text()
    spec_path.write_text(text.replace("cov = 10.0", "cov = 11.0"))
    with pytest.raises(SpecError, match="another model, prior or columns"):
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    spec_path.write_text(text)
    raw = (out / CHECKPOINT_NAME).read_bytes()
    (out / CHECKPOINT_NAME).write_bytes(raw[: len(raw) // 2])
    with pytest.raises(SpecError, match="cannot read checkpoint"):
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    (out / CHECKPOINT_NAME).unlink()
    # no checkpoint (a crash before the first): --resume starts from the beginning
    whole = fit(load_spec(spec_path), out=out, scheduler=address)
    again = fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    assert again.posterior.parameters == whole.posterior.parameters


def test_a_checkpoint_of_another_family_is_refused(tmp_path, address):
    spec_path, _ = _write(tmp_path, "beta_bernoulli")
    out = tmp_path / "out"
    fit(load_spec(spec_path), out=out, scheduler=address)
    other = tmp_path / "other.toml"
    other.write_text(FAMILIES["dirichlet_categorical"][2].replace("PATH", "parts/*.csv")
                     .replace('"face"', '"heads"'))
    with pytest.raises(SpecError, match="another model or version"):
        fit(load_spec(other), out=out, resume=True, scheduler=address)


MIXTURE = """model = "gaussian_mixture"
n_components = 3
covariance = "full"
[data]
path = "parts/*.csv"
features = ["x1", "x2"]
[prior]
concentration = 2.0
mean = [0.0, 0.0]
kappa = 0.01
iw_dof = 4.0
iw_scale = 1.0
[fit]
n_init = 2
seed = 5
"""


def _blobs(tmp: Path, sizes=(150, 90, 260)) -> Path:
    rng = np.random.default_rng(4)
    centres = np.array([[0.0, 0.0], [4.0, 1.0], [1.0, 5.0]])
    (tmp / "parts").mkdir()
    for i, n in enumerate(sizes):
        X = centres[rng.integers(0, 3, size=n)] + rng.normal(scale=[0.8, 0.5], size=(n, 2))
        pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1]}).to_csv(tmp / "parts" / f"{i}.csv",
                                                          index=False)
    (tmp / "spec.toml").write_text(MIXTURE)
    return tmp / "spec.toml"


@pytest.fixture
def em_steps(monkeypatch):
    """Counts EM's map-reduces (E steps over all partitions), on the client."""
    calls = []
    original = dist.ClusterRows.statistics

    def statistics(self, *args):
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(dist.ClusterRows, "statistics", statistics)
    return calls


@pytest.fixture
def kill_em_after(monkeypatch):
    """``kill_em_after(k)``: the client dies once EM's k-th checkpoint is on disk."""
    from bayescheck.inference.scale import em_checkpoint

    original = em_checkpoint.write_atomically

    def arm(k):
        calls = []

        def write(*args):
            calls.append(1)
            if len(calls) <= k:
                original(*args)
            if len(calls) == k:
                raise Killed
        monkeypatch.setattr(em_checkpoint, "write_atomically", write)

    yield arm
    monkeypatch.setattr(em_checkpoint, "write_atomically", original)


def _em_meta(out: Path) -> dict:
    with np.load(out / CHECKPOINT_NAME) as npz:
        return json.loads(str(npz["meta"]))


@pytest.mark.parametrize("where", ["first run", "second run"])
def test_em_killed_mid_run_resumes_at_its_last_iteration(tmp_path, address, where, em_steps,
                                                         kill_em_after):
    import io

    from bayescheck.inference.scale import em_checkpoint

    spec = load_spec(_blobs(tmp_path))
    whole = fit(spec, scheduler=address)
    uninterrupted = len(em_steps)
    # an uninterrupted checkpointed fit, its checkpoints' (finished runs, in progress) noted
    written = []
    original = em_checkpoint.write_atomically

    def note(path, content):
        with np.load(io.BytesIO(content)) as npz:
            meta = json.loads(str(npz["meta"]))
        written.append((len(meta["runs"]), meta["current"]))
        original(path, content)

    em_checkpoint.write_atomically = note
    try:
        fit(spec, out=tmp_path / "probe", scheduler=address)
    finally:
        em_checkpoint.write_atomically = original
    assert written[-1] == (2, False)  # both runs finished
    # a checkpoint after every M step: kill at the 3rd step of the first or second run
    runs_done = 0 if where == "first run" else 1
    k = written.index((runs_done, True)) + 3
    out = tmp_path / "out"
    kill_em_after(k)
    with pytest.raises(Killed):
        fit(spec, out=out, scheduler=address)
    meta = _em_meta(out)
    assert meta["current"] and len(meta["runs"]) == (0 if where == "first run" else 1)
    kill_em_after(10**9)
    em_steps.clear()
    resumed = fit(spec, out=out, resume=True, scheduler=address)
    # the iterations before the kill were not done again
    assert len(em_steps) <= uninterrupted - 3
    # the same operations on the same numbers: equal to the last bit
    for name in ("weights", "means", "sds"):
        assert resumed.posterior.parameters[name] == whole.posterior.parameters[name]
    assert resumed.record.info["history"] == whole.record.info["history"]
    assert resumed.record.info["restart_objectives"] == whole.record.info["restart_objectives"]
    assert resumed.record.info["n_iter"] == whole.record.info["n_iter"]


def test_em_resume_refuses_changed_or_new_files(tmp_path, address, kill_em_after):
    spec_path = _blobs(tmp_path)
    out = tmp_path / "out"
    kill_em_after(3)
    with pytest.raises(Killed):
        fit(load_spec(spec_path), out=out, scheduler=address)
    kill_em_after(10**9)
    extra = tmp_path / "parts" / "3.csv"
    pd.read_csv(tmp_path / "parts" / "0.csv").iloc[:20].to_csv(extra, index=False)
    with pytest.raises(DataError, match="not in the checkpoint") as info:
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    assert "3.csv" in str(info.value)
    extra.unlink()
    changed = tmp_path / "parts" / "1.csv"
    frame = pd.read_csv(changed)
    frame.loc[0, "x1"] += 1.0
    frame.to_csv(changed, index=False)
    with pytest.raises(DataError, match="content changed") as info:
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    assert "1.csv" in str(info.value)
    # another family's checkpoint is not an EM checkpoint, and the other way round
    coin = tmp_path / "coin"
    coin.mkdir()
    coin_spec, _ = _write(coin, "beta_bernoulli")
    with pytest.raises(SpecError, match="another model or version"):
        fit(load_spec(coin_spec), out=out, resume=True, scheduler=address)
    fit(load_spec(coin_spec), out=coin / "out", scheduler=address)
    changed.write_text(changed.read_text())  # (unchanged from here on)
    with pytest.raises(SpecError, match="another model or version"):
        fit(load_spec(spec_path), out=coin / "out", resume=True, scheduler=address)


def test_cli_resume_on_the_cluster(tmp_path, address, kill_after):
    spec_path, _ = _write(tmp_path, "unknown_noise")
    assert main(["fit", str(spec_path), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    kill_after(4)
    with pytest.raises(Killed):
        main(["fit", str(spec_path), "--out", str(tmp_path / "b"), "--quiet",
              "--scheduler", address])
    kill_after(10**9)
    assert main(["fit", str(spec_path), "--out", str(tmp_path / "b"), "--quiet", "--resume",
                 "--scheduler", address]) == 0
    a = json.loads((tmp_path / "a" / "posterior.json").read_text())
    b = json.loads((tmp_path / "b" / "posterior.json").read_text())
    _close(b["parameters"]["theta"]["mean"], a["parameters"]["theta"]["mean"])
    _close(b["log_evidence"], a["log_evidence"])
    assert b["batches"] == a["batches"]


# ---- a real kill ----------------------------------------------------------------------------


def test_sigkill_of_the_client_loses_nothing_that_was_checkpointed(tmp_path):
    """`bayescheck fit --scheduler` in a subprocess, SIGKILLed while a worker waits on the
    last file (a named pipe that delivers its bytes only when the test writes them): the
    checkpoint already covers the other 11 files, and the resume computes only the last."""
    import os
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    spec_path, frames = _write(tmp_path, "unknown_noise")
    last = tmp_path / "parts" / f"{FILES - 1}.csv"
    content = last.read_bytes()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        whole = fit(load_spec(spec_path), scheduler=address)
        last.unlink()
        os.mkfifo(last)
        out = tmp_path / "out"
        env = {**os.environ, "PYTHONPATH": str(root), "BAYESCHECK_CHECKPOINT_SECONDS": "0"}
        child = subprocess.Popen([sys.executable, "-m", "reports", "fit", str(spec_path),
                                  "--out", str(out), "--quiet", "--scheduler", address],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and child.poll() is None:
                if (out / CHECKPOINT_NAME).exists() and len(_checkpoint(out)) == FILES - 1:
                    break
                time.sleep(0.2)
            assert child.poll() is None, child.stderr.read().decode()
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            try:  # release the worker waiting on the pipe
                fd = os.open(last, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                pass
            else:
                os.write(fd, content)
                os.close(fd)
        assert child.returncode == -signal.SIGKILL
        covered = _checkpoint(out)
        assert len(covered) == FILES - 1 and str(last) not in {r.name for r in covered}
        last.unlink()
        last.write_bytes(content)
        COMPUTED.clear()
        original = dist._partition
        dist._partition = _counting_partition
        try:
            resumed = fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
        finally:
            dist._partition = original
        assert COMPUTED == [last.name]
    _assert_same_fit(resumed, whole, "unknown_noise")


def test_public_data_sets_resume_on_the_cluster(tmp_path, address, kill_after, kill_em_after):
    """scikit-learn's bundled diabetes (regression, unknown noise) in 8 files, killed after 3
    partitions; iris (a 3-component mixture, EM) in 3 files, killed 4 M steps in."""
    datasets = pytest.importorskip("sklearn.datasets")
    diabetes = datasets.load_diabetes(as_frame=True).frame
    reg = tmp_path / "reg"
    (reg / "parts").mkdir(parents=True)
    for i, idx in enumerate(np.array_split(np.arange(len(diabetes)), 8)):
        diabetes.iloc[idx].to_csv(reg / "parts" / f"{i}.csv", index=False)
    (reg / "spec.toml").write_text('model = "linear_regression"\n[data]\npath = "parts/*.csv"\n'
                                   'target = "target"\nintercept = true\n[prior]\nmean = 0.0\n'
                                   'cov = 1e6\nnoise_shape = 2.0\nnoise_scale = 1.0\n')
    spec = load_spec(reg / "spec.toml")
    kill_after(3)
    with pytest.raises(Killed):
        fit(spec, out=reg / "out", scheduler=address)
    kill_after(10**9)
    assert len(_checkpoint(reg / "out")) == 3
    _assert_same_fit(fit(spec, out=reg / "out", resume=True, scheduler=address), fit(spec),
                     "unknown_noise")

    iris = datasets.load_iris(as_frame=True).frame.sample(frac=1.0, random_state=0)
    iris.columns = ["sl", "sw", "pl", "pw", "species"]
    mix = tmp_path / "mix"
    (mix / "parts").mkdir(parents=True)
    for i, idx in enumerate(np.array_split(np.arange(len(iris)), 3)):
        iris.iloc[idx, :4].to_csv(mix / "parts" / f"{i}.csv", index=False)
    (mix / "spec.toml").write_text('model = "gaussian_mixture"\nn_components = 3\n'
                                   'covariance = "diag"\n[data]\npath = "parts/*.csv"\n'
                                   '[fit]\nn_init = 1\nseed = 0\n')
    spec = load_spec(mix / "spec.toml")
    whole = fit(spec, scheduler=address)
    kill_em_after(4)
    with pytest.raises(Killed):
        fit(spec, out=mix / "out", scheduler=address)
    kill_em_after(10**9)
    assert _em_meta(mix / "out")["current"]
    resumed = fit(spec, out=mix / "out", resume=True, scheduler=address)
    assert resumed.posterior.parameters["means"] == whole.posterior.parameters["means"]
    assert resumed.record.info["history"] == whole.record.info["history"]


def _rewrite(path: Path, edit) -> None:
    """Rewrite a checkpoint with ``edit(meta, arrays)`` applied, its digest left as it was."""
    with np.load(path) as npz:
        meta = json.loads(str(npz["meta"]))
        arrays = {k: npz[k] for k in npz.files if k != "meta"}
    edit(meta, arrays)
    np.savez(path.with_suffix(".tmp.npz"), meta=np.array(json.dumps(meta)), **arrays)
    path.with_suffix(".tmp.npz").replace(path)


def _bump_first_value(meta, arrays):
    name = next(k for k in sorted(arrays) if arrays[k].size > 1)
    arrays[name].flat[0] += 1.0


def test_a_hand_edited_checkpoint_is_refused(interrupted, address, tmp_path, kill_em_after):
    """A record removed (its file would be counted twice) or a number changed: the digest no
    longer matches. The unedited rewrite resumes (the test's rewriting is not the cause)."""
    spec_path, _, out, covered = interrupted
    path = out / CHECKPOINT_NAME
    original = path.read_bytes()
    _rewrite(path, lambda meta, arrays: meta["records"].pop(1))
    with pytest.raises(SpecError, match="altered or damaged"):
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    path.write_bytes(original)
    _rewrite(path, _bump_first_value)
    with pytest.raises(SpecError, match="altered or damaged"):
        fit(load_spec(spec_path), out=out, resume=True, scheduler=address)
    path.write_bytes(original)
    _rewrite(path, lambda meta, arrays: None)
    fit(load_spec(spec_path), out=out, resume=True, scheduler=address)

    # EM's journal: the saved parameters changed
    mix = tmp_path / "mix"
    mix.mkdir()
    spec = load_spec(_blobs(mix))
    kill_em_after(3)
    with pytest.raises(Killed):
        fit(spec, out=mix / "out", scheduler=address)
    kill_em_after(10**9)
    _rewrite(mix / "out" / CHECKPOINT_NAME,
             lambda meta, arrays: arrays["current_means"].__imul__(1.01))
    with pytest.raises(SpecError, match="altered or damaged"):
        fit(spec, out=mix / "out", resume=True, scheduler=address)
