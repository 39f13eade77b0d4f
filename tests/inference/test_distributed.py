"""Fits on a Dask cluster (inference.distributed) against the single-process stream.

One LocalCluster of 2 thread workers serves the module (processes=False: no start-up of
worker processes); the fits reach it through its scheduler address, as `--scheduler ADDRESS`
does. The process-worker path (`--scheduler local --workers 2`) is one slow test.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from bayescheck.inference.engines.mixture_em import kmeans, seed_centres  # noqa: E402
from bayescheck.inference.families import fit  # noqa: E402
from bayescheck.inference.scale import distributed as dist  # noqa: E402
from bayescheck.models.errors import BayescheckError, DataError  # noqa: E402
from bayescheck.models.spec import load_spec  # noqa: E402
from bayescheck.reports.cli import main  # noqa: E402

RTOL = 1e-12


@pytest.fixture(scope="module")
def address():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _write(tmp: Path, frames, spec: str, suffix="csv") -> Path:
    (tmp / "parts").mkdir()
    for i, frame in enumerate(frames):
        if suffix == "csv":
            frame.to_csv(tmp / "parts" / f"{i}.csv", index=False)
        else:
            frame.to_parquet(tmp / "parts" / f"{i}.parquet", index=False)
    path = tmp / "spec.toml"
    path.write_text(spec.replace("PATH", f"parts/*.{suffix}"))
    return path


def _regression_frames(rng, sizes=(120, 75, 200, 33, 90)):
    out = []
    for n in sizes:
        X = rng.normal(size=(n, 3))
        y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + rng.normal(scale=0.7, size=n)
        out.append(pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "y": y}))
    return out


def _close(a, b, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=0)


LINEAR_KNOWN = """model = "linear_regression"
[data]
path = "PATH"
target = "y"
intercept = true
[prior]
mean = 0.0
cov = 10.0
[likelihood]
noise_sd = 0.7
"""

LINEAR_UNKNOWN = """model = "linear_regression"
[data]
path = "PATH"
target = "y"
[prior]
mean = [0.0, 0.0, 0.0]
cov = [4.0, 4.0, 4.0]
noise_shape = 2.0
noise_scale = 1.0
"""


@pytest.mark.parametrize("text,suffix", [(LINEAR_KNOWN, "csv"), (LINEAR_UNKNOWN, "parquet")])
def test_linear_regression_on_the_cluster_equals_the_stream(tmp_path, address, text, suffix):
    spec = load_spec(_write(tmp_path, _regression_frames(np.random.default_rng(1)), text,
                            suffix))
    local = fit(spec)
    remote = fit(spec, scheduler=address)
    theta_l, theta_r = local.posterior.parameters["theta"], remote.posterior.parameters["theta"]
    _close(theta_r["mean"], theta_l["mean"])
    _close(theta_r["cov"], theta_l["cov"])
    _close(remote.posterior.log_evidence, local.posterior.log_evidence)
    if "scale" in local.posterior.parameters.get("sigma2", {}):
        _close(
            remote.posterior.parameters["sigma2"]["scale"],
            local.posterior.parameters["sigma2"]["scale"],
        )
        assert (
            remote.posterior.parameters["sigma2"]["shape"]
            == local.posterior.parameters["sigma2"]["shape"]
        )
    assert remote.record.n_rows == local.record.n_rows == 518
    assert (
        remote.record.batches == local.record.batches
    )  # same files, fingerprints and rows, same order


def test_the_comparison_sees_a_missing_partition(tmp_path, address):
    """Negative: the cluster fit of 4 of the 5 files is far outside the tolerance."""
    frames = _regression_frames(np.random.default_rng(1))
    spec = load_spec(_write(tmp_path, frames, LINEAR_KNOWN))
    local = fit(spec)
    (tmp_path / "parts" / "3.csv").unlink()
    remote = fit(load_spec(tmp_path / "spec.toml"), scheduler=address)
    with pytest.raises(AssertionError):
        _close(
            remote.posterior.parameters["theta"]["mean"],
            local.posterior.parameters["theta"]["mean"],
        )


def test_counts_on_the_cluster_equal_the_stream(tmp_path, address):
    rng = np.random.default_rng(2)
    (tmp_path / "coin").mkdir()
    # 20 files: two levels of the merge tree (groups of FAN_IN = 8)
    coin = [pd.DataFrame({"heads": rng.integers(0, 2, size=n)})
            for n in rng.integers(1, 60, size=20)]
    spec = load_spec(_write(tmp_path / "coin", coin, 'model = "beta_bernoulli"\n[data]\n'
                            'path = "PATH"\ntarget = "heads"\n[prior]\na = 2.0\nb = 3.0\n'))
    local, remote = fit(spec), fit(spec, scheduler=address)
    assert remote.posterior.parameters["p"]["a"] == local.posterior.parameters["p"]["a"]
    assert remote.posterior.parameters["p"]["b"] == local.posterior.parameters["p"]["b"]
    assert remote.posterior.log_evidence == pytest.approx(local.posterior.log_evidence, rel=RTOL)
    assert remote.record.batches == local.record.batches

    # labels appear in different files, none declared: the category order must agree too
    (tmp_path / "die").mkdir()
    faces = [["c", "a"], ["b", "a", "d"], ["e", "c"], ["a"]]
    die = [pd.DataFrame({"face": rng.choice(f, size=20)}) for f in faces]
    spec = load_spec(_write(tmp_path / "die", die, 'model = "dirichlet_categorical"\n[data]\n'
                            'path = "PATH"\ntarget = "face"\n'))
    local, remote = fit(spec), fit(spec, scheduler=address)
    assert remote.posterior.parameters["pi"] == local.posterior.parameters["pi"]
    assert remote.posterior.log_evidence == pytest.approx(local.posterior.log_evidence, rel=RTOL)


NAIVE = """model = "naive_bayes"
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
"""


def test_naive_bayes_on_the_cluster_equals_the_stream(tmp_path, address):
    rng = np.random.default_rng(3)
    frames = []
    for n in (40, 25, 61):
        label = rng.choice(["x", "y", "z"], size=n)
        frames.append(pd.DataFrame({
            "colour": rng.choice(["red", "green", "blue"], size=n),
            "size": rng.normal(size=n) + (label == "x") * 2.0,
            "weight": rng.normal(50.0, 5.0, size=n), "label": label}))
    spec = load_spec(_write(tmp_path, frames, NAIVE))
    local, remote = fit(spec), fit(spec, scheduler=address)
    s_l, s_r = local.posterior.parameters["statistics"], remote.posterior.parameters["statistics"]
    assert s_r["classes"] == s_l["classes"] and s_r["categories"] == s_l["categories"]
    assert s_r["class_counts"] == s_l["class_counts"]
    assert s_r["category_counts"] == s_l["category_counts"]
    _close(s_r["gaussian_mean"], s_l["gaussian_mean"])
    _close(s_r["gaussian_m2"], s_l["gaussian_m2"])
    feats_l, feats_r = (
        local.posterior.parameters["features"],
        remote.posterior.parameters["features"],
    )
    for name in ("size", "weight"):
        _close(list(feats_r[name]["predictive"]["scale"].values()),
               list(feats_l[name]["predictive"]["scale"].values()))


MIXTURE = """model = "gaussian_mixture"
n_components = 3
covariance = "COV"
[data]
path = "PATH"
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


def _blobs(rng, sizes=(150, 90, 260)):
    centres = np.array([[0.0, 0.0], [4.0, 1.0], [1.0, 5.0]])
    out = []
    for n in sizes:
        k = rng.integers(0, 3, size=n)
        X = centres[k] + rng.normal(scale=[0.8, 0.5], size=(n, 2))
        out.append(pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1]}))
    return out


@pytest.mark.slow  # EM iterations, each a round trip to the cluster: 5 s for "diag"
@pytest.mark.parametrize("cov", ["full", "diag"])
def test_mixture_em_on_the_cluster_equals_the_in_process_em(tmp_path, address, cov):
    text = MIXTURE.replace("COV", cov)
    if cov == "diag":
        text = text.replace("iw_dof = 4.0\niw_scale = 1.0", "ig_shape = 2.0\nig_scale = 1.0")
    spec = load_spec(_write(tmp_path, _blobs(np.random.default_rng(4)), text))
    local, remote = fit(spec), fit(spec, scheduler=address)
    assert remote.record.info["n_iter"] == local.record.info["n_iter"]
    assert remote.record.info["best_restart"] == local.record.info["best_restart"]
    for name in ("weights", "means", "sds"):
        _close(
            remote.posterior.parameters[name]["estimate"],
            local.posterior.parameters[name]["estimate"],
            1e-9,
        )
    _close(remote.record.info["history"], local.record.info["history"], 1e-11)
    _close(remote.record.info["restart_objectives"], local.record.info["restart_objectives"], 1e-11)
    _close(remote.record.info["responsibilities_first_rows"],
           local.record.info["responsibilities_first_rows"], 1e-9)
    assert remote.record.n_rows == local.record.n_rows == 500


@pytest.mark.slow
def test_cluster_rows_seed_and_cluster_like_the_matrix(address):
    rng = np.random.default_rng(6)
    frames = _blobs(rng, sizes=(40, 1, 77, 30))
    X = np.vstack([f.to_numpy() for f in frames])

    class Source:  # the few DataSource calls ClusterRows makes, over in-memory parts
        pattern = "memory"

        def files(self):
            return list(range(len(frames)))

    import bayescheck.inference.scale.distributed as module

    original = module._read
    module._read = lambda i: type("B", (), {"name": f"part{i}", "fingerprint": str(i),
                                           "frame": frames[int(i)]})()
    try:
        with dist.cluster(address):
            rows = dist.ClusterRows(Source(), lambda b: b.frame.to_numpy(dtype=float))
            for seed in range(3):
                np.testing.assert_array_equal(
                    rows.seed_centres(3, np.random.default_rng(seed)),
                    seed_centres(X, 3, np.random.default_rng(seed)))
            np.testing.assert_array_equal(rows.seed_centres(3), seed_centres(X, 3))
            np.testing.assert_allclose(rows.kmeans(3), kmeans(X, 3)[0], rtol=1e-12)
            np.testing.assert_array_equal(rows.ptp(), np.ptp(X, axis=0))
            np.testing.assert_array_equal(rows.head(45), X[:45])
    finally:
        module._read = original


# ---- errors ------------------------------------------------------------------------------


def test_a_bad_file_on_a_worker_is_named(tmp_path, address, capsys):
    frames = _regression_frames(np.random.default_rng(1), sizes=(20, 20, 20))
    frames[1]["x2"] = frames[1]["x2"].astype(object)
    frames[1].loc[7, "x2"] = "oops"
    spec = _write(tmp_path, frames, LINEAR_KNOWN)
    code = main(["fit", str(spec), "--scheduler", address, "--out", str(tmp_path / "o"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "1.csv" in err and "x2" in err and "row 8" in err


def test_a_file_missing_on_the_workers_is_named(tmp_path, address):
    class Source:
        pattern = "x"

        def files(self):
            return [tmp_path / "here.csv", tmp_path / "gone.csv"]

    pd.DataFrame({"y": [1, 0]}).to_csv(tmp_path / "here.csv", index=False)
    with dist.cluster(address), pytest.raises(DataError, match="gone.csv"):
        # the present file's statistic must succeed, so only the missing file can fail
        dist.reduce_partitions(Source(), lambda b: SimpleNamespace(n=1), lambda a, b: a)


def test_same_content_twice_is_refused_on_the_cluster(tmp_path, address):
    frames = _regression_frames(np.random.default_rng(1), sizes=(20, 20))
    spec = _write(tmp_path, [frames[0], frames[1], frames[0]], LINEAR_KNOWN)
    with pytest.raises(DataError, match="twice"):
        fit(load_spec(spec), scheduler=address)


def test_a_scheduler_that_does_not_answer_is_an_error_naming_it():
    with pytest.raises(BayescheckError, match="tcp://127.0.0.1:9"), \
            dist.cluster("tcp://127.0.0.1:9", timeout=0.5):
        pass


def test_usage_errors_exit_2(tmp_path, address, capsys):
    spec = _write(tmp_path, _regression_frames(np.random.default_rng(1), sizes=(20,)),
                  LINEAR_KNOWN)
    out = str(tmp_path / "o")
    # no checkpoint yet (the run stopped before its first one): from the beginning, said so
    assert main(["fit", str(spec), "--out", out, "--scheduler", address, "--resume"]) == 0
    assert "starting from the beginning" in capsys.readouterr().err
    assert main(["fit", str(spec), "--out", out, "--scheduler", address, "--workers", "2"]) == 2
    assert "--workers" in capsys.readouterr().err
    assert main(["fit", str(spec), "--out", out, "--workers", "2"]) == 2
    ard = Path(__file__).parents[2] / "examples" / "ard" / "design.toml"
    assert main(["fit", str(ard), "--out", out, "--scheduler", address]) == 2
    assert "in-process only" in capsys.readouterr().err


def test_cli_posterior_on_the_cluster_equals_the_stream(tmp_path, address):
    spec = _write(tmp_path, _regression_frames(np.random.default_rng(7)), LINEAR_UNKNOWN)
    assert main(["fit", str(spec), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["fit", str(spec), "--out", str(tmp_path / "b"), "--quiet",
                 "--scheduler", address]) == 0
    a = json.loads((tmp_path / "a" / "posterior.json").read_text())
    b = json.loads((tmp_path / "b" / "posterior.json").read_text())
    _close(b["parameters"]["theta"]["mean"], a["parameters"]["theta"]["mean"])
    _close(b["log_evidence"], a["log_evidence"])


@pytest.mark.slow
def test_local_cluster_of_worker_processes(tmp_path):
    """`--scheduler local --workers 2`: worker processes, the statistics pickled back."""
    spec = _write(tmp_path, _regression_frames(np.random.default_rng(8)), LINEAR_KNOWN)
    local = fit(load_spec(spec))
    remote = fit(load_spec(spec), scheduler="local", workers=2)
    _close(
        remote.posterior.parameters["theta"]["mean"], local.posterior.parameters["theta"]["mean"]
    )


def _split(frame, k):
    return [frame.iloc[idx] for idx in np.array_split(np.arange(len(frame)), k)]


def test_public_data_sets_on_the_cluster(tmp_path, address):
    """scikit-learn's bundled diabetes (regression) and iris (naive Bayes), cut into files."""
    datasets = pytest.importorskip("sklearn.datasets")
    diabetes = datasets.load_diabetes(as_frame=True).frame
    (tmp_path / "reg").mkdir()
    spec = load_spec(_write(tmp_path / "reg", _split(diabetes, 5),
                            'model = "linear_regression"\n[data]\npath = "PATH"\n'
                            'target = "target"\nintercept = true\n[prior]\nmean = 0.0\n'
                            'cov = 1e6\nnoise_shape = 2.0\nnoise_scale = 1.0\n'))
    local, remote = fit(spec), fit(spec, scheduler=address)
    _close(
        remote.posterior.parameters["theta"]["mean"], local.posterior.parameters["theta"]["mean"]
    )
    _close(remote.posterior.log_evidence, local.posterior.log_evidence)

    iris = datasets.load_iris(as_frame=True).frame.sample(frac=1.0, random_state=0)
    iris.columns = ["sl", "sw", "pl", "pw", "species"]
    (tmp_path / "nb").mkdir()
    spec = load_spec(_write(tmp_path / "nb", _split(iris, 4),
                            'model = "naive_bayes"\n[data]\npath = "PATH"\n'
                            'target = "species"\nfeatures_kind = "gaussian"\n'))
    local, remote = fit(spec), fit(spec, scheduler=address)
    _close(remote.posterior.parameters["statistics"]["gaussian_m2"],
           local.posterior.parameters["statistics"]["gaussian_m2"])


def test_a_url_glob_on_the_cluster_equals_the_stream(tmp_path, address):
    """fsspec URLs in [data] path: the workers read the partitions through fsspec (memory://
    here, shared by this in-process cluster's thread workers; s3:// on a real cluster)."""
    import uuid

    import fsspec

    fs, root = fsspec.filesystem("memory"), f"/parts-{uuid.uuid4().hex}"
    for i, frame in enumerate(_regression_frames(np.random.default_rng(4))):
        with fs.open(f"{root}/{i}.parquet", "wb") as fh:
            frame.to_parquet(fh, index=False)
    spec = tmp_path / "spec.toml"
    spec.write_text(LINEAR_UNKNOWN.replace("PATH", f"memory://{root}/*.parquet"))
    try:
        local = fit(load_spec(spec))
        remote = fit(load_spec(spec), scheduler=address)
    finally:
        fs.rm(root, recursive=True)
    _close(
        remote.posterior.parameters["theta"]["mean"], local.posterior.parameters["theta"]["mean"]
    )
    _close(remote.posterior.log_evidence, local.posterior.log_evidence)
    assert remote.record.batches == local.record.batches and remote.record.n_rows == 518
