"""Bad input exits 2 with a message naming the file and the key, column or row."""

import re

import numpy as np
import pandas as pd
import pytest
from bayescheck.reports.cli import main

GOOD_DATA = "x1,x2,y\n1.0,2.0,3.0\n2.0,1.0,1.5\n0.5,0.3,0.2\n1.5,-1.0,0.7\n"


def write_spec(tmp_path, body, data=GOOD_DATA, data_name="data.csv"):
    if data is not None:
        (tmp_path / data_name).write_text(data)
    spec = tmp_path / "spec.toml"
    spec.write_text(body)
    return spec


SPEC = """model = "linear_regression"
[data]
path = "data.csv"
target = "y"
[likelihood]
noise_sd = 1.0
"""


def run_fit(tmp_path, spec, capsys):
    code = main(["fit", str(spec), "--out", str(tmp_path / "out"), "--quiet"])
    return code, capsys.readouterr().err


def test_good_spec_fits(tmp_path, capsys):
    code, err = run_fit(tmp_path, write_spec(tmp_path, SPEC), capsys)
    assert code == 0, err
    assert (tmp_path / "out" / "posterior.json").exists()


@pytest.mark.parametrize("body, data, expected", [
    (SPEC.replace("data.csv", "nothere.csv"), GOOD_DATA, r"nothere\.csv: data file not found"),
    (SPEC + "[prior]\nmeen = 1.0\n", GOOD_DATA,
     r"key 'prior\.meen': unknown key; valid keys here are: cov, flat, mean"),
    ("colour = 'red'\n" + SPEC, GOOD_DATA, r"key 'colour': unknown key; valid keys here are: "
                                           r"data, likelihood, model, prior, sampling"),
    (SPEC.replace('target = "y"', 'target = "z"'), GOOD_DATA,
     r"key 'data\.target': column 'z' is not in .*data\.csv; it has: x1, x2, y"),
    (SPEC.replace('target = "y"', 'target = "y"\nfeatures = ["x1", "x9"]'), GOOD_DATA,
     r"key 'data\.features': column 'x9'"),
    (SPEC, "x1,x2,y\n1.0,2.0,3.0\n2.0,abc,1.5\n", r"data\.csv, column 'x2', row 2: not a number: "
                                                 r"'abc'"),
    (SPEC, "x1,x2,y\n1.0,2.0,3.0\n2.0,1.0,1.5\n3.0,,1.0\n",
     r"data\.csv, column 'x2', row 3: missing value \(NaN\)"),
    (SPEC, "x1,x2,y\n1.0,2.0,inf\n", r"data\.csv, column 'y', row 1: infinite value"),
    (SPEC, "", r"data\.csv: file is empty"),
    (SPEC, "x1,x2,y\n", r"data\.csv: file has a header but no rows"),
    (SPEC + "[prior]\nmean = [1.0, 2.0, 3.0]\n", GOOD_DATA,
     r"key 'prior\.mean': expected a number or 2 numbers \(one per feature: x1, x2\), got 3"),
    (SPEC + "[prior]\ncov = [[1.0, 2.0], [2.0, 1.0]]\n", GOOD_DATA,
     r"key 'prior\.cov': covariance matrix is not positive definite"),
    (SPEC + "[prior]\ncov = [[1.0, 0.5], [0.2, 1.0]]\n", GOOD_DATA,
     r"key 'prior\.cov': covariance matrix is not symmetric"),
    (SPEC + "[prior]\ncov = -1.0\n", GOOD_DATA, r"key 'prior\.cov': a scalar covariance"),
    (SPEC + "[prior]\nflat = true\n", "x1,x2,y\n1.0,2.0,3.0\n",
     r"do not yet determine all 2 coefficients under the flat prior \(1 rows seen"),
    (SPEC.replace("noise_sd = 1.0", "noise_sd = -1.0"), GOOD_DATA,
     r"key 'likelihood\.noise_sd': expected a positive number, got -1\.0"),
    ('model = "linear_regresion"\n', GOOD_DATA,
     r"key 'model': unknown model 'linear_regresion'; known models: .*linear_regression"),
    ("model = [1\n", GOOD_DATA, r"spec\.toml: not valid TOML"),
    (SPEC + "[sampling]\ndraws = 0\n", GOOD_DATA,
     r"key 'sampling\.draws': expected an integer >= 1, got 0"),
    (SPEC + "[sampling]\nadaptation = \"full\"\n", GOOD_DATA,
     r"key 'sampling\.adaptation': expected one of 'diag', 'low_rank', got 'full'"),
    (SPEC.replace("noise_sd = 1.0", "") + "[prior]\nnoise_shape = 0\n", GOOD_DATA,
     r"key 'prior\.noise_shape': expected a positive number"),
])
def test_bad_input_exits_2_naming_the_culprit(tmp_path, capsys, body, data, expected):
    code, err = run_fit(tmp_path, write_spec(tmp_path, body, data), capsys)
    assert code == 2
    assert err.startswith("bayescheck: error: ")
    assert re.search(expected, err), err


def test_missing_spec_file(tmp_path, capsys):
    code, err = run_fit(tmp_path, tmp_path / "none.toml", capsys)
    assert code == 2 and "none.toml: spec file not found" in err


def test_bad_row_in_second_batch_names_that_file(tmp_path, capsys):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.csv").write_text(GOOD_DATA)
    (tmp_path / "b" / "2.csv").write_text("x1,x2,y\n1.0,2.0,3.0\n1.0,2.0,nan\n")
    spec = write_spec(tmp_path, SPEC.replace("data.csv", "b/*.csv"), data=None)
    code, err = run_fit(tmp_path, spec, capsys)
    assert code == 2
    assert "2.csv, column 'y', row 2: missing value (NaN)" in err


@pytest.mark.parametrize("argv, message", [
    (["fit"], "the following arguments are required: spec"),
    (["check", "s.toml", "--seed", "abc"], "argument --seed: invalid int value: 'abc'"),
    (["check", "s.toml", "--adaptation", "full"], "argument --adaptation: invalid choice"),
    (["fit", "s.toml", "--colour"], "unrecognized arguments: --colour"),
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
    ([], "the following arguments are required: command"),
])
def test_usage_error_exits_2(capsys, argv, message):
    assert main(argv) == 2  # not 1, which means "disagreement"
    err = capsys.readouterr().err
    assert err.startswith("usage: bayescheck")
    assert "bayescheck: error: " in err and message in err


def test_usage_error_exit_code_from_the_console(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "reports", "fit", "--nope"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_version(capsys):
    from bayescheck.reports.cli import _version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"bayescheck {_version()}"


def test_every_option_of_every_subcommand_has_help():
    import argparse

    from bayescheck.reports.cli import _parser

    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {action.dest}"
               for name, command in [("", parser), *sub.choices.items()]
               for action in command._actions
               if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
               and not action.help]
    assert missing == []


def test_check_rejects_negative_draws(tmp_path, capsys):
    spec = write_spec(tmp_path, SPEC)
    assert main(["check", str(spec), "--draws", "0", "--out", str(tmp_path / "o")]) == 2
    assert "--draws must be >= 1" in capsys.readouterr().err


def test_parquet_batches(tmp_path, capsys):
    rng = np.random.default_rng(0)
    (tmp_path / "p").mkdir()
    for i in range(3):
        pd.DataFrame(rng.normal(size=(10, 3)), columns=["x1", "x2", "y"]).to_parquet(
            tmp_path / "p" / f"{i}.parquet")
    spec = write_spec(tmp_path, SPEC.replace("data.csv", "p/*.parquet"), data=None)
    code, err = run_fit(tmp_path, spec, capsys)
    assert code == 0, err


def test_low_rank_adaptation_needs_nutpie(tmp_path, capsys):
    spec = write_spec(tmp_path, SPEC)
    code = main(["check", str(spec), "--out", str(tmp_path / "out"), "--quiet",
                 "--sampler", "pymc", "--adaptation", "low_rank"])
    err = capsys.readouterr().err
    assert code == 2
    assert "bayescheck: error: --adaptation low_rank needs --sampler nutpie" in err
    assert not (tmp_path / "out").exists()


def test_the_command_offers_the_adaptations_the_spec_takes(capsys):
    from bayescheck.models.spec import ADAPTATIONS

    main(["check", "--help"])
    help_text = capsys.readouterr().out
    assert "{" + ",".join(ADAPTATIONS) + "}" in help_text
