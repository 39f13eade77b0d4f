"""A checkpoint is trusted only when whole: its digest, its keys, and the files it counted.

``--resume`` continues a stream from ``checkpoint.npz``; an edited or damaged checkpoint, or
one that counted a batch whose file is gone, is refused (exit 2, naming the file and the
key); a CSV copy re-saved with other line endings is the same batch.
"""

import json

import numpy as np
import pytest
from bayescheck.data.fingerprints import file_fingerprint
from bayescheck.reports.cli import main

SPEC = """model = "linear_regression"
[data]
path = "batches/*.csv"
target = "y"
features = ["x"]
[prior]
mean = 0.0
cov = 10.0
[likelihood]
noise_sd = 1.0
"""


def batch_text(seed: int, rows: int = 25) -> str:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    y = 2 * x + rng.normal(size=rows)
    return "x,y\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(x, y, strict=True))


@pytest.fixture
def stream(tmp_path):
    (tmp_path / "batches").mkdir()
    for i in range(3):
        (tmp_path / "batches" / f"{i}.csv").write_text(batch_text(i))
    (tmp_path / "spec.toml").write_text(SPEC)
    return tmp_path


def fit(folder, *extra):
    return main(["fit", str(folder / "spec.toml"), "--out", str(folder / "o"), "--quiet",
                 *extra])


def edit_meta(path, change):
    with np.load(path, allow_pickle=False) as npz:
        meta = json.loads(str(npz["meta"]))
        arrays = {k: npz[k] for k in npz.files if k != "meta"}
    change(meta)
    with open(path, "wb") as fh:
        np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)


def test_a_checkpoint_without_its_digest_is_refused(stream, capsys):
    assert fit(stream) == 0
    capsys.readouterr()
    # The record of a batch removed together with the digest: counted twice if accepted.
    edit_meta(stream / "o" / "checkpoint.npz",
              lambda m: (m.pop("digest"), m["records"].pop(), m["trajectory"].pop()))
    assert fit(stream, "--resume") == 2
    err = capsys.readouterr().err
    assert "checkpoint.npz" in err and "key 'digest'" in err


@pytest.mark.parametrize("change, key", [
    (lambda m: m["records"][0].update(rows="many"), "records[0].rows"),
    (lambda m: m.update(records={"a": 1}), "records"),
    (lambda m: m.pop("none_fields"), "none_fields"),
    (lambda m: m.update(tuple_fields=[1, 2]), "tuple_fields"),
    (lambda m: m["records"].__setitem__(1, "0.csv"), "records[1]"),
])
def test_malformed_checkpoint_metadata_is_refused_naming_the_key(stream, capsys, change, key):
    assert fit(stream) == 0
    capsys.readouterr()
    edit_meta(stream / "o" / "checkpoint.npz", change)
    assert fit(stream, "--resume") == 2
    err = capsys.readouterr().err
    assert "checkpoint.npz" in err and f"key '{key}'" in err
    assert "Traceback" not in err


def test_resume_refuses_a_counted_batch_whose_file_was_deleted(stream, capsys):
    assert fit(stream) == 0
    capsys.readouterr()
    (stream / "batches" / "1.csv").unlink()
    assert fit(stream, "--resume") == 2
    err = capsys.readouterr().err
    assert "1.csv" in err and "no longer matched" in err


def test_a_copy_resaved_with_crlf_is_the_same_batch(stream, capsys):
    text = (stream / "batches" / "0.csv").read_text()
    (stream / "batches" / "3.csv").write_bytes(text.replace("\n", "\r\n").encode())
    assert fit(stream) == 2
    err = capsys.readouterr().err
    assert "3.csv" in err and "same content as batch" in err


def test_line_endings_do_not_change_a_csv_fingerprint():
    lf = b"x,y\n1,2\n3,4\n"
    same = [lf, lf.replace(b"\n", b"\r\n"), lf.replace(b"\n", b"\r"), lf.rstrip(b"\n"),
            lf + b"\n"]
    assert {file_fingerprint(c, "csv") for c in same} == {file_fingerprint(lf, "csv")}
    assert file_fingerprint(b"x,y\n1,2\n3,5\n", "csv") != file_fingerprint(lf, "csv")
    # Parquet bytes are hashed as they are
    assert file_fingerprint(lf, "parquet") != file_fingerprint(lf + b"\n", "parquet")


def test_resume_before_the_first_checkpoint_starts_from_the_beginning(stream, capsys):
    assert fit(stream, "--resume") == 0
    captured = capsys.readouterr()
    assert "starting from the beginning" in captured.err
    assert "linear_regression: 75 rows in 3 batches" in captured.out
