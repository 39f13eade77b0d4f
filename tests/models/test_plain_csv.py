"""The small plain CSV path (``str.split``, no pyarrow, no pandas) against the readers it
stands in for: the same numbers, labels and errors on every file it takes, and every cell whose
reading the readers could dispute is left to them.

Each comparison reads the same file twice: as it comes (small, so the plain path) and with
``SMALL_CSV = 0`` (pyarrow for numbers, pandas for labels, as before that path existed).
"""

import bayescheck.models.data as data
import numpy as np
import pytest
from bayescheck.models.bayesian_network import BayesianNetwork
from bayescheck.models.beta_bernoulli import bernoulli_labels, category_labels
from bayescheck.models.data import (
    _plain_table,
    batch_rows,
    label_values,
    numeric_columns,
    read_batch,
    string_labels,
)
from bayescheck.models.errors import DataError


def _both(tmp_path, monkeypatch, text, read, *, as_text=False):
    """``read(batch)`` on the plain path and on the readers' path; asserts which was taken."""
    path = tmp_path / "d.csv"
    path.write_text(text)
    plain = read_batch(path, text=as_text)
    got = read(plain)
    assert _plain_table(plain) is not None and "frame" not in plain._cache
    with monkeypatch.context() as m:
        m.setattr(data, "SMALL_CSV", 0)
        other = read_batch(path, text=as_text)
        want = read(other)
        assert _plain_table(other) is None
    return got, want


NUMBERS = [
    "x,y\n1,2\n3,4\n",
    "x,y\r\n1.5,-2\r\n.25,3.\r\n",                       # CR LF, a leading and a trailing point
    "x,y\n1e3,-2.5E-3\n0.1,0.7\n\n\n",                    # exponents, blank lines at the end
    "\ufeffx,y\n123456789012345678901234567890,1e-320\n0.30000000000000004,2\n",  # BOM, long
    "a,x,b\nq,1,r\nz,2,w\n",                             # text in columns not asked for
]


@pytest.mark.parametrize("text", NUMBERS)
def test_plain_numbers_equal_pyarrow_bit_for_bit(tmp_path, monkeypatch, text):
    got, want = _both(tmp_path, monkeypatch, text,
                      lambda b: numeric_columns(b, ["x"] if "a," in text else ["x", "y"],
                                                ones_first=True))
    assert got.flags.f_contiguous and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


def test_random_decimals_equal_pyarrow_bit_for_bit(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, size=200),
                             rng.integers(-10 ** 9, 10 ** 9, size=50)])
    cells = [repr(v) if i % 3 else f"{v:.17g}" for i, v in enumerate(values.tolist())]
    text = "x\n" + "".join(f"{c}\n" for c in cells)
    got, want = _both(tmp_path, monkeypatch, text, lambda b: numeric_columns(b, ["x"]))
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("text", [
    'x,y\n"1",2\n',            # a quote anywhere
    "x,y\n1,2\r3,4\n",         # a lone CR
    "x,y\n1,2\n\n3,4\n",       # a blank line inside
    "x,y\n1,2\n3\n",           # a short row
    "x,y\n1,2,3\n4,5\n",       # a long row
])
def test_files_the_plain_path_does_not_take(tmp_path, text):
    path = tmp_path / "d.csv"
    path.write_bytes(text.encode())
    assert _plain_table(read_batch(path)) is None


def test_a_file_above_the_size_limit_is_not_split(tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    path.write_text("x\n1\n2\n")
    monkeypatch.setattr(data, "SMALL_CSV", 5)
    assert _plain_table(read_batch(path)) is None


@pytest.mark.parametrize("cell", ["+1", " 1", "1 ", "inf", "nan", "NA", "1_000", "0x10", "True",
                                  ""])
def test_numbers_the_readers_might_read_differently_are_left_to_them(tmp_path, monkeypatch,
                                                                     cell):
    path = tmp_path / "d.csv"
    path.write_text(f"x,y\n1,2\n{cell},3\n")
    batch = read_batch(path)
    assert data._small_numeric(batch, ["x", "y"], False, 1e300) is None
    monkeypatch.setattr(data, "SMALL_CSV", 0)
    try:
        want = numeric_columns(read_batch(path), ["x", "y"])
    except DataError as exc:
        with pytest.raises(DataError) as info:
            numeric_columns(batch, ["x", "y"])
        assert (str(info.value), info.value.row) == (str(exc), exc.row)
    else:
        assert numeric_columns(batch, ["x", "y"]).tobytes() == want.tobytes()


def test_a_bad_number_is_named_as_before(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,y\n1,2\n3,oops\n")
    with pytest.raises(DataError, match="not a number: 'oops'") as info:
        numeric_columns(read_batch(path), ["x", "y"])
    assert (info.value.column, info.value.row) == ("y", 2)


LABELS = "c,n\nSunny,1\nRain , 2\nN/A x,3\nnone,4\n"


@pytest.mark.parametrize("as_text", [False, True])
def test_plain_labels_equal_pandas(tmp_path, monkeypatch, as_text):
    got, want = _both(tmp_path, monkeypatch, LABELS, lambda b: string_labels(b, "c"),
                      as_text=as_text)
    assert got.dtype == want.dtype == object
    assert got.tolist() == want.tolist() == ["Sunny", "Rain ", "N/A x", "none"]


@pytest.mark.parametrize("cell", ["NA", "nan", "None", "1", "01", "1.5", "True", "false", " a",
                                  ""])
def test_labels_pandas_reads_otherwise_are_left_to_pandas(tmp_path, monkeypatch, cell):
    """pandas (not text) reads these as missing, numbers, booleans or strips the blank."""
    path = tmp_path / "d.csv"
    path.write_text(f"c,n\nSunny,1\n{cell},2\n")
    batch = read_batch(path)
    assert label_values(batch, "c") is None
    monkeypatch.setattr(data, "SMALL_CSV", 0)
    try:
        want = string_labels(read_batch(path), "c")
    except DataError as exc:
        with pytest.raises(DataError) as info:
            string_labels(batch, "c")
        assert (str(info.value), info.value.row) == (str(exc), exc.row)
    else:
        assert string_labels(batch, "c").tolist() == want.tolist()


def test_text_batches_keep_what_pandas_keeps_as_text(tmp_path, monkeypatch):
    """Read as text, ``NA``, ``01`` and ``True`` are labels and an empty cell is missing."""
    text = "a,b\nNA,01\nTrue,\nnull,x\n"
    path = tmp_path / "d.csv"
    path.write_text(text)
    batch = read_batch(path, text=True)
    assert label_values(batch, "a").tolist() == ["NA", "True", "null"]
    assert label_values(batch, "b").tolist() == ["01", None, "x"]
    got, want = _both(tmp_path, monkeypatch, text, lambda b: string_labels(b, "a"), as_text=True)
    assert got.tolist() == want.tolist()
    with pytest.raises(DataError, match="missing value") as info:
        string_labels(batch, "b")
    assert info.value.row == 2
    assert label_values(read_batch(path, text=True), "a") is not None
    path.write_text("a\n x\n")
    assert label_values(read_batch(path, text=True), "a") is None  # pandas skips the blank


@pytest.mark.parametrize("column", ["1,0,1,1", "0,0", "1,1,0"])
def test_bernoulli_outcomes_equal_pandas(tmp_path, monkeypatch, column):
    text = "y\n" + column.replace(",", "\n") + "\n"
    got, want = _both(tmp_path, monkeypatch, text, lambda b: bernoulli_labels(b, "y"))
    assert got.dtype == want.dtype == np.int8
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("column, labels", [
    ("1,3,007,-0,6", ["1", "3", "7", "0", "6"]),
    ("red,blue ,green", ["red", "blue", "green"]),
])
def test_category_labels_equal_pandas(tmp_path, monkeypatch, column, labels):
    text = "y\n" + column.replace(",", "\n") + "\n"
    got, want = _both(tmp_path, monkeypatch, text, lambda b: category_labels(b, "y"))
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist() == labels


@pytest.mark.parametrize("column", ["1,2.5", "1,red", "true,false", "1,NA", "yes,0"])
def test_mixed_outcomes_and_labels_are_left_to_pandas(tmp_path, column):
    path = tmp_path / "d.csv"
    path.write_text("y\n" + column.replace(",", "\n") + "\n")
    batch = read_batch(path)
    try:
        bernoulli_labels(batch, "y")
    except DataError:
        pass
    assert "frame" in batch._cache
    batch = read_batch(path)
    try:
        category_labels(batch, "y")
    except DataError:
        pass
    assert "frame" in batch._cache


def test_a_label_outside_the_declared_categories_is_worded_by_pandas(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("y\n1\n2\n9\n")
    with pytest.raises(DataError, match="label 9 is not one of the declared") as info:
        category_labels(read_batch(path), "y", categories=["1", "2"])
    assert info.value.row == 3


def test_network_states_and_codes_equal_pandas(tmp_path, monkeypatch):
    text = "a,b\nyes,no\n,no\nno,yes\nyes,\n"
    net = BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"),))

    def read(batch):
        source = type("Source", (), {"batches": lambda self: iter([batch])})()
        states = net.states(source)
        return states, net.codes(batch, states), batch_rows(batch)

    got, want = _both(tmp_path, monkeypatch, text, read, as_text=True)
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


def test_category_codes_of_a_plain_file_equal_pyarrows(tmp_path, monkeypatch):
    text = "a,b,c\nx,1,None\ny,,None\nx,2,NA\n,1,z\n"
    got, want = _both(tmp_path, monkeypatch, text,
                      lambda b: data.category_codes(b, ["a", "b", "c"]), as_text=True)
    assert _decoded(got) == _decoded(want)
    assert _decoded(got)[2] == ["None", "None", "NA", "z"]  # text states stay states
    assert _decoded(got)[0][3] is None
