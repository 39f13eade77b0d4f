"""The pyarrow readers against the pandas frame of the same batch: the same numbers, labels,
codes, blanks handling and errors on every file, whichever reader takes it.

Each comparison reads the same file twice: as it comes (pyarrow parses the columns, unless it
declines the file) and with its pandas frame parsed first (every reader then takes its
columns from the frame, the reading that defines what a cell means). Numbers are also held
against Python's own ``float`` of the cells as the :mod:`csv` module splits them.
"""

import csv
import io

import numpy as np
import pytest
from bayescheck.data.batch import read_batch
from bayescheck.data.errors import DataError
from bayescheck.data.labels import batch_rows, category_codes, cell_codes, string_labels
from bayescheck.data.numbers import numeric_columns
from bayescheck.models.bayesian_network import BayesianNetwork
from bayescheck.models.beta_bernoulli import bernoulli_labels, category_labels
from hypothesis import given, settings
from hypothesis import strategies as st


def _outcome(read, batch):
    """``read(batch)``, or the error it raised as (message, column, row)."""
    try:
        return read(batch)
    except DataError as exc:
        return ("DataError", str(exc), exc.column, exc.row)


def _both(tmp_path, content, read, *, as_text=False, arrow=True):
    """``read`` of a fresh batch and of one whose pandas frame was parsed first.

    ``arrow``: assert that pyarrow took the fresh batch (no frame parsed); False asserts that
    it declined the file, None asserts nothing.
    """
    path = tmp_path / "d.csv"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    try:
        fresh = read_batch(path, text=as_text)
    except DataError as exc:  # the file itself (no rows): no reader's business
        return (str(exc),) * 2
    got = _outcome(read, fresh)
    if arrow is not None:
        assert fresh.has_frame != arrow
    # the frame parsed first: every reader then takes its columns from it
    return got, _outcome(lambda b: (b.frame, read(b))[1], read_batch(path, text=as_text))


def _same(got, want):
    """Equal results (values equal as numbers: pyarrow reads ``-0`` as -0.0, pandas as 0)."""
    if isinstance(got, np.ndarray):
        assert isinstance(want, np.ndarray) and got.dtype == want.dtype
        assert got.shape == want.shape and got.tolist() == want.tolist()
    else:
        assert got == want


NUMBERS = [
    "x,y\n1,2\n3,4\n",
    "x,y\r\n1.5,-2\r\n.25,3.\r\n",                       # CR LF, a leading and a trailing point
    "x,y\n1e3,-2.5E-3\n0.1,0.7\n\n\n",                    # exponents, blank lines at the end
    "\ufeffx,y\n123456789012345678901234567890,1e-320\n0.30000000000000004,2\n",  # BOM, long
    "a,x,b\nq,1,r\nz,2,w\n",                             # text in columns not asked for
]


def _python_floats(content: str, columns) -> np.ndarray:
    """The cells split by the csv module, each read by Python's float (correctly rounded)."""
    rows = [r for r in csv.reader(io.StringIO(content.removeprefix("\ufeff"))) if r]
    header = rows[0]
    return np.array([[float(r[header.index(c)]) for c in columns] for r in rows[1:]])


@pytest.mark.parametrize("text", NUMBERS)
def test_numbers_equal_pythons_floats_bit_for_bit(tmp_path, text):
    columns = ["x"] if "a," in text else ["x", "y"]
    path = tmp_path / "d.csv"
    path.write_text(text)
    batch = read_batch(path)
    got = numeric_columns(batch, columns, ones_first=True)
    assert not batch.has_frame
    assert got.flags.f_contiguous and got.dtype == np.float64
    assert (got[:, 0] == 1.0).all()
    assert got[:, 1:].tobytes() == np.asfortranarray(_python_floats(text, columns)).tobytes()


def test_random_decimals_equal_pythons_floats_bit_for_bit(tmp_path):
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, size=200),
                             rng.integers(-10 ** 9, 10 ** 9, size=50)])
    cells = [repr(v) if i % 3 else f"{v:.17g}" for i, v in enumerate(values.tolist())]
    text = "x\n" + "".join(f"{c}\n" for c in cells)
    path = tmp_path / "d.csv"
    path.write_text(text)
    got = numeric_columns(read_batch(path), ["x"])
    assert got[:, 0].tobytes() == np.array([float(c) for c in cells]).tobytes()


@pytest.mark.parametrize("text", [
    'x,y\n"1",2\n',            # a quoted number
    "x,y\n1,2\r3,4\n",         # a lone CR
    "x,y\n1,2\n\n3,4\n",       # a blank line inside
    "x,y\n1,2\n3\n",           # a short row
    "x,y\n1,2,3\n4,5\n",       # a long row
    "x, y\n1.5, 2\n-3, 4.25\n",  # blanks after the commas
])
def test_unusual_files_read_as_the_frame_reads_them(tmp_path, text):
    got, want = _both(tmp_path, text, lambda b: numeric_columns(b, ["x", "y"]), arrow=None)
    _same(got, want)


@pytest.mark.parametrize("cell", ["+1", " 1", "1 ", "inf", "nan", "NA", "1_000", "0x10", "True",
                                  ""])
def test_numbers_the_readers_might_read_differently(tmp_path, cell):
    got, want = _both(tmp_path, f"x,y\n1,2\n{cell},3\n",
                      lambda b: numeric_columns(b, ["x", "y"]), arrow=None)
    _same(got, want)


def test_a_bad_number_is_named_as_before(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,y\n1,2\n3,oops\n")
    with pytest.raises(DataError, match="not a number: 'oops'") as info:
        numeric_columns(read_batch(path), ["x", "y"])
    assert (info.value.column, info.value.row) == ("y", 2)


LABELS = "c,n\nSunny,1\nRain , 2\nN/A x,3\nnone,4\n"


@pytest.mark.parametrize("as_text", [False, True])
def test_labels_equal_pandas(tmp_path, as_text):
    got, want = _both(tmp_path, LABELS, lambda b: string_labels(b, "c"), as_text=as_text)
    assert got.dtype == want.dtype == object
    assert got.tolist() == want.tolist() == ["Sunny", "Rain", "N/A x", "none"]


@pytest.mark.parametrize("as_text", [False, True])
@pytest.mark.parametrize("cells", [("Yes ", " Yes", "Yes"), ("No ", "\tNo", " No  ")])
def test_blanks_around_a_label_give_the_same_label(tmp_path, as_text, cells):
    """pandas skips the blanks before a cell and keeps those after it: both are dropped."""
    text = "c,n\n" + "".join(f"{c},{i}\n" for i, c in enumerate(cells))
    got, want = _both(tmp_path, text, lambda b: string_labels(b, "c"), as_text=as_text,
                      arrow=None)
    assert got.tolist() == want.tolist() == [cells[-1].strip()] * 3
    batch = read_batch(tmp_path / "d.csv", text=as_text)
    (codes, labels), = category_codes(batch, ["c"])
    assert {labels[k] for k in codes} == {cells[-1].strip()}


@pytest.mark.parametrize("as_text", [False, True])
def test_a_blank_cell_is_missing_and_na_is_missing_whichever_side_its_blank(tmp_path, as_text):
    for cell in ("", "  ", " NA", "NA "):
        got, want = _both(tmp_path, f"c,n\nSunny,1\n{cell},2\n",
                          lambda b: string_labels(b, "c"), as_text=as_text, arrow=None)
        if as_text and cell.strip():
            assert got.tolist() == want.tolist() == ["Sunny", "NA"]
        else:
            assert got == want and got[0] == "DataError" and got[2:] == ("c", 2), cell


@pytest.mark.parametrize("cell", ["NA", "nan", "None", "1", "01", "1.5", "True", "false",
                                  '" a"', 'a"b'])
def test_labels_pandas_reads_otherwise_are_left_to_pandas(tmp_path, cell):
    """pandas (not text) reads these as missing, numbers or booleans; quotes as pandas does."""
    got, want = _both(tmp_path, f"c,n\nSunny,1\n{cell},2\n", lambda b: string_labels(b, "c"),
                      arrow=None if cell == '" a"' else False)
    _same(got, want)


def test_text_batches_keep_what_pandas_keeps_as_text(tmp_path):
    """Read as text, ``NA``, ``01`` and ``True`` are labels and an empty cell is missing."""
    text = "a,b\nNA,01\nTrue,\nnull,x\n"
    got, want = _both(tmp_path, text, lambda b: string_labels(b, "a"), as_text=True)
    assert got.tolist() == want.tolist() == ["NA", "True", "null"]
    got, want = _both(tmp_path, text, lambda b: string_labels(b, "b"), as_text=True,
                      arrow=None)
    assert got == want and got[0] == "DataError" and got[2:] == ("b", 2)
    codes, labels = cell_codes(read_batch(tmp_path / "d.csv", text=True), "b")
    assert [None if k < 0 else labels[k] for k in codes] == ["01", None, "x"]
    got, want = _both(tmp_path, "a\n x\n", lambda b: string_labels(b, "a"), as_text=True,
                      arrow=None)  # the blank is dropped by either reader
    assert got.tolist() == want.tolist() == ["x"]


@pytest.mark.parametrize("column", ["1,0,1,1", "0,0", "1,1,0"])
def test_bernoulli_outcomes_equal_pandas(tmp_path, column):
    text = "y\n" + column.replace(",", "\n") + "\n"
    got, want = _both(tmp_path, text, lambda b: bernoulli_labels(b, "y"))
    assert got.dtype == want.dtype == np.int8
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("column, labels", [
    ("1,3,007,-0,6", ["1", "3", "7", "0", "6"]),
    ("red,blue ,green", ["red", "blue", "green"]),
])
def test_category_labels_equal_pandas(tmp_path, column, labels):
    text = "y\n" + column.replace(",", "\n") + "\n"
    got, want = _both(tmp_path, text, lambda b: category_labels(b, "y"))
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist() == labels


@pytest.mark.parametrize("column", ["1,2.5", "1,red", "true,false", "1,NA", "yes,0"])
def test_mixed_outcomes_and_labels_are_left_to_pandas(tmp_path, column):
    text = "y\n" + column.replace(",", "\n") + "\n"
    _same(*_both(tmp_path, text, lambda b: bernoulli_labels(b, "y"), arrow=False))
    _same(*_both(tmp_path, text, lambda b: category_labels(b, "y"), arrow=False))


def test_a_label_outside_the_declared_categories_is_worded_by_pandas(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("y\n1\n2\n9\n")
    with pytest.raises(DataError, match="label 9 is not one of the declared") as info:
        category_labels(read_batch(path), "y", categories=["1", "2"])
    assert info.value.row == 3


def test_network_states_and_codes_equal_pandas(tmp_path):
    text = "a,b\nyes,no\n,no\nno,yes\nyes,\n"
    net = BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"),))

    def read(batch):
        source = type("Source", (), {"batches": lambda self: iter([batch])})()
        states = net.states(source)
        return states, net.codes(batch, states), batch_rows(batch)

    got, want = _both(tmp_path, text, read, as_text=True)
    assert got[0] == want[0] == {"a": ("no", "yes"), "b": ("no", "yes")}
    assert got[1].tolist() == want[1].tolist() == [[1, 0], [-1, 0], [0, 1], [1, -1]]
    assert got[2] == want[2] == 4


def test_a_network_state_not_seen_before_is_named_with_its_row(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b\nyes,no\nmaybe,no\n")
    net = BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"),))
    with pytest.raises(DataError, match="state 'maybe' not among") as info:
        net.codes(read_batch(path, text=True), {"a": ("no", "yes"), "b": ("no",)})
    assert (info.value.column, info.value.row) == ("a", 2)


def _decoded(pairs):
    """Each column's codes as the labels they stand for (None for missing)."""
    return [[None if k < 0 else labels[k] for k in codes] for codes, labels in pairs]


def test_category_codes_of_a_text_file_equal_pandas(tmp_path):
    text = "a,b,c\nx,1,None\ny,,None\nx,2,NA\n,1,z\n"
    got, want = _both(tmp_path, text, lambda b: _decoded(category_codes(b, ["a", "b", "c"])),
                      as_text=True)
    assert got == want
    assert got[2] == ["None", "None", "NA", "z"]  # text states stay states
    assert got[0][3] is None


# ---- any file: whichever reader takes it, the same answer ----------------------------------

#: Cells whose reading pyarrow and pandas could dispute, and plain ones.
CELLS = ["a", "b", "Rain ", "é", "0", "1", "01", "-2", "1.5", "1e3", "+1", " 1", "1 ", "inf",
         "nan", "NA", "None", "null", "", "True", "false", " a", '"q"', '"a,b"', '" a"', 'a"b',
         "N/A x", "#N/A", "TRUE", "1.0", "-0", "007", "\ta", "\u00a0a", "x\ty"]


@st.composite
def _files(draw):
    width = draw(st.integers(1, 3))
    ragged = draw(st.booleans())  # rows with fewer or more values than the header names
    rows = draw(st.lists(st.lists(st.sampled_from(CELLS), min_size=width - ragged,
                                  max_size=width + ragged), min_size=1, max_size=6))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    names = ["c0", "c1", "c2"][:width]
    return newline.join([",".join(names)] + [",".join(r) for r in rows]) + newline


def _readers(width):
    columns = ["c0", "c1", "c2"][:width]
    return [lambda b: string_labels(b, "c0"),
            lambda b: _decoded(category_codes(b, columns)),
            lambda b: bernoulli_labels(b, "c0"),
            lambda b: category_labels(b, "c0"),
            lambda b: numeric_columns(b, columns),
            batch_rows]


@settings(deadline=None, database=None, max_examples=100)
@given(_files(), st.booleans())
def test_any_file_reads_alike_through_pyarrow_and_through_pandas(tmp_path_factory, content,
                                                                  as_text):
    tmp_path = tmp_path_factory.mktemp("agree")
    width = content.split("\n", 1)[0].count(",") + 1
    for read in _readers(width):
        got, want = _both(tmp_path, content, read, as_text=as_text, arrow=None)
        _same(got, want)


@pytest.mark.parametrize("as_text", [False, True])
def test_a_label_that_is_not_utf8_is_worded_by_pandas(tmp_path, as_text):
    content = b"c,n\nSunny,1\n" + "Rain\u00e9".encode("latin-1") + b",2\n"
    for read in (lambda b: string_labels(b, "c"), lambda b: _decoded(category_codes(b, ["c"]))):
        got, want = _both(tmp_path, content, read, as_text=as_text, arrow=None)
        assert got == want and got[0] == "DataError" and "cannot parse" in got[1]
