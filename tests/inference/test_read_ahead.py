"""Read-ahead threads: the same numbers, the same errors and the same resume as one thread."""

import threading
from pathlib import Path

import bayescheck.inference.families.linear_regression as lr_family
import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.families import fit
from bayescheck.inference.scale.streaming import _in_order, load_checkpoint, model_key
from bayescheck.models import DataError, SpecError, load_spec

SPEC = """model = "linear_regression"
[data]
path = "batches/*.{suffix}"
target = "y"
intercept = true
[prior]
mean = 0.0
cov = 5.0
noise_shape = 2.0
noise_scale = 1.0
"""


def make_stream(tmp_path, suffix="parquet", n_batches=7, seed=3):
    rng = np.random.default_rng(seed)
    (tmp_path / "batches").mkdir()
    for i in range(n_batches):
        rows = 20 + 7 * i
        X = rng.normal(size=(rows, 3)) * [1.0, 10.0, 0.1]
        y = 1.0 + X @ [0.5, -1.0, 3.0] + 0.3 * rng.normal(size=rows)
        frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "y": y})
        if suffix == "parquet":
            frame.to_parquet(tmp_path / "batches" / f"{i}.parquet", index=False)
        else:
            frame.to_csv(tmp_path / "batches" / f"{i}.csv", index=False)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(suffix=suffix))
    return spec


def _threads_of_the_statistic(monkeypatch):
    """Record the thread each batch's statistic is computed on."""
    names = []
    real = lr_family.batch_statistic

    def recording(model, batch):
        names.append(threading.current_thread().name)
        return real(model, batch)

    monkeypatch.setattr(lr_family, "batch_statistic", recording)
    return names


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_read_ahead_gives_the_sequential_result_bit_for_bit(tmp_path, monkeypatch, suffix):
    spec_path = make_stream(tmp_path, suffix)
    threads = _threads_of_the_statistic(monkeypatch)
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "0")
    sequential = fit(load_spec(spec_path))
    assert set(threads) == {threading.main_thread().name}
    for ahead in ("1", "2", "5"):
        threads.clear()
        monkeypatch.setenv("BAYESCHECK_READ_AHEAD", ahead)
        ahead_fit = fit(load_spec(spec_path))
        # The statistics were computed on the read-ahead threads, not in the caller's.
        assert threads and all(t.startswith("bayescheck-read") for t in threads), threads
        np.testing.assert_array_equal(
            ahead_fit.posterior.state.root, sequential.posterior.state.root
        )
        assert ahead_fit.posterior.state.n == sequential.posterior.state.n
        assert ahead_fit.record.batches == sequential.record.batches
        assert ahead_fit.record.trajectory == sequential.record.trajectory
        assert ahead_fit.posterior.log_evidence == sequential.posterior.log_evidence


def test_an_error_on_a_read_ahead_thread_names_the_file_and_row_and_resumes(tmp_path,
                                                                              monkeypatch):
    """Batch 4 has a bad value; read ahead 3 batches, the error still names its file, column
    and row, is raised after batches 0-3 were absorbed (and saved, with no interval
    checkpoint due), and resuming after the fix gives the uninterrupted result exactly."""
    spec_path = make_stream(tmp_path, "csv")
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "0")
    whole = fit(load_spec(spec_path), out=tmp_path / "whole")
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "3")
    monkeypatch.setenv("BAYESCHECK_CHECKPOINT_SECONDS", "3600")
    threads = _threads_of_the_statistic(monkeypatch)
    bad = tmp_path / "batches" / "4.csv"
    good = bad.read_text()
    lines = good.splitlines()
    lines[6] = "1.0,2.0,oops,3.0"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"4\.csv, column 'x3', row 6: not a number"):
        fit(load_spec(spec_path), out=tmp_path / "out")
    assert all(t.startswith("bayescheck-read") for t in threads)
    spec = load_spec(spec_path)
    saved = load_checkpoint(tmp_path / "out" / "checkpoint.npz",
                            type(lr_family.prior_posterior(spec.model)), model_key(spec))
    assert [Path(r.name).name for r in saved.records] == [f"{i}.csv" for i in range(4)]
    bad.write_text(good)
    resumed = fit(load_spec(spec_path), out=tmp_path / "out", resume=True)
    assert [Path(b["name"]).name for b in resumed.record.batches] == [f"{i}.csv" for i in range(7)]
    np.testing.assert_array_equal(resumed.posterior.state.root, whole.posterior.state.root)
    assert resumed.record.trajectory == whole.record.trajectory


def test_a_changed_batch_is_refused_in_its_place_with_read_ahead(tmp_path, monkeypatch):
    spec_path = make_stream(tmp_path, "csv", n_batches=3)
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "2")
    fit(load_spec(spec_path), out=tmp_path / "out")
    path = tmp_path / "batches" / "1.csv"
    path.write_text(path.read_text().replace("x1,x2,x3,y\n", "x1,x2,x3,y\n0,0,0,0\n"))
    with pytest.raises(DataError, match=r"1\.csv: content changed"):
        fit(load_spec(spec_path), out=tmp_path / "out", resume=True)


def test_a_batch_fed_twice_is_refused_with_read_ahead(tmp_path, monkeypatch):
    spec_path = make_stream(tmp_path, "parquet", n_batches=3)
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "2")
    (tmp_path / "batches" / "9.parquet").write_bytes(
        (tmp_path / "batches" / "1.parquet").read_bytes())
    with pytest.raises(DataError, match=r"9\.parquet: same content as batch .*1\.parquet"):
        fit(load_spec(spec_path), out=tmp_path / "out")


@pytest.mark.parametrize("depth", [0, 1, 2, 4])
def test_in_order_keeps_the_order_and_bounds_what_is_in_flight(depth):
    """Results come in order; while result i is handled, no loader past i + depth has been
    called (memory stays flat); an error of the loaders' iteration comes in its place."""
    called = []
    lock = threading.Lock()

    def loaders():
        for i in range(10):
            def load(i=i):
                with lock:
                    called.append(i)
                return i
            yield load
        raise DataError("content changed", path="10.csv")

    seen = []
    with pytest.raises(DataError, match="10.csv"):
        for i, value in enumerate(_in_order(loaders(), lambda load: load() * 10, depth)):
            assert value == 10 * i
            assert max(called) <= i + depth
            seen.append(value)
    assert seen == [10 * i for i in range(10)]
    assert sorted(called) == list(range(10))


def test_in_order_raises_a_workers_error_after_the_results_before_it():
    def work(load):
        value = load()
        if value == 3:
            raise DataError("not a number", path="3.csv", column="x", row=2)
        return value

    got = []
    with pytest.raises(DataError, match=r"3\.csv, column 'x', row 2"):
        for value in _in_order((lambda i=i: i for i in range(8)), work, 2):
            got.append(value)
    assert got == [0, 1, 2]


def test_read_ahead_must_be_a_whole_number(tmp_path, monkeypatch):
    spec_path = make_stream(tmp_path, "csv", n_batches=1)
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "two")
    with pytest.raises(SpecError, match="BAYESCHECK_READ_AHEAD.*'two'"):
        fit(load_spec(spec_path), out=tmp_path / "out")


def test_an_interrupt_with_read_ahead_saves_the_batches_absorbed(tmp_path, monkeypatch):
    """Ctrl-C while batches are being read ahead: the checkpoint holds exactly the batches
    absorbed before it (not the ones read ahead), and resuming gives the uninterrupted
    one-thread result bit for bit."""
    spec_path = make_stream(tmp_path, "parquet")
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "0")
    whole = fit(load_spec(spec_path))
    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", "3")
    monkeypatch.setenv("BAYESCHECK_CHECKPOINT_SECONDS", "3600")
    real, calls = lr_family._apply, []

    def interrupted(state, stats):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(state, stats)

    monkeypatch.setattr(lr_family, "_apply", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fit(load_spec(spec_path), out=tmp_path / "out")
    monkeypatch.setattr(lr_family, "_apply", real)
    spec = load_spec(spec_path)
    saved = load_checkpoint(tmp_path / "out" / "checkpoint.npz",
                            type(lr_family.prior_posterior(spec.model)), model_key(spec))
    assert [Path(r.name).name for r in saved.records] == ["0.parquet", "1.parquet",
                                                          "2.parquet"]
    resumed = fit(load_spec(spec_path), out=tmp_path / "out", resume=True)
    np.testing.assert_array_equal(resumed.posterior.state.root, whole.posterior.state.root)
    assert resumed.record.trajectory == whole.record.trajectory


@pytest.mark.parametrize("name, raw, wanted", [
    ("BAYESCHECK_READ_AHEAD", "3", 3), ("BAYESCHECK_READ_AHEAD", " ", 2),
    ("BAYESCHECK_CHECKPOINT_SECONDS", "0.5", 0.5), ("BAYESCHECK_CHECKPOINT_SECONDS", "0", 0.0)])
def test_environment_settings_are_read(monkeypatch, name, raw, wanted):
    from bayescheck.inference.scale.streaming import READ_AHEAD, checkpoint_interval, read_ahead

    assert READ_AHEAD == 2  # the default the blank value falls back to
    monkeypatch.setenv(name, raw)
    read = read_ahead if name == "BAYESCHECK_READ_AHEAD" else checkpoint_interval
    assert read() == wanted


@pytest.mark.parametrize("name, raw", [
    ("BAYESCHECK_READ_AHEAD", "-1"), ("BAYESCHECK_READ_AHEAD", "1.5"),
    ("BAYESCHECK_READ_AHEAD", "two"), ("BAYESCHECK_CHECKPOINT_SECONDS", "-0.1"),
    ("BAYESCHECK_CHECKPOINT_SECONDS", "nan"), ("BAYESCHECK_CHECKPOINT_SECONDS", "soon")])
def test_a_bad_environment_setting_is_refused_by_name(monkeypatch, name, raw):
    from bayescheck.inference.scale.streaming import checkpoint_interval, read_ahead

    monkeypatch.setenv(name, raw)
    read = read_ahead if name == "BAYESCHECK_READ_AHEAD" else checkpoint_interval
    with pytest.raises(SpecError, match=f"{name} must be .*{raw!r}"):
        read()


def test_the_prior_is_built_while_the_threads_read(tmp_path, monkeypatch):
    """Given as a function, the stream's initial state is built once the reading threads
    run, and finished statistics (more than READ_AHEAD) wait for it: the state's build
    sees batches reduced meanwhile. The result equals the one with the state given."""
    from bayescheck.inference.scale.streaming import run_stream

    spec_path = make_stream(tmp_path, "parquet", n_batches=7)
    spec = load_spec(spec_path)
    model = spec.model
    reduced = []
    reduced_enough = threading.Event()

    def statistic(batch):
        out = lr_family.batch_statistic(model, batch)
        reduced.append(batch.name)
        if len(reduced) >= 5:
            reduced_enough.set()
        return out

    seen_at_build = []

    def build():
        reduced_enough.wait(timeout=30)
        seen_at_build.append(len(reduced))
        return lr_family.prior_posterior(model)

    common = dict(absorb=lambda state, stat: (state.update(stat), stat.n),
                  summarize=lambda state: None, statistic=statistic, ahead=2)
    lazy = run_stream(spec.data, initial_state=build, **common)
    assert seen_at_build and seen_at_build[0] >= 5 > 2  # beyond READ_AHEAD's 2 batches
    given = run_stream(spec.data, initial_state=lr_family.prior_posterior(model), **common)
    np.testing.assert_array_equal(lazy.state.root, given.state.root)
    assert lazy.records == given.records
    # With the read-ahead off the state is built first, in the calling thread.
    reduced.clear()
    seen_at_build.clear()
    reduced_enough.set()
    run_stream(spec.data, initial_state=build, **{**common, "ahead": 0})
    assert seen_at_build == [0]


@pytest.mark.parametrize("depth", [1, 3])
def test_in_order_with_fewer_threads_than_its_window(depth):
    """A window deeper than its threads: still in order, never more than ``threads`` calls
    at once, and ``started`` runs after the first loads were handed out."""
    running, most = [0], [0]
    lock = threading.Lock()
    log = []

    def work(load):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        value = load()
        with lock:
            running[0] -= 1
        return value

    items = _in_order((lambda i=i: i for i in range(20)), work, 8, threads=depth,
                      started=lambda: log.append("started"))
    assert list(items) == list(range(20))
    assert log == ["started"]
    assert most[0] <= depth
