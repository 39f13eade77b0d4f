"""``bayescheck demo`` starts every example from a folder emptied of the earlier results it
wrote, and never removes a file bayescheck did not write there.

An earlier demo's calibration stayed beside the new check when the demo ran again with
``--simulations 0``, and the new report showed it as this run's."""

import shutil
from pathlib import Path

import pytest
from bayescheck.data.output_files import listed_files, write_file
from bayescheck.reports.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAMPLING = "[sampling]\ndraws = 300\ntune = 300\nchains = 2\nseed = 1\n"


@pytest.fixture
def examples(tmp_path):
    root = tmp_path / "examples"
    (root / "coin").mkdir(parents=True)
    shutil.copy(EXAMPLES / "beta_bernoulli" / "coin.csv", root / "coin" / "coin.csv")
    coin = (EXAMPLES / "beta_bernoulli" / "coin.toml").read_text()
    (root / "coin" / "coin.toml").write_text(coin.split("[sampling]")[0] + SAMPLING)
    return root


def test_a_rerun_removes_every_earlier_result_and_refuses_foreign_files(tmp_path, capsys,
                                                                        examples):
    out = tmp_path / "demo"
    coin = out / "coin" / "coin"
    # an earlier demo with calibration, and a file of an earlier bayescheck it listed
    assert main(["calibrate", str(examples / "coin" / "coin.toml"), "--simulations", "20",
                 "--out", str(coin), "--quiet"]) == 0
    write_file(coin / "old_figure.png", b"stale")
    assert {"calibration.json", "old_figure.png"} <= listed_files(coin)
    # the user's own notes, and an example whose folder holds a file bayescheck did not write
    (coin / "notes.txt").write_text("mine")
    shutil.copytree(examples / "coin", examples / "dice")
    (examples / "dice" / "coin.toml").rename(examples / "dice" / "dice.toml")
    (out / "dice" / "dice").mkdir(parents=True)
    (out / "dice" / "dice" / "posterior.json").write_text("{}")  # an older bayescheck's

    code = main(["demo", "--out", str(out), "--examples", str(examples), "--simulations", "0"])
    err = capsys.readouterr().err
    # the coin: this run's files only, the user's file kept
    assert not (coin / "calibration.json").exists()
    assert not (coin / "old_figure.png").exists()
    assert (coin / "notes.txt").read_text() == "mine"
    assert (coin / "report.html").exists() and (coin / "posterior.json").exists()
    assert "calibration" not in (coin / "report.html").read_text().lower()
    # the dice: refused before anything was written, the older file untouched
    assert code == 2, err
    assert "holds posterior.json, which bayescheck did not write there" in \
        (out / "index.html").read_text()
    assert (out / "dice" / "dice" / "posterior.json").read_text() == "{}"
    assert not (out / "dice" / "dice" / "report.json").exists()
