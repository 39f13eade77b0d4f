"""The compiled CSV reader (models/csv_codes.c): the same states and counts as pyarrow's path,
or it declines; and its compile-on-first-use cache."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from bayescheck.models import csv_codes, disk_cache
from bayescheck.models import data as data_mod
from bayescheck.models.data import Batch, category_codes_as, fingerprint
from bayescheck.models.errors import BayescheckError, SpecError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The library compiled once into a private cache (with a blank in its path)."""
    folder = tmp_path_factory.mktemp("csv cache") / "with space"
    with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": str(folder)}), \
            mock.patch.object(csv_codes, "_LIBRARY", []):
        os.environ.pop("BAYESCHECK_CSV_READER", None)
        lib = csv_codes.library()
    if lib is None:
        pytest.skip("no working C compiler here")
    return folder, lib


@pytest.fixture
def reader(built):
    """This test's process uses the library built above."""
    with mock.patch.object(csv_codes, "_LIBRARY", [built[1]]):
        yield built[1]


def _batch(content: bytes) -> Batch:
    return Batch("t.csv", fingerprint(content), content=content, kind="csv", text=True)


def _states(batch: Batch, columns):
    """category_codes_as from empty states: per column the states in order and the codes."""
    index = [{} for _ in columns]
    out = category_codes_as(batch, columns, index)
    return [(list(ix), np.asarray(codes, np.int64)) for ix, (codes, _) in zip(index, out,
                                                                            strict=True)]


def reference(content: bytes, columns):
    """The path before this reader (pyarrow, else pandas): states and codes, or the error."""
    with mock.patch.object(data_mod, "_compiled_text_pieces", lambda *a: None), \
            mock.patch.object(data_mod, "label_values", lambda *a: None):
        try:
            return _states(_batch(content), columns)
        except BayescheckError as exc:
            return exc


def compiled(content: bytes, columns):
    """The compiled reader's states and codes, or None when it declines the file."""
    batch = _batch(content)
    if data_mod._compiled_text_pieces(batch, columns) is None:
        return None
    with mock.patch.object(data_mod, "_arrow_text_pieces", _no_pyarrow), \
            mock.patch.object(data_mod, "label_values", lambda *a: None):
        return _states(batch, columns)


def _no_pyarrow(*_):
    raise AssertionError("the compiled reader accepted the file: pyarrow is not asked")


def same(ours, theirs) -> bool:
    """Equal states in the same order and equal codes in every column."""
    if isinstance(theirs, Exception) or len(ours) != len(theirs):
        return False
    return all(a == c and np.array_equal(b, d) for (a, b), (c, d) in zip(ours, theirs,
                                                                         strict=True))


def check(content: bytes, columns) -> bool:
    """Either the reader declines, or its result equals the reference; True if it accepted."""
    ours = compiled(content, columns)
    if ours is None:
        return False
    theirs = reference(content, columns)
    assert same(ours, theirs), (content, ours, theirs)
    return True


CELL = st.lists(st.sampled_from(["a", "b", "ab", "é", "€x", " ", "\t", "q", ",", "\n", "\r",
                                 '"', "\r\n", "", "\x00", "longer-than-8-bytes",
                                 "longer-than-8-bytez", "\xff"]), max_size=3).map("".join)


def _encode(text: str) -> bytes:
    # "\xff" stands for a byte that is not UTF-8
    return text.encode("utf-8").replace("\xff".encode(), b"\xff")


@st.composite
def csv_files(draw):
    names = draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3,
                          unique=True))
    rows = draw(st.lists(st.lists(CELL, min_size=len(names), max_size=len(names)),
                         min_size=1, max_size=30))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = ",".join(names) + end + end.join(",".join(r) for r in rows)
    text += draw(st.sampled_from(["", end, end + end]))
    columns = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    return _encode(text), columns


@pytest.fixture(params=["one pass", "in parts"])
def parts(request, monkeypatch):
    """The reader as it parses a small file (one pass), and forced to cut every file into up
    to four parts parsed on threads and merged (as a large file is on several cores)."""
    if request.param == "in parts":
        monkeypatch.setattr(csv_codes, "SPLIT_BYTES", 1)
        monkeypatch.setattr(csv_codes, "usable_cores", lambda: 4)
    return request.param


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(csv_files())
@example((b"x,y\na,b\n\nc,\r\nd,b", ["y", "x"]))  # empty line, CR LF, no final line end
@example((b"x,y\na,\xff\n", ["x"]))  # not UTF-8 in a column not asked for: pyarrow reads it
@example((b"x,y\n\n\na,b\nc,d\n\nc,b\na,\n", ["x", "y"]))  # empty lines in early parts
def test_compiled_reader_equals_pyarrow_or_declines(reader, parts, case):
    check(*case)
    if parts == "in parts":
        assert_parts_equal_one_pass(*case)


def assert_parts_equal_one_pass(content: bytes, columns) -> None:
    """Cut into parts, the reader declines exactly what one pass declines, and otherwise
    gives its labels and its codes, of the same type."""
    batch = _batch(content)
    parts = data_mod._compiled_text_pieces(batch, columns)
    with mock.patch.object(csv_codes, "SPLIT_BYTES", 1 << 60):
        one = data_mod._compiled_text_pieces(batch, columns)
    assert (parts is None) == (one is None), (content, parts, one)
    for a, b in zip(parts or [], one or [], strict=True):
        assert a[0].labels == b[0].labels and a[0].codes.dtype == b[0].codes.dtype
        assert np.array_equal(a[0].codes, b[0].codes)


def test_a_file_is_cut_after_line_ends_into_parts(monkeypatch):
    monkeypatch.setattr(csv_codes, "SPLIT_BYTES", 3)  # 14 bytes of rows: four parts
    monkeypatch.setattr(csv_codes, "usable_cores", lambda: 4)
    content = b"x\naa\nbb\ncc\ndd\nee"
    bounds = csv_codes._parts(content, 2)
    assert bounds[0][0] == 2 and bounds[-1][1] == len(content) and len(bounds) == 4
    for (_, end), (start, _) in zip(bounds[:-1], bounds[1:], strict=True):
        assert end == start and content[end - 1:end] == b"\n"
    monkeypatch.setattr(csv_codes, "usable_cores", lambda: 1)  # one core: one pass
    assert csv_codes._parts(content, 2) == [(2, len(content))]
    monkeypatch.setattr(csv_codes, "usable_cores", lambda: 4)
    monkeypatch.setattr(csv_codes, "SPLIT_BYTES", 8 << 20)  # a small file: one pass
    assert csv_codes._parts(content, 2) == [(2, len(content))]


def _in_parts(monkeypatch):
    monkeypatch.setattr(csv_codes, "SPLIT_BYTES", 1)
    monkeypatch.setattr(csv_codes, "usable_cores", lambda: 4)


def test_parts_are_merged_into_one_pass(reader, monkeypatch):
    """Labels first seen in a later part, in another order, and empty lines before it, give
    the codes of one pass; a merge that does not renumber, or does not close the gap the
    empty lines left, fails the comparison."""
    _in_parts(monkeypatch)
    content = b"x,y\n\n\n\na,p\nb,q\n" + b"c,r\nb,q\n" + b"a,s\nd,p\n" + b"d,,\n"[:-2] + b"\n"
    assert len(csv_codes._parts(content, 4)) == 4
    assert check(content, ["x", "y"])
    with mock.patch.object(reader, "bc_recode", lambda *a: None), \
            pytest.raises(AssertionError):
        check(content, ["x", "y"])
    real = csv_codes._merge

    def no_move(lib, content, parts, out, offsets):
        return real(lib, content, parts, out, [0, *[sum(p[0] for p in parts[:i])
                                                     for i in range(1, len(parts))]])

    with mock.patch.object(csv_codes, "_merge", no_move), pytest.raises(AssertionError):
        check(content, ["x", "y"])


def test_files_the_parts_must_accept(reader, monkeypatch):
    """No final line end, CR LF at every cut, empty lines at a cut: read in parts (not
    declined), as one pass reads them."""
    _in_parts(monkeypatch)
    for content in (b"x,y\na,b\nc,d\na,d\nc,b", b"x,y\r\na,b\r\nc,d\r\na,d\r\nc,b\r\n",
                    b"x,y\na,b\n\n\nc,d\n\na,d\n\nc,b\n\n"):
        assert len(csv_codes._parts(content, content.find(b"\n") + 1)) >= 3
        assert check(content, ["x", "y"]), content
        assert_parts_equal_one_pass(content, ["x", "y"])


@pytest.mark.parametrize("labels", [128, 129])
def test_the_codes_stay_one_byte_up_to_128_labels_over_the_parts(reader, monkeypatch, labels):
    _in_parts(monkeypatch)
    rows = [f"s{i}" for i in range(labels)] + ["s0"] * 3
    content = ("x\n" + "\n".join(rows) + "\n").encode()
    assert check(content, ["x"])
    assert_parts_equal_one_pass(content, ["x"])
    [[piece]] = data_mod._compiled_text_pieces(_batch(content), ["x"])
    assert piece.codes.dtype == (np.int8 if labels == 128 else np.int32)


def test_many_labels_over_the_parts_take_four_byte_codes(reader, monkeypatch):
    """Each part has fewer than 128 labels of a column, all of them together more."""
    _in_parts(monkeypatch)
    rows = [f"s{i},t{i % 3}" for i in range(200)]
    content = ("x,y\n" + "\n".join(rows) + "\n").encode()
    assert check(content, ["x", "y"])
    pieces = data_mod._compiled_text_pieces(_batch(content), ["x", "y"])
    assert pieces[0][0].codes.dtype == np.int32 and len(pieces[0][0].labels) == 200


def test_plain_files_are_accepted(reader):
    """The differential test above is not vacuous: these plain files are read here."""
    cases = [
        (b"x,y\na,b\n\nc,\r\nd,b", ["y", "x"]),
        (b"x,y\na,\xc3\xa9\nlonger-than-8-bytes,b\nlonger-than-8-bytez,\n", ["x", "y"]),
        (b"\xef\xbb\xbfx\nTRUE\nFALSE\r\n\r\nTRUE", ["x"]),
        (b"x,y\na,\xff\n", ["x"]),
    ]
    for content, columns in cases:
        assert check(content, columns), content


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_line_ends_across_the_64_byte_blocks(reader, end):
    """A line end, a CR LF and a long label at every offset around the blocks the bytes are
    scanned in (64 bytes from the first row); a lone CR there is declined."""
    head = b"x,y" + end
    for k in range(1, 140):
        body = b"q" * k + b",b" + end + b"ab,longer-than-8-bytes" + end + b"c," + end
        assert check(head + body, ["x", "y"]), k
        assert check(head + body[:-len(end)], ["y"]), k  # no final line end
        lone = head + b"q" * k + b",b\r" + b"c,d" + end
        assert data_mod._compiled_text_pieces(_batch(lone), ["x", "y"]) is None, k


def test_labels_equal_in_their_first_bytes_but_not_in_length(reader):
    """Trailing NUL bytes leave the zero-padded 8-byte key unchanged: only the length (and
    beyond 8 bytes memcmp) tells these labels apart."""
    words = [b"a" + b"\x00" * k for k in range(12)] + [b"\x00" * k for k in range(1, 12)]
    rows = [words[(7 * i) % len(words)] + b"," + words[(5 * i) % len(words)]
            for i in range(200)]
    content = b"x,y\n" + b"\n".join(rows) + b"\n"
    assert check(content, ["x", "y"])
    assert len(compiled(content, ["x", "y"])[0][0]) == len(words)


def test_many_labels_take_four_byte_codes(reader):
    rows = [f"s{i % 300},t{i % 3}" for i in range(1000)]
    content = ("x,y\n" + "\n".join(rows) + "\n").encode()
    assert check(content, ["x", "y"])
    pieces = data_mod._compiled_text_pieces(_batch(content), ["x", "y"])
    assert pieces[0][0].codes.dtype == np.int32 and len(pieces[0][0].labels) == 300


@pytest.mark.parametrize("content", [
    b'x,y\n"a",b\n',  # a quote
    b"x,y\na,b\rc,d\n",  # a carriage return inside a line (pyarrow: a line end)
    b"x,y\na,b\r",  # a lone CR at the end
    b"x,y\na,b,c\n",  # too many fields
    b"x,y\na\n",  # too few
    b"x,y\n a,b\n",  # a label starting with a blank (pandas reads it then)
    b"x,y\n\ta,b\n",
    b"x,y\na,\xff\n",  # not UTF-8 in a column asked for
    b"x,y\n\n\n",  # no rows
    b'"x",y\na,b\n',  # a quote in the header
])
def test_declines_what_is_not_plain(reader, content):
    assert data_mod._compiled_text_pieces(_batch(content), ["x", "y"]) is None


def test_the_comparison_fails_on_a_wrong_result(reader):
    """Negative controls: codes off by one, and two states swapped, are caught."""
    content = b"x,y\na,b\nc,b\na,d\n\nc,\n"
    ours = compiled(content, ["x", "y"])
    theirs = reference(content, ["x", "y"])
    assert same(ours, theirs)
    states, codes = ours[0]
    assert not same([(states, codes + 1), ours[1]], theirs)
    assert not same([(states[::-1], codes), ours[1]], theirs)
    # and through the reader itself: a reader that shifts one code fails check()
    real = data_mod._compiled_text_pieces

    def off_by_one(batch, columns):
        out = real(batch, columns)
        piece = out[0][0]
        codes = piece.codes.copy()
        codes[0] = (codes[0] + 1) % len(piece.labels)
        out[0][0] = data_mod._Piece(codes, piece.labels, signed=True)
        return out

    with mock.patch.object(data_mod, "_compiled_text_pieces", off_by_one), \
            pytest.raises(AssertionError):
        check(content, ["x", "y"])


def test_turned_off_and_bad_setting(monkeypatch):
    monkeypatch.setattr(csv_codes, "_LIBRARY", [])
    monkeypatch.setenv("BAYESCHECK_CSV_READER", "pyarrow")
    assert csv_codes.library() is None
    assert data_mod._compiled_text_pieces(_batch(b"x\na\n"), ["x"]) is None
    monkeypatch.setattr(csv_codes, "_LIBRARY", [])
    monkeypatch.setenv("BAYESCHECK_CSV_READER", "fast")
    with pytest.raises(SpecError, match="BAYESCHECK_CSV_READER must be 'auto' or 'pyarrow', "
                                        "got 'fast'"):
        csv_codes.reader_setting()


def test_no_compiler_falls_back(monkeypatch, tmp_path):
    monkeypatch.setattr(csv_codes, "_LIBRARY", [])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.delenv("BAYESCHECK_CSV_READER", raising=False)
    assert csv_codes.library() is None
    content = b"x,y\na,b\nc,b\n"
    assert _states(_batch(content), ["x", "y"])[0][0] == ["a", "c"]  # pyarrow read it


def test_a_failed_compile_is_remembered(monkeypatch, tmp_path):
    calls = tmp_path / "calls"
    cc = tmp_path / "cc"
    cc.write_text(f"#!/bin/sh\necho x >> '{calls}'\ncase \"$1\" in --version) echo fake 1;; "
                  "*) exit 1;; esac\n")
    cc.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.delenv("BAYESCHECK_CSV_READER", raising=False)
    assert csv_codes._find_or_build() is None
    assert len(calls.read_text().split()) == 2  # --version, then the compile
    assert list((tmp_path / "bayescheck").glob("*.failed"))
    assert csv_codes._find_or_build() is None
    assert len(calls.read_text().split()) == 3  # --version only: not compiled again
    assert not list((tmp_path / "bayescheck").glob(".*"))  # no temporary file left
    [marker] = (tmp_path / "bayescheck").glob("*.failed")
    old = marker.stat().st_mtime - csv_codes.RETRY_SECONDS - 1  # a day later (the cause
    os.utime(marker, (old, old))                               # may be fixed): tried again
    assert csv_codes._find_or_build() is None
    assert len(calls.read_text().split()) == 5


def test_a_library_that_does_not_load_is_not_compiled_every_run(built, monkeypatch,
                                                                 tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BAYESCHECK_CSV_READER", raising=False)
    monkeypatch.setattr(csv_codes, "_load", lambda path: None)  # as on a noexec mount
    assert csv_codes._find_or_build() is None
    assert list((tmp_path / "bayescheck").glob("*.failed"))
    monkeypatch.setattr(csv_codes, "_build", _no_build)
    assert csv_codes._find_or_build() is None


def _no_build(*_):
    raise AssertionError("compiled again")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_library_is_rebuilt(built, monkeypatch, tmp_path, damage):
    folder, _ = built
    cache = tmp_path / "c d"
    (cache / "bayescheck").mkdir(parents=True)
    [so] = (folder / "bayescheck").glob("csv_codes-*.so")
    copy = cache / "bayescheck" / so.name
    raw = bytearray(so.read_bytes())
    if damage == "truncate":
        raw = raw[:len(raw) // 2]
    else:
        raw[len(raw) // 2] ^= 0xFF
    copy.write_bytes(bytes(raw))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("BAYESCHECK_CSV_READER", raising=False)
    key = so.name.split("-")[1]
    assert csv_codes._cached(cache / "bayescheck", key) is None
    assert not copy.exists()  # the damaged file is gone
    copy.write_bytes(bytes(raw))
    assert csv_codes._find_or_build() is not None  # compiled again
    assert [p.name for p in (cache / "bayescheck").iterdir()] == [so.name]
    assert csv_codes._digest(copy) == so.name.rsplit("-", 1)[1][:-3]


@pytest.mark.slow
def test_two_processes_compile_at_once(tmp_path):
    """Both get a working reader from an empty cache; one complete file is left."""
    code = ("from models import csv_codes; from models.data import _compiled_text_pieces, "
            "Batch; lib = csv_codes.library(); assert lib is not None; "
            "b = Batch('t', 'f', content=b'x\\na\\nb\\na\\n', kind='csv', text=True); "
            "p = _compiled_text_pieces(b, ['x']); assert p[0][0].labels == ['a', 'b']")
    cache = tmp_path / "a b"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("BAYESCHECK_CSV_READER", None)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT,
                              stderr=subprocess.PIPE) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    files = sorted(p.name for p in (cache / "bayescheck").iterdir())
    assert len(files) == 1 and files[0].endswith(".so"), files
    assert csv_codes._digest(cache / "bayescheck" / files[0]) == files[0].rsplit("-", 1)[1][:-3]


def _aged(path: Path, data: bytes, age: float) -> Path:
    path.unlink(missing_ok=True)  # a new file: the old one may be loaded (mapped) here
    path.write_bytes(data)
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.parametrize("in_use", [False, True])
def test_a_new_library_evicts_old_ones_and_killed_compiles(built, monkeypatch, tmp_path,
                                                           in_use):
    """Written when the source or compiler changed: what is left of before goes, but not a
    library used within the month, one another process is loading, nor the temporary file
    of a compile still running (or of one younger than an hour)."""
    folder, _ = built
    [so] = (folder / "bayescheck").glob("csv_codes-*.so")
    data, digest = so.read_bytes(), so.name.rsplit("-", 1)[1]
    cache = tmp_path / "bayescheck"
    cache.mkdir()
    month, dead = disk_cache.MAX_AGE_SECONDS + 86400, _dead_pid()
    old = _aged(cache / f"csv_codes-{'0' * 24}-{digest}", data, month)
    recent = _aged(cache / f"csv_codes-{'1' * 24}-{digest}", data, month - 2 * 86400)
    failed = _aged(cache / f"csv_codes-{'2' * 24}.failed", b"no", month)
    killed = _aged(cache / f".csv_codes-{dead}.abcd1234.so", b"", 7200)
    legacy = _aged(cache / ".csv_codes-abcd1234.so", b"", 7200)  # named before the pid was
    running = _aged(cache / f".csv_codes-{os.getpid()}.abcd1234.so", b"", 7200)
    young = _aged(cache / f".csv_codes-{dead}.efgh5678.so", b"", 600)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BAYESCHECK_CSV_READER", raising=False)
    if in_use:  # another process is checking and loading it right now
        with disk_cache.using(old):
            os.utime(old, (time.time() - month, time.time() - month))
            assert csv_codes._find_or_build() is not None
    else:
        assert csv_codes._find_or_build() is not None  # no library of this key: compiled
    left = {p.name for p in cache.iterdir()}
    assert {recent.name, running.name, young.name} <= left
    assert not {failed.name, killed.name, legacy.name} & left
    assert (old.name in left) == in_use
    [new] = [n for n in left if n.endswith(".so") and not n.startswith(".")
             and n not in (old.name, recent.name)]
    assert csv_codes._digest(cache / new) == new.rsplit("-", 1)[1][:-3]


def test_libraries_beyond_the_cap_are_evicted_least_recently_used_first(built, monkeypatch,
                                                                        tmp_path):
    folder, _ = built
    [so] = (folder / "bayescheck").glob("csv_codes-*.so")
    data, digest = so.read_bytes(), so.name.rsplit("-", 1)[1]
    cache = tmp_path / "bayescheck"
    cache.mkdir()
    older = _aged(cache / f"csv_codes-{'0' * 24}-{digest}", data, 3 * 86400)
    newer = _aged(cache / f"csv_codes-{'1' * 24}-{digest}", data, 2 * 86400)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BAYESCHECK_CSV_READER", raising=False)
    monkeypatch.setattr(csv_codes, "CACHE_MAX_BYTES", 2 * len(data) + 1000)
    assert csv_codes._find_or_build() is not None  # the third library: one too many
    left = sorted(p.name for p in cache.iterdir())
    assert older.name not in left and newer.name in left and len(left) == 2


def test_loading_a_library_marks_it_used_once_a_day(built, monkeypatch, tmp_path):
    folder, _ = built
    [so] = (folder / "bayescheck").glob("csv_codes-*.so")
    key = so.name.split("-")[1]
    for age, marked in ((2 * 86400, True), (3600, False)):
        (tmp_path / str(age)).mkdir()
        copy = _aged(tmp_path / str(age) / so.name, so.read_bytes(), age)
        before = copy.stat().st_mtime
        assert csv_codes._cached(copy.parent, key) is not None
        assert (copy.stat().st_mtime > before + 60) == marked


def test_the_cache_directory_is_the_users_alone(built):
    folder, _ = built  # a library planted in it would be loaded and run
    assert (folder / "bayescheck").stat().st_mode & 0o777 == 0o700


def test_a_file_with_a_quote_is_declined_before_any_parse(reader, monkeypatch):
    monkeypatch.setattr(csv_codes, "parse", _no_build)  # the C pass is not even started
    content = b"x,y\n" + b"a,b\n" * 1000 + b'"c",b\n'
    assert data_mod._compiled_text_pieces(_batch(content), ["x", "y"]) is None


def test_a_wrong_reader_setting_is_refused_at_the_start_of_any_data_command(monkeypatch,
                                                                            tmp_path, capsys):
    from bayescheck.reports.cli import main

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("BAYESCHECK_CSV_READER", "fast")  # the small Asia file never reaches
    code = main(["fit", str(root / "examples/bayesian_network/asia.toml"),  # the reader
                 "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and not (tmp_path / "out" / "posterior.json").exists()
    assert "BAYESCHECK_CSV_READER must be 'auto' or 'pyarrow', got 'fast'" in \
        capsys.readouterr().err
