"""models/file_read.py: a large file read into huge pages on threads gives Path.read_bytes'
bytes; a file that changes size while read, or is not a regular file, is read the plain way."""

from __future__ import annotations

import os
import threading

import pytest
from bayescheck.models import file_read
from bayescheck.models.data import _read_bytes


@pytest.fixture
def small_threshold(monkeypatch):
    """Files of 1000 bytes and more read the fast way, on up to four threads."""
    monkeypatch.setattr(file_read, "BIG_BYTES", 1000)
    monkeypatch.setattr(file_read, "usable_cores", lambda: 4)


@pytest.mark.parametrize("size", [0, 999, 1000, 1001, 3999, 4000, 4003, 123_457])
def test_the_same_bytes_as_read_bytes(tmp_path, small_threshold, size):
    path = tmp_path / "f.csv"
    path.write_bytes(os.urandom(size))
    content = file_read.read_file(path)
    assert type(content) is bytes and content == path.read_bytes()
    assert hash(content) == hash(path.read_bytes())
    assert _read_bytes(path) == content


def test_the_fast_way_is_taken_and_a_wrong_fill_is_caught(tmp_path, small_threshold,
                                                          monkeypatch):
    """The large file above really went through the threads (negative control: parts read
    at the wrong offsets give other bytes)."""
    path = tmp_path / "f.csv"
    path.write_bytes(os.urandom(5000))
    with open(path, "rb") as fh:
        assert file_read._read_fast(fh.fileno(), 5000) == path.read_bytes()
    real = os.preadv

    def shifted(fd, buffers, offset):
        return real(fd, buffers, max(0, offset - 1))

    monkeypatch.setattr(file_read.os, "preadv", shifted)
    assert file_read.read_file(path) != path.read_bytes()


@pytest.mark.parametrize("change", [+10, -10])
def test_a_file_that_changes_size_while_read_is_read_again(tmp_path, small_threshold,
                                                           monkeypatch, change):
    """The size taken at the start no longer holds (the file shrank: a short read; it grew:
    a byte after the end): the fast way gives up, and the plain read gives the file."""
    path = tmp_path / "f.csv"
    path.write_bytes(os.urandom(5000))
    with open(path, "rb") as fh:
        assert file_read._read_fast(fh.fileno(), 5000 + change) is None
    real = os.fstat

    class SizeAtTheStart:
        def __init__(self, info):
            self.st_size, self.st_mode = info.st_size - change, info.st_mode

    monkeypatch.setattr(file_read.os, "fstat", lambda fd: SizeAtTheStart(real(fd)))
    assert file_read.read_file(path) == path.read_bytes()


def test_a_read_error_on_a_thread_falls_back_to_the_plain_read(tmp_path, small_threshold,
                                                                monkeypatch):
    """A part whose read fails is not reported from its thread: the plain read that follows
    gives the file (or, were the error lasting, raises it in the caller's thread)."""
    path = tmp_path / "f.csv"
    path.write_bytes(os.urandom(5000))
    real = os.preadv
    failed = []

    def fails_once(fd, buffers, offset):
        if offset > 0 and not failed:
            failed.append(offset)
            raise OSError(5, "Input/output error")
        return real(fd, buffers, offset)

    hooked = []
    monkeypatch.setattr(threading, "excepthook", hooked.append)
    monkeypatch.setattr(file_read.os, "preadv", fails_once)
    with open(path, "rb") as fh:
        assert file_read._read_fast(fh.fileno(), 5000) is None
    assert failed and not hooked
    failed.clear()
    assert file_read.read_file(path) == path.read_bytes()


def test_not_a_regular_file_is_read_the_plain_way(tmp_path, small_threshold, monkeypatch):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    monkeypatch.setattr(file_read, "_read_fast", lambda *a: pytest.fail("not a regular file"))

    def write():
        with open(fifo, "wb") as fh:
            fh.write(b"x" * 3000)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert file_read.read_file(fifo) == b"x" * 3000
    finally:
        writer.join()


def test_an_unreadable_file_raises_as_read_bytes_does(tmp_path):
    with pytest.raises(FileNotFoundError):
        file_read.read_file(tmp_path / "missing.csv")
