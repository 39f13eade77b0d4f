"""Output folders: links never followed, the user's files never removed, a full disk named.

Every file bayescheck writes goes through one opener
(:func:`bayescheck.data.output_files.write_file`); a folder's manifest lists what bayescheck
wrote there, and only those files are removed or replaced.
"""

import errno
import json
import os

import numpy as np
import pytest
from bayescheck.data import output_files
from bayescheck.data.output_files import MANIFEST_NAME, write_file
from bayescheck.reports.cli import main
from bayescheck.reports.writers import write_netcdf

SPEC = """model = "linear_regression"
[data]
path = "data.csv"
target = "y"
features = ["x"]
[prior]
mean = 0.0
cov = 10.0
[likelihood]
noise_sd = 1.0
"""

#: Every fixed name bayescheck wrote or writes inside an output folder (temporaries included).
FIXED_NAMES = ("posterior.json", "checkpoint.npz", "checkpoint.npz.tmp", "posterior.nc",
               "posterior.nc.tmp", "summary.json", "report.html", "report.json",
               "comparison.csv", MANIFEST_NAME, f".posterior.json.{os.getpid()}.tmp")


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=20)
    (tmp_path / "data.csv").write_text("x,y\n" + "".join(
        f"{float(a)!r},{float(2 * a + b)!r}\n"
        for a, b in zip(x, rng.normal(size=20), strict=True)))
    (tmp_path / "spec.toml").write_text(SPEC)
    (tmp_path / "victim").write_text("the other user's file\n")
    return tmp_path


def fit(folder, out, *extra):
    return main(["fit", str(folder / "spec.toml"), "--out", str(out), "--quiet", *extra])


def plant(out, names, victim):
    out.mkdir(exist_ok=True)
    for name in names:
        (out / name).unlink(missing_ok=True)
        (out / name).symlink_to(victim)


def test_links_planted_before_the_first_run_are_refused_not_followed(folder, capsys):
    out = folder / "shared"
    plant(out, FIXED_NAMES, folder / "victim")
    assert fit(folder, out) == 2
    assert "posterior.json" in capsys.readouterr().err
    assert (folder / "victim").read_text() == "the other user's file\n"


def test_links_replacing_the_runs_own_files_are_replaced_not_followed(folder, capsys):
    out = folder / "shared"
    assert fit(folder, out) == 0
    plant(out, [n for n in FIXED_NAMES if n != MANIFEST_NAME], folder / "victim")
    assert fit(folder, out) == 0
    assert (folder / "victim").read_text() == "the other user's file\n"
    for name in ("posterior.json", "checkpoint.npz"):
        assert not (out / name).is_symlink()
    assert json.loads((out / "posterior.json").read_text())["model"] == "linear_regression"
    assert not list(out.glob("*.tmp")) or all(p.is_symlink() for p in out.glob("*.tmp"))


def test_a_linked_lock_is_refused(folder, capsys):
    out = folder / "shared"
    plant(out, [".bayescheck.lock"], folder / "victim")
    assert fit(folder, out) == 2
    assert ".bayescheck.lock: is a symbolic link" in capsys.readouterr().err
    assert (folder / "victim").read_text() == "the other user's file\n"


def test_netcdf_through_a_planted_link(tmp_path):
    import xarray as xr

    (tmp_path / "victim").write_text("keep\n")
    (tmp_path / "posterior.nc").symlink_to(tmp_path / "victim")
    tree = xr.DataTree(xr.Dataset({"a": ("x", np.arange(3.0))}))
    with pytest.raises(Exception, match="not written by bayescheck"):
        write_netcdf(tree, tmp_path / "posterior.nc")
    (tmp_path / "posterior.nc").unlink()
    write_netcdf(tree, tmp_path / "posterior.nc")  # registered now
    (tmp_path / "posterior.nc").unlink()
    (tmp_path / "posterior.nc").symlink_to(tmp_path / "victim")
    write_netcdf(tree, tmp_path / "posterior.nc")
    assert (tmp_path / "victim").read_text() == "keep\n"
    with xr.open_datatree(tmp_path / "posterior.nc", engine="h5netcdf") as back:
        assert back["a"].values.tolist() == [0.0, 1.0, 2.0]


def test_empty_out_is_refused_and_the_working_folder_untouched(folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    (folder / "posterior.json").write_text("mine\n")
    assert main(["fit", "spec.toml", "--out", "", "--quiet"]) == 2
    assert "empty path" in capsys.readouterr().err
    assert (folder / "posterior.json").read_text() == "mine\n"
    assert not (folder / MANIFEST_NAME).exists()


def test_the_users_own_files_are_not_removed(folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    (folder / "posterior.json").write_text("mine\n")
    assert main(["fit", "spec.toml", "--out", ".", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "posterior.json" in err and "did not write" in err
    assert (folder / "posterior.json").read_text() == "mine\n"
    # check's results too: a report.html of the user's is neither removed nor replaced
    (folder / "posterior.json").unlink()
    (folder / "report.html").write_text("<p>mine</p>\n")
    assert main(["check", "spec.toml", "--out", ".", "--quiet"]) == 2
    assert "report.html" in capsys.readouterr().err
    assert (folder / "report.html").read_text() == "<p>mine</p>\n"


def test_a_rerun_removes_only_what_bayescheck_wrote(folder, capsys):
    out = folder / "o"
    assert fit(folder, out) == 0
    (out / "notes.txt").write_text("mine\n")
    (folder / "data.csv").write_text("x,y\n1,abc\n")
    assert fit(folder, out) == 2
    assert not (out / "posterior.json").exists()  # the stale result went
    assert (out / "notes.txt").read_text() == "mine\n"


def test_dangling_out_link_is_named(folder, capsys):
    (folder / "o").symlink_to(folder / "nowhere")
    assert fit(folder, folder / "o") == 2
    err = capsys.readouterr().err
    assert "is a symbolic link to" in err and "does not exist" in err
    assert "parent is a file" not in err


def test_full_disk_names_the_file_and_leaves_no_temporary(folder, capsys, monkeypatch):
    calls = []
    flush = output_files.flush_to_disk

    def full(fh):  # the disk fills after the manifest was written
        calls.append(fh)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        flush(fh)

    monkeypatch.setattr(output_files, "flush_to_disk", full)
    out = folder / "o"
    assert fit(folder, out) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err
    assert str(out) in err and ("checkpoint.npz" in err or "posterior.json" in err)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert not (out / "posterior.json").exists()


def test_write_file_error_names_the_file(tmp_path):
    def half(fh):
        fh.write(b"half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(Exception, match=r"a\.json: cannot write: No space left on device"):
        write_file(tmp_path / "a.json", half)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME]
