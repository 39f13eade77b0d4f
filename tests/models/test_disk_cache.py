"""The eviction policy of bayescheck's on-disk caches (models.disk_cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bayescheck.models import disk_cache
from bayescheck.models.disk_cache import (
    FRESH_SECONDS,
    MARK_EVERY_SECONDS,
    MAX_AGE_SECONDS,
    Entry,
    evict,
    mark_used,
    remove_temporaries,
    using,
)

DAY = 86400.0


def _file(path: Path, age: float, size: int = 10) -> Path:
    """A file of ``size`` bytes last modified ``age`` seconds ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def _entry(folder: Path, key: str, age: float, size: int = 10, marker: bool = True) -> Entry:
    files = [_file(folder / f"{key}.data", age, size)]
    return Entry(key, files, marker=folder / f"{key}.used" if marker else None,
                 create_marker=True)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_entries_unused_for_a_month_are_removed_and_others_kept(tmp_path):
    old = _entry(tmp_path, "old", MAX_AGE_SECONDS + DAY)
    recent = _entry(tmp_path, "recent", MAX_AGE_SECONDS - DAY)
    kept = _entry(tmp_path, "kept", MAX_AGE_SECONDS + DAY)  # the one just written
    assert evict([old, recent, kept], keep=["kept"]) == ["old"]
    assert not old.files[0].exists() and not (tmp_path / "old.used").exists()
    assert recent.files[0].exists() and kept.files[0].exists()


def test_an_entry_used_since_it_was_looked_at_is_left(tmp_path, monkeypatch):
    """The age is looked at again under the lock: a use meanwhile keeps the entry."""
    entry = _entry(tmp_path, "e", MAX_AGE_SECONDS + DAY)
    assert "e" in repr(entry)
    real = disk_cache._remove

    def used_meanwhile(entry, older_than, now):
        os.utime(entry.files[0])  # another process loaded it and marked it
        return real(entry, older_than, now)

    monkeypatch.setattr(disk_cache, "_remove", used_meanwhile)
    assert evict([entry]) == []
    assert entry.files[0].exists()


def test_the_size_cap_removes_the_least_recently_used_but_never_a_fresh_one(tmp_path):
    entries = [_entry(tmp_path, f"e{k}", age, size=100)
               for k, age in enumerate([5 * DAY, 4 * DAY, 3 * DAY, 2 * DAY, FRESH_SECONDS / 2,
                                        FRESH_SECONDS / 4])]
    # 600 bytes for a cap of 250: the oldest go first, until the rest fits or is fresh
    assert evict(entries, max_bytes=250, keep=["e3"]) == ["e0", "e1", "e2"]
    assert [e.files[0].exists() for e in entries] == [False, False, False, True, True, True]
    assert evict(entries[3:], max_bytes=0, keep=[]) == ["e3"]  # the fresh two are left
    assert entries[4].files[0].exists() and entries[5].files[0].exists()


_HOLDER = r"""
import sys, time
from pathlib import Path
from bayescheck.models.disk_cache import using
with using(Path(sys.argv[1]), create=True):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_an_entry_another_process_is_loading_is_left(tmp_path):
    entry = _entry(tmp_path, "busy", MAX_AGE_SECONDS + DAY)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(entry.marker)],
                              env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2])),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        # its use was marked now: made old again, so that only the lock keeps it
        for path in (entry.files[0], entry.marker):
            os.utime(path, (0, 0))
        assert evict([entry]) == [] and entry.files[0].exists()
    finally:
        holder.communicate("\n", timeout=60)
    assert evict([entry]) == ["busy"] and not entry.files[0].exists()


def test_the_lock_of_an_entry_in_this_process_counts_too(tmp_path):
    entry = _entry(tmp_path, "mine", MAX_AGE_SECONDS + DAY)
    with using(entry.marker, create=True) as there:
        assert there
        for path in (entry.files[0], entry.marker):
            os.utime(path, (0, 0))
        assert evict([entry]) == []
    assert evict([entry]) == ["mine"]


def test_a_marker_the_evicting_process_creates_does_not_make_the_entry_fresh(tmp_path):
    entry = _entry(tmp_path, "old", MAX_AGE_SECONDS + DAY)
    assert not entry.marker.exists()  # written before markers, or its loader never came
    assert evict([entry]) == ["old"]
    assert not entry.marker.exists() and not entry.files[0].exists()


def test_a_loader_that_waited_on_a_removed_marker_locks_the_new_one(tmp_path, monkeypatch):
    """The marker it opened was removed (evicted) before it got the lock: it opens it anew."""
    marker = tmp_path / "m.used"
    marker.write_text("")
    real_flock = disk_cache.fcntl.flock
    calls = []

    def flock(fd, operation):
        if not calls:  # evicted while this process waited, and created anew by another
            os.unlink(marker)
            marker.write_text("")
        calls.append(operation)
        return real_flock(fd, operation)

    monkeypatch.setattr(disk_cache.fcntl, "flock", flock)
    with using(marker, create=True) as there:
        assert there and marker.exists()
    assert len(calls) == 2
    marker.unlink()
    calls.clear()
    with using(marker) as there:  # not to be created: the entry is gone
        assert not there


def test_files_vanishing_or_refusing_removal_do_not_raise(tmp_path, monkeypatch):
    gone = Entry("gone", [tmp_path / "never-there"], marker=tmp_path / "gone.used")
    half = _entry(tmp_path, "half", MAX_AGE_SECONDS + DAY)
    half.files.append(tmp_path / "vanished")
    stuck = _entry(tmp_path, "stuck", MAX_AGE_SECONDS + DAY)
    real = os.unlink

    def unlink(path, *args, **kwargs):
        if Path(path).name.startswith("stuck"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(disk_cache.os, "unlink", unlink)
    assert evict([gone, half, stuck]) == ["half"]  # stuck's files stay
    assert stuck.files[0].exists() and not half.files[0].exists()

    # a file removed by another process between the listing and the removal
    late = _entry(tmp_path, "late", MAX_AGE_SECONDS + DAY)
    real_last_use = disk_cache._last_use

    def vanish_first(files):
        found = real_last_use(files)
        for path in files:
            if path.exists():
                real(path)
        return found

    monkeypatch.setattr(disk_cache, "_last_use", vanish_first)
    evict([late])
    assert remove_temporaries([(tmp_path / "no-such-temporary", None)]) == 0


def test_temporary_files_of_writers_gone_an_hour_are_removed(tmp_path):
    dead = _dead_pid()
    old_dead = _file(tmp_path / "a", FRESH_SECONDS + 60)
    old_live = _file(tmp_path / "b", FRESH_SECONDS + 60)
    old_unnamed = _file(tmp_path / "c", FRESH_SECONDS + 60)
    young = _file(tmp_path / "d", FRESH_SECONDS / 2)
    assert remove_temporaries([(old_dead, dead), (old_live, os.getpid()),
                               (old_unnamed, None), (young, dead)]) == 2
    assert not old_dead.exists() and not old_unnamed.exists()
    assert old_live.exists() and young.exists()


def test_a_use_is_marked_at_most_once_a_day(tmp_path):
    stale = _file(tmp_path / "stale", MARK_EVERY_SECONDS + 60)
    recent = _file(tmp_path / "recent", MARK_EVERY_SECONDS - 60)
    before = recent.stat().st_mtime
    mark_used(stale)
    mark_used(recent)
    mark_used(tmp_path / "missing")  # never raises
    assert time.time() - stale.stat().st_mtime < 60
    assert recent.stat().st_mtime == before


def test_loading_an_entry_marks_it(tmp_path):
    marker = _file(tmp_path / "m.used", MAX_AGE_SECONDS + DAY)
    with using(marker):
        pass
    assert time.time() - marker.stat().st_mtime < 60


@pytest.mark.parametrize("create", [True, False])
def test_an_unwritable_cache_is_no_error(tmp_path, create):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with using(folder / "m.used", create=create) as there:
            assert not there or os.geteuid() == 0  # root writes anyway
    finally:
        folder.chmod(0o700)


def test_the_writer_of_a_temporary_file_is_read_from_its_name():
    assert disk_cache.writer_pid(".csv_codes-4242.ab12cd.so", ".csv_codes-") == 4242
    assert disk_cache.writer_pid("4242.tmp", "") == 4242
    assert disk_cache.writer_pid(".csv_codes-ab12cd.so", ".csv_codes-") is None  # older name
    assert disk_cache.writer_pid("building.4242.h", "tmp") is None  # another prefix
