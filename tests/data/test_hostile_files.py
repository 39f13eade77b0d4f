"""Files an attacker or a careless user may give: other line ends, RFC 4180 headers, ragged
rows, names that are not regular files. Each is read as pandas reads it or refused naming
the file and the row.
"""

import io

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.batch import read_batch
from bayescheck.data.errors import DataError
from bayescheck.data.labels import string_labels
from bayescheck.data.numbers import numeric_columns
from bayescheck.data.sources import DataSource


def _write(tmp_path, content: bytes, name="d.csv"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("end", [b"\r", b"\r\n", b"\n"])
def test_every_line_end_reads_the_same_numbers_and_labels(tmp_path, end):
    content = end.join([b"x,y,c", b"1.5,2,Yes", b"-3,4.25,No", b"7,8,Yes"]) + end
    path = _write(tmp_path, content)
    batch = read_batch(path)
    np.testing.assert_array_equal(numeric_columns(batch, ["x", "y"]),
                                  [[1.5, 2], [-3, 4.25], [7, 8]])
    assert string_labels(batch, "c").tolist() == ["Yes", "No", "Yes"]
    assert DataSource(path).columns() == ["x", "y", "c"]
    # and as pandas reads it, whole
    want = pd.read_csv(io.BytesIO(content))
    assert read_batch(path).frame.to_dict("list") == want.to_dict("list")


def test_a_quoted_header_name_with_a_line_break_is_one_column_as_in_pandas(tmp_path):
    content = b'"x\nfirst","y, second"\r\n1,2\n3,4\n'
    path = _write(tmp_path, content)
    want = pd.read_csv(io.BytesIO(content))
    assert list(want.columns) == ["x\nfirst", "y, second"]
    batch = read_batch(path)
    assert batch.columns == list(want.columns)
    assert DataSource(path).columns() == list(want.columns)
    got = numeric_columns(batch, list(want.columns))
    np.testing.assert_array_equal(got, want.to_numpy(dtype=float))
    assert not batch.has_frame  # pyarrow read the rows after the header
    assert read_batch(path).frame.to_numpy().tolist() == want.to_numpy().tolist()


def test_a_long_header_is_read_past_the_first_block(tmp_path):
    names = [f"column_{i:06d}" for i in range(20_000)]  # about 280 kB of header
    path = _write(tmp_path, (",".join(names) + "\r" + ",".join("1" * len(names)) + "\r")
                  .encode())
    assert DataSource(path).columns() == names


@pytest.mark.parametrize("as_text", [False, True])
@pytest.mark.parametrize("rows, bad, values", [
    (b"1,2\n3\n5,6\n", 2, 1),          # short: not a missing cell
    (b"1,2\n\n3,4,5\n", 2, 3),         # long, after a blank line (not counted)
    (b'1,2\n"a\nb",4\n9\n', 3, 1),      # a quoted line break inside row 2
])
def test_a_ragged_row_is_refused_naming_its_row(tmp_path, rows, bad, values, as_text):
    path = _write(tmp_path, b"x,y\n" + rows)
    for read in (lambda b: numeric_columns(b, ["x", "y"]), lambda b: string_labels(b, "y"),
                 lambda b: b.frame):
        with pytest.raises(DataError, match=f"the row has {values} values but the header "
                                            f"names 2 columns") as info:
            read(read_batch(path, text=as_text))
        assert (info.value.path, info.value.row) == (str(path), bad)


def test_a_missing_cell_is_still_a_missing_value(tmp_path):
    path = _write(tmp_path, b"x,y\n1,2\n3,\n")
    with pytest.raises(DataError, match="missing value") as info:
        numeric_columns(read_batch(path), ["x", "y"])
    assert (info.value.column, info.value.row) == ("y", 2)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_a_name_that_is_not_a_regular_file_is_refused_without_reading_it(tmp_path, target):
    # A named pipe is read (tests/inference/test_streaming.py streams through one).
    link = tmp_path / "data.csv"
    link.symlink_to(target)
    with pytest.raises(DataError, match=r"not a regular file \(a (device|named pipe)\)"):
        DataSource(link).files()
    with pytest.raises(DataError, match="not a regular file") as info:
        read_batch(link)
    assert info.value.path == str(link)
    with pytest.raises(DataError, match="not a regular file"):
        DataSource(tmp_path / "*.csv").files()


@pytest.mark.parametrize("cells", [[[1, 2], [3], [1, 2]], [{"u": 1}, {"u": 2}, {"u": 1}]])
def test_a_parquet_list_or_struct_column_is_refused_naming_it(tmp_path, cells):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"x": cells, "y": [1.0, 2.0, 3.0], "c": ["a", "b", "a"]}).to_parquet(path)
    for read in (lambda b: numeric_columns(b, ["y", "x"]), lambda b: string_labels(b, "x")):
        with pytest.raises(DataError, match="every cell must be one label or number") as info:
            read(read_batch(path))
        assert (info.value.column, info.value.row) == ("x", 1)
    assert string_labels(read_batch(path), "c").tolist() == ["a", "b", "a"]


def test_a_network_on_a_parquet_list_column_exits_2_naming_the_column(tmp_path, capsys):
    from bayescheck.reports.cli import main
    pd.DataFrame({"a": [[1, 2], [3], [1, 2], [3]], "b": ["x", "y", "x", "y"]}).to_parquet(
        tmp_path / "d.parquet")
    spec = tmp_path / "net.toml"
    spec.write_text('model = "bayesian_network"\n[data]\npath = "d.parquet"\n'
                    '[structure]\nedges = [["a", "b"]]\n')
    assert main(["fit", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "d.parquet, column 'a', row 1: the cells hold ndarray values" in err
