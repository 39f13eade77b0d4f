"""Issue 14 as properties: whatever is done to a valid spec and its data, ``bayescheck fit``
exits 0 or 2, never with a traceback, and on 0 every number it writes is finite.

Hypothesis draws a valid case for one of several families (spec and CSV), then one
corruption of its values, types, shape, encoding, header or file. Corruptions that do not
change the data's meaning (CRLF line ends, a byte-order mark, another column order, blanks
around header names) must give exactly the clean data's result.

Runs in-process through :func:`bayescheck.reports.cli.main`. Profiles: see ``conftest.py``.
"""

from __future__ import annotations

import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from bayescheck.reports.cli import main
from hypothesis import given
from hypothesis import strategies as st


@dataclass(frozen=True)
class Case:
    """A spec and its data: TOML entries (section, key, TOML literal) and CSV cells."""

    family: str
    entries: tuple[tuple[str, str, str], ...]
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    # Paths in posterior.json that may be null for this family (it has no evidence).
    nullable: frozenset = frozenset()

    def spec_text(self) -> str:
        sections: dict[str, list[str]] = {}
        for section, key, literal in self.entries:
            sections.setdefault(section, []).append(f"{key} = {literal}")
        top = sections.pop("", [])
        body = "\n".join(top) + "\n"
        for section, lines in sections.items():  # "[query]" gives an array table, [[query]]
            body += f"[{section}]\n" + "\n".join(lines) + "\n"
        return body

    def csv_bytes(self) -> bytes:
        lines = [",".join(self.header)] + [",".join(r) for r in self.rows]
        return ("\n".join(lines) + "\n").encode()


def _number(x: float) -> str:
    return repr(float(x))


finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def linear_regression(draw) -> Case:
    d = draw(st.integers(1, 3))
    n = draw(st.integers(d + 2, 25))
    names = [f"x{i}" for i in range(1, d + 1)]
    rows = tuple(tuple(_number(draw(finite)) for _ in range(d + 1)) for _ in range(n))
    known = draw(st.booleans())
    entries = [("", "model", '"linear_regression"'), ("data", "path", '"data.csv"'),
               ("data", "target", '"y"'), ("data", "features", json.dumps(names)),
               ("data", "intercept", draw(st.sampled_from(["true", "false"]))),
               ("prior", "mean", "0.0"), ("prior", "cov", _number(draw(st.floats(0.1, 100))))]
    if known:
        entries.append(("likelihood", "noise_sd", _number(draw(st.floats(0.1, 10)))))
    return Case("linear_regression", tuple(entries), (*names, "y"), rows)


@st.composite
def ard(draw) -> Case:
    d = draw(st.integers(1, 4))
    n = draw(st.integers(d + 2, 25))
    names = [f"x{i}" for i in range(1, d + 1)]
    rows = tuple(tuple(_number(draw(finite)) for _ in range(d + 1)) for _ in range(n))
    entries = (("", "model", '"ard"'), ("data", "path", '"data.csv"'), ("data", "target", '"y"'),
               ("data", "features", json.dumps(names)))
    # A pruned weight has an infinite precision alpha, written as null on purpose; a fit from
    # one start has no gap to a second start.
    return Case("ard", entries, (*names, "y"), rows,
                frozenset({".parameters.alpha.value[]", ".fit.certificate.start_gap"}))


@st.composite
def beta_bernoulli(draw) -> Case:
    n = draw(st.integers(1, 25))
    rows = tuple((draw(st.sampled_from(["0", "1", "true", "false"])),
                  _number(draw(finite))) for _ in range(n))
    entries = (("", "model", '"beta_bernoulli"'), ("data", "path", '"data.csv"'),
               ("data", "target", '"y"'), ("prior", "a", _number(draw(st.floats(0.1, 10)))),
               ("prior", "b", _number(draw(st.floats(0.1, 10)))))
    return Case("beta_bernoulli", entries, ("y", "other"), rows)


labels = st.sampled_from(["a", "b", "c", "1", "2", "2.0", "x y"])


@st.composite
def dirichlet_categorical(draw) -> Case:
    rows = tuple((draw(labels), _number(draw(finite)))
                 for _ in range(draw(st.integers(0, 20))))
    rows = (("a", "0.0"), ("b", "1.0"), *rows)  # at least two categories
    entries = (("", "model", '"dirichlet_categorical"'), ("data", "path", '"data.csv"'),
               ("data", "target", '"face"'),
               ("prior", "concentration", _number(draw(st.floats(0.1, 10)))))
    return Case("dirichlet_categorical", entries, ("face", "other"), rows)


@st.composite
def naive_bayes(draw) -> Case:
    rows = tuple((draw(labels), draw(labels), draw(st.sampled_from(["yes", "no"])))
                 for _ in range(draw(st.integers(0, 20))))
    rows = (("a", "b", "yes"), ("b", "a", "no"), *rows)
    entries = (("", "model", '"naive_bayes"'), ("data", "path", '"data.csv"'),
               ("data", "target", '"c"'), ("data", "features", '["f", "g"]'),
               ("data", "features_kind", '"categorical"'),
               ("prior", "smoothing", draw(st.sampled_from(["true", "false"]))))
    return Case("naive_bayes", entries, ("f", "g", "c"), rows,
                frozenset({".log_evidence", ".parameters.settings.nig_prior"}))


@st.composite
def gaussian_mixture(draw) -> Case:
    n = draw(st.integers(6, 20))
    rows = tuple((_number(draw(finite)) if i % 2 else _number(draw(finite) + 500),
                  _number(draw(finite))) for i in range(n))
    entries = (("", "model", '"gaussian_mixture"'), ("", "n_components", "2"),
               ("", "covariance", '"diag"'),
               ("data", "path", '"data.csv"'), ("data", "features", '["u", "v"]'),
               ("fit", "n_init", "1"), ("fit", "max_iter", "50"), ("fit", "seed", "0"))
    return Case("gaussian_mixture", entries, ("u", "v"), rows, frozenset({".log_evidence"}))


valid_cases = st.one_of(linear_regression(), ard(), beta_bernoulli(), dirichlet_categorical(),
                        naive_bayes(), gaussian_mixture())

# ---- corruptions -----------------------------------------------------------------------------

bad_cells = st.one_of(
    st.sampled_from(["", " ", "abc", "nan", "NaN", "inf", "-inf", "1e200", "-1e308", "1e400",
                     "1e-320", "1e155", "0x10", "NULL", "None", "true", "\u221e", "1 000",
                     "99999999999999999999999", '"1"', "'1'", "1.0.0", "--1"]),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=6),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
bad_literals = st.sampled_from(['"1"', "-1.0", "0", "1e-320", "1e308", "nan", "inf", "-inf",
                                "true", "[]", "[1.0, 2.0, 3.0, 4.0, 5.0]", "[[1.0, 2.0], [3.0]]",
                                "{}", '"data.csv"', '"zzz"', "100000"])


def _raw(case: Case, *, spec: str | None = None, data: bytes | None = None):
    return (spec if spec is not None else case.spec_text(),
            data if data is not None else case.csv_bytes())


@st.composite
def corrupted(draw, case: Case):
    """One corruption of ``case``: returns (what, spec text or bytes, data bytes)."""
    kind = draw(st.sampled_from(["cell", "drop_column", "duplicate_header", "ragged",
                                 "truncate", "latin1", "spec_value", "spec_encoding",
                                 "unknown_key", "empty_rows", "swap_header"]))
    rows = [list(r) for r in case.rows]
    header = list(case.header)
    if kind == "cell":
        i = draw(st.integers(0, len(rows) - 1))
        j = draw(st.integers(0, len(header) - 1))
        rows[i][j] = draw(bad_cells)
        return kind, *_raw(replace(case, rows=tuple(map(tuple, rows))))
    if kind == "drop_column":
        j = draw(st.integers(0, len(header) - 1))
        header.pop(j)
        rows = [r[:j] + r[j + 1:] for r in rows]
        if not header:
            return kind, *_raw(case, data=b"\n")
        return kind, *_raw(replace(case, header=tuple(header), rows=tuple(map(tuple, rows))))
    if kind == "duplicate_header" and len(header) > 1:
        i, j = draw(st.permutations(range(len(header))))[:2]
        header[j] = header[i]
        return kind, *_raw(replace(case, header=tuple(header)))
    if kind == "ragged":
        i = draw(st.integers(0, len(rows) - 1))
        rows[i] = rows[i] + ["1.0"] if draw(st.booleans()) else rows[i][:-1]
        return kind, *_raw(replace(case, rows=tuple(map(tuple, rows))))
    if kind == "truncate":
        data = case.csv_bytes()
        return kind, *_raw(case, data=data[:draw(st.integers(0, len(data) - 1))])
    if kind == "latin1":
        i = draw(st.integers(0, len(rows)))  # len(rows): the header
        j = draw(st.integers(0, len(header) - 1))
        target = header if i == len(rows) else rows[i]
        target[j] = target[j] + "\u00e9"
        lines = [",".join(header)] + [",".join(r) for r in rows]
        return kind, *_raw(case, data=("\n".join(lines) + "\n").encode("latin-1", "replace"))
    if kind == "spec_value":
        entries = list(case.entries)
        k = draw(st.integers(0, len(entries) - 1))
        section, key, _ = entries[k]
        entries[k] = (section, key, draw(bad_literals))
        return kind, *_raw(replace(case, entries=tuple(entries)))
    if kind == "spec_encoding":
        text = (case.spec_text() + "# caf\u00e9\n").encode("latin-1", "replace")
        return kind, text, case.csv_bytes()
    if kind == "unknown_key":
        section = draw(st.sampled_from(["", "data", "prior"]))
        return kind, *_raw(replace(case, entries=(*case.entries, (section, "colour", '"red"'))))
    if kind == "empty_rows":
        return kind, *_raw(replace(case, rows=()))
    # swap_header (and duplicate_header with a single column): the target renamed away
    header[0] = header[0] + "_renamed"
    return kind, *_raw(replace(case, header=tuple(header)))


def _harmless(draw, case: Case):
    """A rewrite of the files that must not change the result."""
    kind = draw(st.sampled_from(["crlf", "bom", "column_order", "header_blanks", "cell_blanks"]))
    header, rows = list(case.header), [list(r) for r in case.rows]
    if kind == "column_order":
        order = draw(st.permutations(range(len(header))))
        header = [header[j] for j in order]
        rows = [[r[j] for j in order] for r in rows]
    if kind == "header_blanks":
        header = [f" {h} " for h in header]
    if kind == "cell_blanks":
        rows = [[f" {v}" for v in r] for r in rows]
    lines = [",".join(header)] + [",".join(r) for r in rows]
    text = "\n".join(lines) + "\n"
    if kind == "crlf":
        text = text.replace("\n", "\r\n")
    data = text.encode()
    if kind == "bom":
        data = b"\xef\xbb\xbf" + data
    return kind, data


# ---- running ---------------------------------------------------------------------------------

def run(spec: str | bytes, data: bytes, folder: Path) -> tuple[int, str, dict | None]:
    """Write the files, run ``bayescheck fit`` in-process; exit code, stderr, posterior."""
    spec_path = folder / "spec.toml"
    if isinstance(spec, bytes):
        spec_path.write_bytes(spec)
    else:
        spec_path.write_text(spec)
    (folder / "data.csv").write_bytes(data)
    out = folder / "out"
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = main(["fit", str(spec_path), "--out", str(out), "--quiet"])
    err = err.getvalue()
    post = out / "posterior.json"
    return code, err, json.loads(post.read_text()) if code == 0 else None


def null_paths(value, path=""):
    if value is None:
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from null_paths(v, f"{path}.{k}")
    elif isinstance(value, list):
        for v in value:
            yield from null_paths(v, f"{path}[]")


def assert_sound(case: Case, code: int, err: str, post: dict | None, what: str):
    assert code in (0, 2), (what, code, err)
    assert "Traceback" not in err, (what, err)
    if code == 2:
        assert err.startswith("bayescheck: error: "), (what, err)
    else:
        # NaN and infinity are written as null: a null outside the family's own is a lost number.
        # "settings" echoes the model's configuration, where None means "not set".
        lost = {p for p in null_paths(post) if not p.startswith(".settings.")} - case.nullable
        assert not lost, (what, lost)


@given(data=st.data())
def test_corrupted_input_exits_0_or_2_and_never_writes_a_lost_number(data):
    case = data.draw(valid_cases, label="valid case")
    what, spec, csv = data.draw(corrupted(case), label="corruption")
    with tempfile.TemporaryDirectory() as tmp:
        code, err, post = run(spec, csv, Path(tmp))
    assert_sound(case, code, err, post, what)


@given(data=st.data())
def test_valid_input_fits(data):
    case = data.draw(valid_cases, label="valid case")
    with tempfile.TemporaryDirectory() as tmp:
        code, err, post = run(case.spec_text(), case.csv_bytes(), Path(tmp))
    assert_sound(case, code, err, post, "clean")
    if case.family not in ("gaussian_mixture", "ard"):  # EM / type-II ML may refuse a draw
        assert code == 0, err


def comparable(post: dict) -> dict:
    """What must not depend on how the file was written (not names, fingerprints, times)."""
    return {"parameters": post["parameters"], "log_evidence": post["log_evidence"],
            "n_rows": post["n_rows"]}


@given(data=st.data())
def test_harmless_rewrites_give_the_clean_result(data):
    case = data.draw(valid_cases, label="valid case")
    what, csv = _harmless(data.draw, case)
    with tempfile.TemporaryDirectory() as tmp:
        clean = run(case.spec_text(), case.csv_bytes(), Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        rewritten = run(case.spec_text(), csv, Path(tmp))
    assert_sound(case, *rewritten, what)
    assert rewritten[0] == clean[0], (what, clean[1], rewritten[1])
    if clean[0] == 0:
        assert comparable(rewritten[2]) == comparable(clean[2]), what


def test_the_property_catches_a_lost_number():
    # posterior.json before the fix for a 1e200 cell: exit 0 with null means.
    case = Case("linear_regression", (), ("x", "y"), ())
    post = {"parameters": {"theta": {"mean": [None, None]}}, "log_evidence": None}
    with pytest.raises(AssertionError, match="theta.mean"):
        assert_sound(case, 0, "", post, "cell")
    with pytest.raises(AssertionError):
        assert_sound(case, 1, "bayescheck: error: usage", None, "cell")
    with pytest.raises(AssertionError):
        assert_sound(case, 2, "Traceback (most recent call last):", None, "cell")
