"""Issue 14: bad input never yields a wrong answer (exit 0) or a traceback.

Each test is one case of the issue: either the input is handled exactly, or the command
exits 2 naming the file and the key, or the column and the row.
"""

import json
import math

import numpy as np
import pytest
from bayescheck.models.bayes_rule import BayesRule
from bayescheck.models.errors import SpecError
from bayescheck.models.linear_regression import LinearRegression
from bayescheck.models.validation import InvalidArgument
from bayescheck.reports.cli import main

LR_SPEC = """model = "linear_regression"
[data]
path = "data.csv"
target = "y"
features = ["x1", "x2"]
intercept = true
[prior]
mean = 0.0
cov = {cov}
[likelihood]
noise_sd = 1.0
"""


def lr_rows(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = 1 + X @ [2.0, -1.0] + rng.normal(size=n)
    return [[float(a), float(b), float(c)] for (a, b), c in zip(X, y, strict=True)]


def csv_text(header, rows):
    return ",".join(header) + "\n" + "".join(",".join(map(repr, r)) + "\n" for r in rows)


def fit(tmp_path, capsys, spec_text, data_text, *extra):
    (tmp_path / "data.csv").write_text(data_text)
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text)
    code = main(["fit", str(spec), "--out", str(tmp_path / "out"), "--quiet", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def all_finite(value):
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(all_finite(v) for v in value)
    return value is not None


# --- case 1: a cell whose square overflows ---------------------------------------------------

def test_lr_huge_cell_is_refused_naming_column_and_row(tmp_path, capsys):
    rows = lr_rows()
    rows[4][1] = 1e200
    code, _, err = fit(tmp_path, capsys, LR_SPEC.format(cov="10.0"),
                       csv_text(["x1", "x2", "y"], rows))
    assert code == 2
    assert "data.csv, column 'x2', row 5: value 1e+200 is too large" in err
    assert not (tmp_path / "out" / "posterior.json").exists()


def test_lr_large_but_representable_cells_fit_finitely(tmp_path, capsys):
    rows = [[a * 1e100, b, c] for a, b, c in lr_rows()]
    code, _, err = fit(tmp_path, capsys, LR_SPEC.format(cov="10.0"),
                       csv_text(["x1", "x2", "y"], rows))
    assert code == 0, err
    post = json.loads((tmp_path / "out" / "posterior.json").read_text())
    assert all_finite(post["parameters"]["theta"]["mean"])
    assert all_finite(post["log_evidence"])


# --- case 2: ARD with a 1e200 cell -------------------------------------------------------------

def test_ard_huge_cell_is_refused_not_all_pruned(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6))
    y = 2 * X[:, 1] - X[:, 3] + 0.1 * rng.normal(size=40)
    rows = [[*map(float, x), float(t)] for x, t in zip(X, y, strict=True)]
    rows[7][2] = 1e200
    spec = 'model = "ard"\n[data]\npath = "data.csv"\ntarget = "y"\n'
    code, out, err = fit(tmp_path, capsys, spec,
                         csv_text([f"x{i}" for i in range(1, 7)] + ["y"], rows))
    assert code == 2, out
    assert "column 'x3', row 8: value 1e+200 is too large" in err


# --- case 3: labels 1, 2.0, 2, 1.0 in a column that also holds text -------------------------

def test_dirichlet_labels_mixing_numbers_and_text_are_canonical(tmp_path, capsys):
    spec = 'model = "dirichlet_categorical"\n[data]\npath = "data.csv"\ntarget = "face"\n'
    code, _, err = fit(tmp_path, capsys, spec, "face\n1\n2.0\n2\n1.0\nx\n")
    assert code == 0, err
    post = json.loads((tmp_path / "out" / "posterior.json").read_text())
    assert post["parameters"]["pi"]["categories"] == ["1", "2", "x"]


def test_declared_categories_are_canonical_too(tmp_path, capsys):
    spec = ('model = "dirichlet_categorical"\n[data]\npath = "data.csv"\ntarget = "face"\n'
            'categories = ["1.0", "2", "3"]\n')
    code, _, err = fit(tmp_path, capsys, spec, "face\n1\n2.0\n3\nx\n")
    assert code == 2
    assert "column 'face', row 4: label 'x' is not one of the declared categories " \
           "['1', '2', '3']" in err


# --- case 4: a subnormal prior covariance ------------------------------------------------------

def test_subnormal_prior_cov_is_refused_naming_the_key(tmp_path, capsys):
    code, _, err = fit(tmp_path, capsys, LR_SPEC.format(cov="1e-320"),
                       csv_text(["x1", "x2", "y"], lr_rows()))
    assert code == 2
    assert "spec.toml, key 'prior.cov': covariance is too small for float64" in err


# --- case 5: Bayes rule with likelihoods that are not probabilities ---------------------------

BAYES = """model = "bayes_rule"
{extra}
[prior]
cancer = 0.008
no_cancer = 0.992
[likelihood]
cancer = 98
no_cancer = 3
"""


def test_bayes_rule_percentages_are_refused(tmp_path, capsys):
    code, _, err = fit(tmp_path, capsys, BAYES.format(extra=""), "unused\n1\n")
    assert code == 2
    assert "key 'likelihood': 'cancer': a likelihood P(D | h) is a probability in [0, 1], " \
           "got 98.0" in err


def test_bayes_rule_densities_when_declared(tmp_path, capsys):
    code, _, err = fit(tmp_path, capsys, BAYES.format(extra="density = true"), "unused\n1\n")
    assert code == 0, err
    post = json.loads((tmp_path / "out" / "posterior.json").read_text())
    assert post["parameters"]["evidence"] == pytest.approx(0.008 * 98 + 0.992 * 3)


# --- case 6: the Python API validates as the spec loader does ----------------------------------

def lr(**kw):
    args = {"features": ("a", "b"), "target": "y", "prior_mean": [0.0, 0.0],
            "prior_cov": np.eye(2)}
    args.update(kw)
    return LinearRegression(**args)


@pytest.mark.parametrize("kw, argument, message", [
    ({"prior_cov": [[1, 5], [0, 1]]}, "prior_cov",
     r"covariance matrix is not symmetric: entry \[0, 1\] is 5\.0 but \[1, 0\] is 0\.0"),
    ({"prior_cov": -10 * np.eye(2)}, "prior_cov", "not positive definite"),
    ({"prior_cov": 1e-320}, "prior_cov", "too small for float64"),
    ({"prior_cov": "1"}, "prior_cov", "expected a number"),
    ({"noise_sd": "1"}, "noise_sd", r"expected a positive number, got '1' \(str\)"),
    ({"noise_sd": True}, "noise_sd", "expected a positive number, got True"),
    ({"noise_sd": float("nan")}, "noise_sd", "expected a finite number"),
    ({"noise_shape": 0}, "noise_shape", "expected a positive number, got 0"),
    ({"noise_sd": 1e-320}, "noise_sd", r"its square \(the noise variance\) is not a positive"),
    ({"noise_sd": 1e200}, "noise_sd", r"its square \(the noise variance\) is not a positive"),
    ({"prior_mean": [0.0, 1.0, 2.0]}, "prior_mean", r"expected a number or 2 numbers"),
    ({"prior_mean": [0.0, float("inf")]}, "prior_mean", "expected finite numbers"),
    ({"prior_mean": [0.0, 1e308]}, "prior_mean", "1e\\+308 is too large"),
    ({"prior_mean": None}, "prior_mean", "both given or both None"),
    ({"features": "ab"}, "features", "expected a sequence of column names"),
    ({"features": ("a", "a")}, "features", "each once"),
    ({"intercept": "yes"}, "intercept", "expected True or False"),
])
def test_linear_regression_constructor_validates(kw, argument, message):
    with pytest.raises(InvalidArgument, match=f"^{argument}: .*{message}") as exc:
        lr(**kw)
    assert exc.value.argument == argument
    assert isinstance(exc.value, ValueError)  # what a Python user catches


def test_constructor_accepts_scalar_and_diagonal_covariances():
    assert np.array_equal(lr(prior_cov=2.0).prior_cov, 2.0 * np.eye(2))
    assert np.array_equal(lr(prior_cov=[1.0, 3.0]).prior_cov, np.diag([1.0, 3.0]))


def test_spec_and_api_give_the_same_words(tmp_path):
    from bayescheck.models.spec import load_spec

    (tmp_path / "data.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows()))
    spec = tmp_path / "spec.toml"
    spec.write_text(LR_SPEC.format(cov="[[1.0, 5.0], [0.0, 1.0]]").replace(
        "intercept = true", "intercept = false"))
    with pytest.raises(SpecError) as from_spec:
        load_spec(spec)
    with pytest.raises(InvalidArgument) as from_api:
        lr(prior_cov=[[1.0, 5.0], [0.0, 1.0]])
    assert from_spec.value.key == "prior.cov"
    assert str(from_spec.value).endswith(from_api.value.message)


@pytest.mark.parametrize("kw, argument, message", [
    ({"likelihood": [98.0, 3.0]}, "likelihood", "is a probability in"),
    ({"prior": [0.5, 0.6]}, "prior", "sum to 1"),
    ({"prior": [1.5, -0.5]}, "prior", "expected a number >= 0"),
    ({"likelihood": [0.0, 0.0]}, "likelihood", "P\\(D\\) = 0"),
    ({"hypotheses": ("h",), "prior": [1.0], "likelihood": [0.5]}, "prior", "two distinct"),
])
def test_bayes_rule_constructor_validates(kw, argument, message):
    args = {"hypotheses": ("h1", "h2"), "prior": [0.5, 0.5], "likelihood": [0.9, 0.1]}
    args.update(kw)
    with pytest.raises(InvalidArgument, match=f"^{argument}: .*{message}"):
        BayesRule(**args)


# --- case 7: naive Bayes without smoothing, a row no class can produce -------------------------

NB = """model = "naive_bayes"
[data]
path = "data.csv"
target = "c"
[prior]
smoothing = false
"""
NB_DATA = "a,b,c\nx,p,yes\nx,q,yes\ny,p,no\ny,p,no\n"


def test_nb_query_with_zero_score_in_every_class_is_refused(tmp_path, capsys):
    spec = NB + '[[query]]\nname = "clash"\na = "y"\nb = "q"\n'
    code, _, err = fit(tmp_path, capsys, spec, NB_DATA)
    assert code == 2
    assert "spec.toml, key 'query': query 'clash' has probability 0 under every class " \
           "(a = 'y' was never seen with yes; b = 'q' was never seen with no), so " \
           "P(class | x) = 0 / 0 is undefined" in err


def test_nb_query_ruled_out_by_one_feature_only_is_answered(tmp_path, capsys):
    spec = NB + '[[query]]\nname = "fine"\na = "x"\nb = "q"\n'
    code, out, err = fit(tmp_path, capsys, spec, NB_DATA)
    assert code == 0, err
    assert "P(yes|x) = 1.0000" in out


def test_nb_predict_row_with_zero_score_in_every_class_names_the_row(tmp_path, capsys):
    code, _, err = fit(tmp_path, capsys, NB, NB_DATA)
    assert code == 0, err
    (tmp_path / "new.csv").write_text("a,b\nx,p\ny,q\n")
    code = main(["predict", str(tmp_path / "spec.toml"), "--model-from", str(tmp_path / "out"),
                 "--data", str(tmp_path / "new.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert "new.csv, row 2: has probability 0 under every class" in err


# --- output folders: unusable, locked, stale ----------------------------------------------------

GOOD_LR = LR_SPEC.format(cov="10.0")


def fit_into(tmp_path, capsys, out, *extra):
    (tmp_path / "data.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows()))
    (tmp_path / "spec.toml").write_text(GOOD_LR)
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(out), "--quiet", *extra])
    return code, capsys.readouterr().err


def test_out_naming_an_existing_file(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    code, err = fit_into(tmp_path, capsys, tmp_path / "afile")
    assert code == 2
    assert "afile: exists and is not a folder" in err and "Traceback" not in err


def test_out_below_a_file_cannot_be_created(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    code, err = fit_into(tmp_path, capsys, tmp_path / "afile" / "sub")
    assert code == 2
    assert "afile/sub: cannot create the folder" in err


def test_out_not_writable(tmp_path, capsys, monkeypatch):
    import bayescheck.reports.outdir

    monkeypatch.setattr(bayescheck.reports.outdir.os, "access", lambda path, mode: False)
    code, err = fit_into(tmp_path, capsys, tmp_path / "o")
    assert code == 2
    assert "o: the folder is not writable" in err


def test_second_writer_on_one_out_is_refused_with_the_holder(tmp_path, capsys):
    import os

    from bayescheck.reports.outdir import output_folder

    with output_folder(tmp_path / "o"):
        code, err = fit_into(tmp_path, capsys, tmp_path / "o")
    assert code == 2
    assert f"o: in use by process {os.getpid()}" in err
    code, err = fit_into(tmp_path, capsys, tmp_path / "o")  # released: usable again
    assert code == 0, err


def test_lock_held_by_another_process(tmp_path):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from bayescheck.reports.outdir import output_folder\n"
            "with output_folder(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)",
            str(tmp_path / "o"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        (tmp_path / "data.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows()))
        (tmp_path / "spec.toml").write_text(GOOD_LR)
        done = subprocess.run([sys.executable, "-m", "reports", "fit", str(tmp_path / "spec.toml"),
                               "--out", str(tmp_path / "o")], capture_output=True, text=True)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 2
    assert f"in use by process {holder.pid}" in done.stderr


def test_failed_rerun_leaves_no_stale_posterior(tmp_path, capsys):
    code, err = fit_into(tmp_path, capsys, tmp_path / "o")
    assert code == 0 and (tmp_path / "o" / "posterior.json").exists()
    (tmp_path / "data.csv").write_text("x1,x2,y\n1,2,abc\n")
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    assert not (tmp_path / "o" / "posterior.json").exists()
    assert not list((tmp_path / "o").glob("*.tmp"))


def test_predict_out_naming_a_folder(tmp_path, capsys):
    (tmp_path / "data.csv").write_text(NB_DATA)
    (tmp_path / "spec.toml").write_text(NB)
    (tmp_path / "folder").mkdir()
    code = main(["predict", str(tmp_path / "spec.toml"), "--model-from", str(tmp_path),
                 "--data", str(tmp_path / "data.csv"), "--out", str(tmp_path / "folder")])
    err = capsys.readouterr().err
    assert code == 2
    assert "folder: is a folder; --out names the CSV file to write" in err


def test_spec_not_utf8(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_bytes(b'model = "linear_regression"\n# caf\xe9\n')
    code = main(["fit", str(spec), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "spec.toml: not UTF-8 text (byte 0xe9 at offset 33)" in capsys.readouterr().err


@pytest.mark.parametrize("name, content, message", [
    ("report.json", '{"foo": 1}', "report.json: not a result written by bayescheck"),
    ("calibration.json", "[1, 2]", "calibration.json: not a result written by bayescheck"),
    ("calibration.json", '{"verdict": "pass"}',
     "calibration.json is incomplete or not written by this version of bayescheck "
     "(KeyError: missing 'model')"),
    ("report.json", '{"verdict": "pass"}', "report.json is incomplete"),
    ("report.json", "nonsense{", "report.json: cannot read"),
])
def test_report_on_a_foreign_folder(tmp_path, capsys, name, content, message):
    (tmp_path / name).write_text(content)
    code = main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


# --- resource limits ---------------------------------------------------------------------------

def test_too_many_features_refused_with_the_estimate_before_allocating(tmp_path, capsys,
                                                                       monkeypatch):
    import bayescheck.models.resources

    monkeypatch.setattr(bayescheck.models.resources, "available_memory", lambda: 1 << 20)
    d = 200  # 6 x 200 x 200 x 8 bytes = 1.8 MB > 1 MB
    header = [f"x{i}" for i in range(d)] + ["y"]
    (tmp_path / "data.csv").write_text(",".join(header) + "\n" + ",".join("1" * (d + 1)) + "\n")
    (tmp_path / "spec.toml").write_text('model = "linear_regression"\n[data]\npath = "data.csv"'
                                        '\ntarget = "y"\n')
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert "key 'data.features': too large for this machine: 200 features (6 matrices of " \
           "200 x 200) need about 1.8 MB of memory, and it has 1.0 MB" in err


def test_mixture_components_times_features_refused(tmp_path, capsys, monkeypatch):
    import bayescheck.models.resources

    monkeypatch.setattr(bayescheck.models.resources, "available_memory", lambda: 1 << 20)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "spec.toml").write_text('model = "gaussian_mixture"\nn_components = 10000\n'
                                        '[data]\npath = "data.csv"\n')
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert "key 'n_components': too large for this machine: 10000 components x 2 features" in err


# --- headers -------------------------------------------------------------------------------------

def test_header_with_spaces_names_the_columns_without_them(tmp_path, capsys):
    code, _, err = fit(tmp_path, capsys, GOOD_LR, csv_text(["x1", " x2", " y "], lr_rows()))
    assert code == 0, err


def test_duplicate_header_is_refused_not_renamed(tmp_path, capsys):
    code, _, err = fit(tmp_path, capsys, GOOD_LR, csv_text(["x1", "x1", "y"], lr_rows()))
    assert code == 2
    assert "data.csv, column 'x1': the header names this column twice (columns 1 and 2)" in err


def test_duplicate_header_in_a_later_batch(tmp_path, capsys):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows()))
    (tmp_path / "b" / "2.csv").write_text(csv_text(["x1", "y", "y"], lr_rows()))
    code, _, err = fit(tmp_path, capsys, GOOD_LR.replace("data.csv", "b/*.csv"), "")
    assert code == 2
    assert "2.csv, column 'y': the header names this column twice (columns 2 and 3)" in err


def test_bom_and_crlf_give_the_clean_result(tmp_path, capsys):
    clean = csv_text(["x1", "x2", "y"], lr_rows())
    code, _, err = fit(tmp_path, capsys, GOOD_LR, clean)
    assert code == 0, err
    want = json.loads((tmp_path / "out" / "posterior.json").read_text())["parameters"]
    (tmp_path / "data.csv").write_bytes(b"\xef\xbb\xbf" + clean.replace("\n", "\r\n").encode())
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o2"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    got = json.loads((tmp_path / "o2" / "posterior.json").read_text())["parameters"]
    assert got == want


# --- messages that named the wrong thing ---------------------------------------------------------

def test_gmm_huge_cell_names_column_and_row(tmp_path, capsys):
    spec = 'model = "gaussian_mixture"\nn_components = 2\n[data]\npath = "data.csv"\n'
    code, _, err = fit(tmp_path, capsys, spec, "a,b\n1,2\n2,1\n5,6\n6,5\n1e200,3\n")
    assert code == 2
    assert "data.csv, column 'a', row 5: value 1e+200 is too large" in err


def test_naive_bayes_advice_names_a_spec_key_not_var_floor(tmp_path, capsys):
    spec = NB.replace('target = "c"', 'target = "c"\nfeatures_kind = "gaussian"')
    code, _, err = fit(tmp_path, capsys, spec, "r,c\n1.0,a\n1.0,a\n2.0,b\n3.0,b\n")
    assert code == 2
    assert "feature 'r' in class 'a': expected a positive maximum-likelihood variance" in err
    assert 'set [prior] gaussian = "nig"' in err and "var_floor" not in err


def test_resume_with_the_spec_named_by_another_path(tmp_path, capsys, monkeypatch):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows(seed=1)))
    (tmp_path / "spec.toml").write_text(GOOD_LR.replace("data.csv", "b/*.csv"))
    out = str(tmp_path / "o")
    assert main(["fit", str(tmp_path / "spec.toml"), "--out", out, "--quiet"]) == 0
    (tmp_path / "b" / "2.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows(seed=2)))
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    code = main(["fit", "../spec.toml", "--out", out, "--quiet", "--resume"])
    assert code == 0, capsys.readouterr().err
    resumed = json.loads((tmp_path / "o" / "posterior.json").read_text())
    assert main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o2"),
                 "--quiet"]) == 0
    fresh = json.loads((tmp_path / "o2" / "posterior.json").read_text())
    assert resumed["n_rows"] == 60
    np.testing.assert_allclose(resumed["parameters"]["theta"]["mean"],
                               fresh["parameters"]["theta"]["mean"], rtol=1e-12)


@pytest.mark.parametrize("second, message", [
    ("a,c\nx,maybe\ny,no\n", "2.csv, column 'c', row 1: class 'maybe' is new: the batches in "
                             "the checkpoint have only ['no', 'yes']"),
    ("a,c\ny,no\nz,no\n", "2.csv, column 'a', row 2: category 'z' is new: the batches in the "
                          "checkpoint have only ['x', 'y']"),
])
def test_naive_bayes_resume_names_the_new_class_file_and_row(tmp_path, capsys, second, message):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.csv").write_text("a,c\nx,yes\ny,no\nx,yes\n")
    (tmp_path / "spec.toml").write_text('model = "naive_bayes"\n[data]\npath = "b/*.csv"\n'
                                        'target = "c"\n')
    out = str(tmp_path / "o")
    assert main(["fit", str(tmp_path / "spec.toml"), "--out", out, "--quiet"]) == 0
    (tmp_path / "b" / "2.csv").write_text(second)
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", out, "--quiet", "--resume"])
    assert code == 2
    assert message in capsys.readouterr().err


def _beta(**kw):
    from bayescheck.models import BetaBernoulli

    return BetaBernoulli(target="y", **kw)


def _dirichlet(**kw):
    from bayescheck.models import DirichletCategorical

    return DirichletCategorical(target="y", **kw)


def _ard(**kw):
    from bayescheck.models.ard import ARD

    return ARD(features=("a",), target="y", **kw)


@pytest.mark.parametrize("build, kw, argument, message", [
    (_beta, {"a": "1"}, "a", r"expected a positive number, got '1' \(str\)"),
    (_beta, {"b": float("inf")}, "b", "expected a finite number"),
    (_dirichlet, {"categories": ("1", "1.0")}, "categories", "expected at least 2 distinct"),
    (_dirichlet, {"concentration": (1.0, 2.0)}, "concentration",
     "a concentration per category needs the categories"),
    (_ard, {"alpha_shape": "1"}, "alpha_shape", "expected a positive number, got '1'"),
    (_ard, {"tol": -1.0}, "tol", "expected a positive number, got -1.0"),
])
def test_other_constructors_validate_with_the_same_words(build, kw, argument, message):
    with pytest.raises(InvalidArgument, match=f"^{argument}: {message}"):
        build(**kw)


def test_an_os_error_anywhere_is_exit_2_naming_the_file(tmp_path, capsys, monkeypatch):
    import bayescheck.reports.report

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "report.html"))

    monkeypatch.setattr(bayescheck.reports.report, "render_run", refuse)
    (tmp_path / "report.json").write_text('{"verdict": "pass"}')
    code = main(["report", str(tmp_path)])
    assert code == 2
    assert f"{tmp_path / 'report.html'}: Permission denied" in capsys.readouterr().err


def test_refused_arguments_create_no_output_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "data.csv").write_text(csv_text(["x1", "x2", "y"], lr_rows()))
    (tmp_path / "spec.toml").write_text(GOOD_LR)
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", "spec.toml", "--simulations", "5"]) == 2
    assert main(["check", "spec.toml", "--draws", "0"]) == 2
    assert "--draws must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "bayescheck-output").exists()
