"""The lean readers (pyarrow, only the columns used) against the pandas frame they stand in
for: the same numbers, the same labels and codes, the same errors, and no pandas where not
needed.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bayescheck.data import arrow_csv
from bayescheck.data.batch import Batch, read_batch
from bayescheck.data.errors import DataError
from bayescheck.data.fingerprints import fingerprint, frame_fingerprint
from bayescheck.data.labels import category_codes, category_codes_as
from bayescheck.data.numbers import _frame_columns, numeric_columns

ROOT = Path(__file__).resolve().parents[2]


def _frame(rng, n=50):
    return pd.DataFrame({"a": rng.normal(size=n) * 1e3, "b": rng.integers(-5, 5, size=n),
                         "c": rng.normal(size=n).astype(np.float32), "y": rng.normal(size=n)})


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_arrow_reader_equals_pandas_reader(tmp_path, suffix):
    frame = _frame(np.random.default_rng(0))
    path = tmp_path / f"data.{suffix}"
    frame.to_csv(path, index=False) if suffix == "csv" else frame.to_parquet(path)
    batch = read_batch(path)
    fast = numeric_columns(batch, ["y", "a", "b", "c"], ones_first=True)
    assert not batch.has_frame  # the pandas frame was not needed
    slow = _frame_columns(batch, ["y", "a", "b", "c"])
    assert fast.flags.f_contiguous
    np.testing.assert_array_equal(fast[:, 0], 1.0)
    np.testing.assert_array_equal(fast[:, 1:], slow)


def test_csv_with_blanks_reads_as_pandas_reads_it(tmp_path):
    """Blanks after the commas (pandas' skipinitialspace): the same numbers."""
    path = tmp_path / "spaced.csv"
    path.write_text("x, y\n1.5, 2\n-3, 4.25\n")
    batch = read_batch(path)
    np.testing.assert_array_equal(numeric_columns(batch, ["x", "y"]), [[1.5, 2], [-3, 4.25]])


def test_what_pyarrow_does_not_read_as_numbers_falls_back_to_pandas(tmp_path):
    """True / False: pandas reads a boolean column, which counts as 1 / 0."""
    path = tmp_path / "flags.csv"
    path.write_text("x,flag\n1.5,True\n-3,False\n")
    batch = read_batch(path)
    np.testing.assert_array_equal(numeric_columns(batch, ["x", "flag"]), [[1.5, 1], [-3, 0]])
    assert batch.has_frame  # read by pandas


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
@pytest.mark.parametrize("bad, words", [("nan", "missing value"), ("inf", "infinite value"),
                                        ("oops", "not a number")])
def test_bad_value_is_named_by_file_column_and_row(tmp_path, suffix, bad, words):
    values = {"nan": np.nan, "inf": np.inf, "oops": "oops"}[bad]
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [0.5, 0.5, 0.5, 0.5]})
    frame["y"] = frame["y"].astype(object)
    frame.loc[2, "y"] = values
    path = tmp_path / f"bad.{suffix}"
    if suffix == "csv":
        frame.to_csv(path, index=False)
    else:
        if bad == "oops":
            frame["y"] = frame["y"].astype(str)
        else:
            frame["y"] = frame["y"].astype(float)
        frame.to_parquet(path)
    with pytest.raises(DataError, match=words) as info:
        numeric_columns(read_batch(path), ["x", "y"])
    where = (Path(info.value.path).name, info.value.column, info.value.row)
    assert where == (f"bad.{suffix}", "y", 3)


def test_missing_column_lists_the_columns(tmp_path):
    path = tmp_path / "few.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0]}), path)
    with pytest.raises(DataError, match="missing column; the file has: x"):
        numeric_columns(read_batch(path), ["x", "z"])


def test_value_above_the_bound_is_refused_with_its_row(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("x,y\n1,2\n3,1e200\n")
    with pytest.raises(DataError, match="too large") as info:
        numeric_columns(read_batch(path), ["x", "y"], max_magnitude=1e150)
    assert (info.value.column, info.value.row) == ("y", 2)


def test_fingerprint_is_of_the_bytes():
    assert fingerprint(b"x,y\n1,2\n") == fingerprint(b"x,y\n1,2\n")
    assert fingerprint(b"x,y\n1,2\n") != fingerprint(b"x,y\n1,3\n")
    assert len(fingerprint(b"")) == 32


@pytest.mark.slow
def test_regression_fit_does_not_import_pandas():
    """The regression examples are read by pyarrow alone; pandas only words errors."""
    probe = ("import sys, json; from bayescheck.reports.cli import main; "
             "rc = [main(['fit', s, '--out', o, '--quiet']) for s, o in json.loads(sys.argv[1])];"
             "print(json.dumps([rc, 'pandas' in sys.modules, 'pyarrow.csv' in sys.modules]))")
    with tempfile.TemporaryDirectory() as tmp:
        specs = [[str(ROOT / "examples/linear_regression/stream.toml"), f"{tmp}/a"],
                 [str(ROOT / "examples/linear_regression/unknown_noise.toml"), f"{tmp}/b"]]
        done = subprocess.run([sys.executable, "-c", probe, json.dumps(specs)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rc, pandas_loaded, pyarrow_loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert rc == [0, 0]
    assert pyarrow_loaded  # the probe sees a module the reader does load
    assert not pandas_loaded


# ---- categorical columns and in-memory fingerprints --------------------------------------


def _labels(pairs):
    """Each row's label (None when missing), from category_codes' (codes, labels)."""
    out = []
    for codes, labels in pairs:
        words = np.array([*labels, None], dtype=object)
        out.append(words[np.asarray(codes)].tolist())  # code -1 -> the trailing None
    return out


@pytest.fixture
def small_blocks(monkeypatch):
    """pyarrow parses 256 KiB at a time: a file of 1.5 MB comes in several chunks."""
    monkeypatch.setattr(arrow_csv, "BLOCK_BYTES", 1 << 18)


def _text_rows(rng, n):
    states = ["None", "NA", "null", "nan", "01", "1", "yes", "no", "\u00e9t\u00e9", "N/A"]
    cols = []
    for j in range(3):
        col = rng.choice(states[j * 3:j * 3 + 5], size=n).astype(object)
        col[rng.random(n) < 0.05] = ""  # empty cell: missing
        cols.append(col)
    return cols


def test_category_codes_of_a_text_csv_equal_the_pandas_reader(tmp_path, small_blocks):
    rng = np.random.default_rng(0)
    cols = _text_rows(rng, 120_000)  # about 1.5 MB: pyarrow reads it in several chunks
    # a state seen only near the end (in a late chunk)
    cols[0][-3:] = "late"
    lines = ["a,b,c"] + [",".join(r) for r in zip(*cols, strict=True)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    batch = read_batch(path, text=True)
    fast = category_codes(batch, ["c", "a"])
    assert not batch.has_frame  # read by pyarrow, no pandas
    assert len(fast[1][1]) > len(set(fast[1][1]))  # per-chunk dictionaries, labels repeat
    slow_batch = read_batch(path, text=True)
    slow_batch.frame  # noqa: B018 - a parsed frame sends category_codes to pandas
    slow = category_codes(slow_batch, ["c", "a"])
    expected = [[None if v == "" else v for v in cols[2]], [None if v == "" else v
                                                             for v in cols[0]]]
    assert _labels(fast) == _labels(slow) == expected
    # every label stands for at least one row
    for codes, labels in fast:
        assert set(np.unique(codes[codes >= 0])) == set(range(len(labels)))


@pytest.mark.parametrize("body, expected", [
    ("a,b\n x,1\ny,2\n", ["x", "y"]),            # pandas' skipinitialspace: " x" is x
    ('a,b\n"p,q",1\nr,2\n', ["p,q", "r"]),        # a quoted comma
    ('a,b\n "p,q",1\nr,2\n', ["p,q", "r"]),       # a blank, then a quoted field
    ("a,b\nx,1\n,2\n", ["x", None]),              # an empty cell is missing
])
def test_category_codes_fall_back_to_pandas_where_pyarrow_reads_differently(tmp_path, body,
                                                                             expected):
    (tmp_path / "d.csv").write_text(body)
    batch = read_batch(tmp_path / "d.csv", text=True)
    assert _labels(category_codes(batch, ["a"])) == [expected]


def _as_labels(pairs, index):
    """Each row's label (None when missing), from category_codes_as' codes of ``index``."""
    out = []
    for (codes, _), states in zip(pairs, index, strict=True):
        words = np.array([*states, None], dtype=object)
        out.append(words[np.asarray(codes)].tolist())
    return out


def _chunked_frame(cols):
    """A frame of Arrow strings, each column in three chunks, with nulls."""
    arrays = {}
    for name, col in zip("abc", cols, strict=True):
        values = [None if v == "" else v for v in col]
        third = len(values) // 3
        arrays[name] = pa.chunked_array([pa.array(values[:third], pa.string()),
                                         pa.array(values[third:2 * third], pa.string()),
                                         pa.array(values[2 * third:], pa.string())])
    return pd.DataFrame({k: pd.Series(pd.arrays.ArrowStringArray(v)) for k, v in
                         arrays.items()})


@pytest.mark.parametrize("source", ["arrow csv", "pandas csv", "chunked frame", "small csv"])
def test_category_codes_as_equal_the_labels_mapped_one_by_one(tmp_path, small_blocks, source):
    rng = np.random.default_rng(3)
    n = 400 if source == "small csv" else 120_000  # about 1.5 MB: pyarrow reads it in chunks
    cols = _text_rows(rng, n)
    cols[0][-3:] = "late"  # a state seen first in the last chunk
    expected = [[None if v == "" else v for v in col] for col in (cols[2], cols[0])]
    if source == "chunked frame":
        batch = Batch("frame 0", "", _chunked_frame(cols))
    else:
        path = tmp_path / "d.csv"
        path.write_text("\n".join(["a,b,c"] + [",".join(r) for r in zip(*cols, strict=True)])
                        + "\n")
        batch = read_batch(path, text=True)
        if source == "pandas csv":
            batch.frame  # noqa: B018 - a parsed frame sends the codes to pandas
    # states already known, in an order of their own, one of them never seen here
    index = [{"zz": 0, "01": 1}, {"yes": 0}]
    got = category_codes_as(batch, ["c", "a"], index)
    assert batch.has_frame == (source in ("pandas csv", "chunked frame"))
    assert _as_labels(got, index) == expected
    assert [gap for _, gap in got] == [True, True]
    assert list(index[0])[:2] == ["zz", "01"] and list(index[1])[:1] == ["yes"]
    for (codes, _), states in zip(got, index, strict=True):
        assert codes.min() >= -1 and codes.max() < len(states)


def test_category_codes_as_without_growing_names_the_first_row_of_an_unknown_state(
        tmp_path, small_blocks):
    rng = np.random.default_rng(4)
    cols = _text_rows(rng, 120_000)
    cols[2][70_000] = "new"  # in a later chunk
    cols[2][90_000] = "new"
    cols[2][100_000] = "another"
    path = tmp_path / "d.csv"
    path.write_text("\n".join(["a,b,c"] + [",".join(r) for r in zip(*cols, strict=True)]) + "\n")
    known = sorted({v for v in cols[2] if v not in ("", "new", "another")})
    index = [{s: k for k, s in enumerate(known)}]
    with pytest.raises(KeyError, match="new"):
        category_codes_as(read_batch(path, text=True), ["c"], index, grow=False)

    def unknown(j, label, row):
        return DataError(f"{label} at {row}", path="d.csv")

    with pytest.raises(DataError, match="new at 70000"):
        category_codes_as(read_batch(path, text=True), ["c"], index, grow=False,
                          unknown=unknown)
    assert len(index[0]) == len(known)  # nothing appended


def test_category_codes_as_keeps_a_single_chunk_in_order_without_a_copy():
    frame = pd.DataFrame({"s": pd.array(["x", "y", "x", "y"], dtype="str")})
    (codes, gap), = category_codes_as(Batch("frame 0", "", frame), ["s"], [{"x": 0}])
    assert codes.tolist() == [0, 1, 0, 1] and not gap
    assert not codes.flags.owndata  # a view of Arrow's index buffer, not a copy


def test_category_codes_of_frames_keep_str_of_values():
    frame = pd.DataFrame({"s": pd.array(["x", None, "y", "x"], dtype="str"),
                          "o": pd.Series([1, "1", None, 2.5], dtype=object),
                          "i": [3, 1, 3, 2], "f": [0.5, np.nan, 0.5, 1.0]})
    got = _labels(category_codes(Batch("frame 0", "", frame), ["s", "o", "i", "f"]))
    assert got == [["x", None, "y", "x"], ["1", "1", None, "2.5"], ["3", "1", "3", "2"],
                   ["0.5", None, "0.5", "1.0"]]


def test_frame_fingerprint_changes_with_any_cell_and_not_with_chunks_or_index():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.choice(["u", "v", "w"], 500), "b": rng.normal(size=500),
                          "c": pd.Series(rng.choice(["x", "y"], 500), dtype=object)})
    frame.loc[7, "a"] = None
    base = frame_fingerprint(frame)
    assert frame_fingerprint(frame.copy()) == base
    assert frame_fingerprint(frame.set_index(np.arange(500) + 10)) == base
    chunked = frame.copy()
    chunked["a"] = pd.array(pa.chunked_array([pa.array(frame["a"][:123], pa.large_string()),
                                              pa.array(frame["a"][123:], pa.large_string())]),
                            dtype=frame["a"].dtype)
    assert len(chunked["a"].array.__arrow_array__().chunks) == 2
    assert frame_fingerprint(chunked) == base
    changes = [("a", 3, "w" if frame.loc[3, "a"] != "w" else "u"), ("a", 7, ""),
               ("a", 8, None), ("b", 499, 0.0), ("c", 0, "z")]
    for column, row, value in changes:
        other = frame.copy()
        other.loc[row, column] = value
        assert frame_fingerprint(other) != base, (column, row, value)
    swapped = frame.copy()
    swapped.loc[[1, 2], "a"] = frame.loc[[2, 1], "a"].to_numpy()
    assert (frame.loc[1, "a"] == frame.loc[2, "a"]) or frame_fingerprint(swapped) != base
    assert frame_fingerprint(frame.rename(columns={"a": "A"})) != base


def test_category_codes_of_a_categorical_column_are_its_own_codes():
    col = pd.Categorical(["y", None, "x", "y"], categories=["y", "x", "unused"])
    frame = pd.DataFrame({"c": col})
    (codes, labels), = category_codes(Batch("frame 0", "", frame), ["c"])
    assert labels == ["y", "x", "unused"] and codes.tolist() == [0, -1, 1, 0]
    # states known in another order; held states refuse only a category some row holds
    index = [{"x": 0}]
    (codes, gap), = category_codes_as(Batch("frame 0", "", frame), ["c"], index)
    assert codes.tolist() == [1, -1, 0, 1] and gap
    assert category_codes_as(Batch("frame 0", "", frame.iloc[[2]]), ["c"], [{"x": 0}],
                             grow=False)[0][0].tolist() == [0]
    with pytest.raises(KeyError, match="'y'"):
        category_codes_as(Batch("frame 0", "", frame), ["c"], [{"x": 0, "unused": 1}],
                          grow=False)


def test_frame_fingerprint_of_categorical_columns():
    frame = pd.DataFrame({"c": pd.Categorical(["y", "x", "y"], categories=["y", "x"])})
    base = frame_fingerprint(frame)
    assert frame_fingerprint(frame.copy()) == base
    other = frame.copy()
    other.loc[1, "c"] = "y"
    assert frame_fingerprint(other) != base
    assert frame_fingerprint(frame.assign(c=frame["c"].cat.add_categories(["z"]))) != base
    assert frame_fingerprint(frame.assign(c=frame["c"].cat.as_ordered())) != base


def test_category_codes_as_names_the_label_of_the_first_unknown_row(tmp_path):
    # the first unknown row's label, not the first unknown label of a chunk's dictionary
    (tmp_path / "d.csv").write_text("c\nx\nb\nx\na\n")
    with pytest.raises(KeyError, match="'b'"):
        category_codes_as(read_batch(tmp_path / "d.csv", text=True), ["c"], [{"x": 0}],
                          grow=False)
    # categories listed "a" first: the row decides, not the labels' order
    frame = pd.DataFrame({"c": pd.Categorical(list("xbxa"), categories=["a", "b", "x"])})
    with pytest.raises(KeyError, match="'b'"):
        category_codes_as(Batch("frame 0", "", frame), ["c"], [{"x": 0}], grow=False)
