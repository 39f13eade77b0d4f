"""``[data] path`` as an fsspec URL: the same batches, numbers and guarantees as local files.

``memory://`` (fsspec's in-process file system) stands in for object storage, which cannot
be reached from the test machine; ``file://`` is the local disk through fsspec.
"""

import io
import uuid
from pathlib import Path

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bayescheck.data.remote import RemoteFile, is_url
from bayescheck.data.sources import DataSource
from bayescheck.inference.families import fit
from bayescheck.models.errors import DataError
from bayescheck.models.spec import load_spec
from bayescheck.reports.cli import main

SPEC = """model = "linear_regression"
[data]
path = "PATH"
target = "y"
intercept = true
[prior]
mean = 0.0
cov = 10.0
noise_shape = 2.0
noise_scale = 1.0
"""


def _parquet(rng, n) -> bytes:
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -2.0]) + 0.5 + rng.normal(scale=0.7, size=n)
    buffer = io.BytesIO()
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "y": y}), buffer)
    return buffer.getvalue()


@pytest.fixture
def bucket(tmp_path):
    """Four Parquet batches both in memory:// and on disk (the same bytes); the URL folder."""
    fs = fsspec.filesystem("memory")
    root = f"/bucket-{uuid.uuid4().hex}"
    rng = np.random.default_rng(3)
    (tmp_path / "parts").mkdir()
    for i, n in enumerate((40, 75, 12, 60)):
        content = _parquet(rng, n)
        # part10 after part2: natural order, as for local files
        name = f"part{i if i < 3 else 10}.parquet"
        fs.pipe(f"{root}/{name}", content)
        (tmp_path / "parts" / name).write_bytes(content)
    yield f"memory://{root}"
    fs.rm(root, recursive=True)


def _spec(tmp_path, path) -> Path:
    spec = tmp_path / f"spec-{abs(hash(path))}.toml"
    spec.write_text(SPEC.replace("PATH", path))
    return spec


def test_url_is_told_from_a_path():
    assert is_url("s3://bucket/x.parquet") and is_url("memory://b/*.csv")
    assert not is_url("parts/*.parquet") and not is_url("C:/data/x.csv")


@pytest.mark.parametrize("scheme", ["memory", "file"])
def test_a_url_glob_fits_like_the_local_files(tmp_path, bucket, scheme):
    url = f"{bucket}/part*.parquet" if scheme == "memory" else \
        f"file://{tmp_path}/parts/part*.parquet"
    remote, local = fit(load_spec(_spec(tmp_path, url))), \
        fit(load_spec(_spec(tmp_path, "parts/*.parquet")))
    assert (
        remote.posterior.log_evidence == local.posterior.log_evidence
    )  # the same bytes: the same arithmetic
    np.testing.assert_array_equal(remote.posterior.parameters["theta"]["mean"],
                                  local.posterior.parameters["theta"]["mean"])
    assert [b["fingerprint"] for b in remote.record.batches] == \
        [b["fingerprint"] for b in local.record.batches]
    names = [b["name"] for b in remote.record.batches]
    assert all(is_url(n) for n in names)
    assert [n.rsplit("/", 1)[1] for n in names] == \
        ["part0.parquet", "part1.parquet", "part2.parquet", "part10.parquet"]


def test_resume_over_a_url_absorbs_only_new_files_and_refuses_a_changed_one(tmp_path, bucket):
    fs = fsspec.filesystem("memory")
    root = bucket.removeprefix("memory://")
    late = fs.cat_file(f"{root}/part10.parquet")
    fs.rm(f"{root}/part10.parquet")
    spec, out = load_spec(_spec(tmp_path, f"{bucket}/part*.parquet")), tmp_path / "out"
    fit(spec, out=out)
    fs.pipe(f"{root}/part10.parquet", late)
    resumed = fit(spec, out=out, resume=True)
    whole = fit(spec)
    assert resumed.posterior.log_evidence == whole.posterior.log_evidence
    assert resumed.record.batches == whole.record.batches
    fs.pipe(f"{root}/part1.parquet", _parquet(np.random.default_rng(9), 75))
    with pytest.raises(DataError, match="content changed since this batch was absorbed"):
        fit(spec, out=out, resume=True)


@pytest.mark.parametrize("path,words", [
    ("memory://nothing-here/*.parquet", "no file matches this pattern"),
    ("memory://nothing-here/part0.parquet", "data file not found"),
    ("nosuchprotocol://bucket/*.parquet", "cannot open this URL"),
])
def test_a_url_that_names_nothing_is_refused_naming_it(tmp_path, path, words, capsys):
    with pytest.raises(DataError, match=words) as caught:
        DataSource(path).files()
    assert path in str(caught.value)
    assert main(["fit", str(_spec(tmp_path, path)), "--out", str(tmp_path / "o")]) == 2
    assert words in capsys.readouterr().err


def test_an_unsupported_suffix_behind_a_url_is_refused(bucket):
    fsspec.filesystem("memory").pipe(f"{bucket.removeprefix('memory://')}/notes.txt", b"x")
    with pytest.raises(DataError, match="unsupported file type '.txt'"):
        DataSource(f"{bucket}/*").files()


def test_remote_file_reads_its_bytes_and_size(bucket):
    f = DataSource(f"{bucket}/part2.parquet").files()[0]
    assert isinstance(f, RemoteFile) and f.name == "part2.parquet" and f.suffix == ".parquet"
    assert f.stat().st_size == len(f.read_bytes()) > 0 and f.exists() and not f.is_dir()
