"""The 29 failures of issue 14 re-run: each must now be refused cleanly or computed correctly.

Usage: ``python benchmarks/bench_bad_input.py`` (prints a table and the totals; exit 1 when
a case misbehaves). In-process through ``reports.cli.main``; about 10 s.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescheck.models.linear_regression import LinearRegression  # noqa: E402
from bayescheck.models.validation import InvalidArgument  # noqa: E402
from bayescheck.reports.cli import main  # noqa: E402
from bayescheck.reports.outdir import output_folder  # noqa: E402

LR = """model = "linear_regression"
[data]
path = "{path}"
target = "y"
features = ["x1", "x2"]
intercept = true
[prior]
mean = 0.0
cov = {cov}
[likelihood]
noise_sd = 1.0
"""


def lr_csv(n=30, seed=0, bad=None, header="x1,x2,y"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = 1 + X @ [2.0, -1.0] + rng.normal(size=n)
    rows = [[float(a), float(b), float(c)] for (a, b), c in zip(X, y, strict=True)]
    if bad:
        rows[bad[0]][bad[1]] = bad[2]
    return header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


def run(argv, cwd=None):
    err, out = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with redirect_stderr(err), redirect_stdout(out):
            code = main([str(a) for a in argv])
    finally:
        os.chdir(here)
    return code, err.getvalue(), out.getvalue()


def fit(d: Path, spec: str, data: str | bytes | None, *extra, name="data.csv"):
    if data is not None:
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    (d / "spec.toml").write_text(spec)
    return run(["fit", d / "spec.toml", "--out", d / "out", "--quiet", *extra])


def finite_posterior(d: Path) -> bool:
    post = json.loads((d / "out" / "posterior.json").read_text())
    theta = post["parameters"]["theta"]
    values = [*theta["mean"], *theta["sd"], post["log_evidence"]]
    return all(isinstance(v, float) and math.isfinite(v) for v in values)


# Each case returns (outcome, detail): outcome "refused" (exit 2 with the words expected),
# "computed" (exit 0 and a correct result) or "BAD".
def refused(result, *words):
    code, err, _ = result
    ok = code == 2 and "Traceback" not in err and all(w in err for w in words)
    return ("refused" if ok else "BAD"), err.strip().splitlines()[-1] if err else f"exit {code}"


def case_lr_1e200(d):
    return refused(fit(d, LR.format(path="data.csv", cov=10.0), lr_csv(bad=(4, 1, 1e200))),
                   "column 'x2', row 5")


def case_ard_1e200(d):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6))
    y = 2 * X[:, 1] - X[:, 3] + 0.1 * rng.normal(size=40)
    X[7, 2] = 1e200
    text = "x1,x2,x3,x4,x5,x6,y\n" + "".join(
        ",".join(map(repr, [*map(float, x), float(t)])) + "\n" for x, t in zip(X, y, strict=True))
    return refused(fit(d, 'model = "ard"\n[data]\npath = "data.csv"\ntarget = "y"\n', text),
                   "column 'x3', row 8")


def case_labels(d):
    code, err, _ = fit(d, 'model = "dirichlet_categorical"\n[data]\npath = "data.csv"\n'
                          'target = "f"\n', "f\n1\n2.0\n2\n1.0\nx\n")
    cats = json.loads((d / "out" / "posterior.json").read_text())["parameters"]["pi"][
        "categories"] if code == 0 else None
    return ("computed" if cats == ["1", "2", "x"] else "BAD"), f"categories {cats}"


def case_subnormal_cov(d):
    return refused(fit(d, LR.format(path="data.csv", cov="1e-320"), lr_csv()), "prior.cov")


def case_bayes_percentages(d):
    spec = ('model = "bayes_rule"\n[prior]\ncancer = 0.008\nno_cancer = 0.992\n'
            '[likelihood]\ncancer = 98\nno_cancer = 3\n')
    return refused(fit(d, spec, None), "key 'likelihood'", "'cancer'")


def _api(kw, words):
    args = {"features": ("a", "b"), "target": "y", "prior_mean": [0.0, 0.0],
            "prior_cov": np.eye(2), **kw}
    try:
        LinearRegression(**args)
    except InvalidArgument as exc:
        return ("refused" if all(w in str(exc) for w in words) else "BAD"), str(exc)
    except Exception as exc:  # noqa: BLE001 - that is the failure being counted
        return "BAD", f"{type(exc).__name__}: {exc}"
    return "BAD", "accepted"


def case_api_asymmetric(d):
    return _api({"prior_cov": [[1, 5], [0, 1]]}, ["prior_cov", "not symmetric"])


def case_api_negative(d):
    return _api({"prior_cov": -10 * np.eye(2)}, ["prior_cov", "not positive definite"])


def case_api_string(d):
    return _api({"noise_sd": "1"}, ["noise_sd", "expected a positive number"])


NB = ('model = "naive_bayes"\n[data]\npath = "data.csv"\ntarget = "c"\n[prior]\n'
      'smoothing = false\n')


def case_nb_zero_scores(d):
    return refused(fit(d, NB + '[[query]]\nname = "q"\na = "y"\nb = "q"\n',
                       "a,b,c\nx,p,yes\nx,q,yes\ny,p,no\ny,p,no\n"), "query 'q'", "0 / 0")


def case_usage(argv, words):
    def case(d):
        return refused(run(argv), "usage: bayescheck", *words)
    return case


def case_out(target, words):
    def case(d):
        out = target(d)
        (d / "data.csv").write_text(lr_csv())
        (d / "spec.toml").write_text(LR.format(path="data.csv", cov=10.0))
        return refused(run(["fit", d / "spec.toml", "--out", out]), *words)
    return case


def _file(d):
    (d / "f").write_text("x")
    return d / "f"


def _below_file(d):
    return _file(d) / "sub"


def case_predict_folder(d):
    fit(d, NB, "a,b,c\nx,p,yes\nx,q,yes\ny,p,no\ny,p,no\n")
    return refused(run(["predict", d / "spec.toml", "--model-from", d / "out", "--data",
                        d / "data.csv", "--out", d]), "is a folder")


def case_spec_latin1(d):
    (d / "spec.toml").write_bytes(b'model = "ard"\n# caf\xe9\n')
    return refused(run(["fit", d / "spec.toml", "--out", d / "o"]), "not UTF-8")


def case_two_writers(d):
    (d / "data.csv").write_text(lr_csv())
    (d / "spec.toml").write_text(LR.format(path="data.csv", cov=10.0))
    with output_folder(d / "out"):
        result = run(["fit", d / "spec.toml", "--out", d / "out"])
    return refused(result, f"in use by process {os.getpid()}")


def case_report(name, content):
    def case(d):
        (d / name).write_text(content)
        return refused(run(["report", d]), name)
    return case


def case_million_features(d):
    n = 1_000_000
    (d / "w.csv").write_text(",".join(f"x{i}" for i in range(n)) + ",y\n" + "1," * n + "1\n")
    spec = 'model = "linear_regression"\n[data]\npath = "w.csv"\ntarget = "y"\n'
    started = time.perf_counter()
    outcome, detail = refused(fit(d, spec, None), "too large for this machine", "TB")
    return outcome, f"{detail[-90:]} ({time.perf_counter() - started:.1f} s)"


def case_timestamp(d):
    rng = np.random.default_rng(3)
    x = 1e9 + rng.normal(size=50)
    y = 2 * (x - 1e9) + 1 + rng.normal(size=50)
    text = "x1,y\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(x, y, strict=True))
    spec = ('model = "linear_regression"\n[data]\npath = "data.csv"\ntarget = "y"\n'
            'intercept = true\n[prior]\nmean = 0.0\ncov = 10.0\n[likelihood]\nnoise_sd = 1.0\n')
    code, err, _ = fit(d, spec, text)
    if code == 0:
        return "computed", "fitted under the proper prior"
    return ("refused" if "flat prior" not in err else "BAD"), err.strip()[-100:]


def case_resume_other_path(d):
    (d / "b").mkdir()
    (d / "b" / "1.csv").write_text(lr_csv(seed=1))
    (d / "spec.toml").write_text(LR.format(path="b/*.csv", cov=10.0))
    run(["fit", d / "spec.toml", "--out", d / "out", "--quiet"])
    (d / "b" / "2.csv").write_text(lr_csv(seed=2))
    (d / "sub").mkdir()
    code, err, _ = run(["fit", "../spec.toml", "--out", d / "out", "--quiet", "--resume"],
                       cwd=d / "sub")
    rows = json.loads((d / "out" / "posterior.json").read_text())["n_rows"] if code == 0 else 0
    return ("computed" if rows == 60 else "BAD"), f"exit {code}, {rows} rows"


def case_header_spaces(d):
    code, err, _ = fit(d, LR.format(path="data.csv", cov=10.0), lr_csv(header="x1, x2, y"))
    return ("computed" if code == 0 and finite_posterior(d) else "BAD"), err.strip()[-80:]


def case_gmm_1e200(d):
    spec = 'model = "gaussian_mixture"\nn_components = 2\n[data]\npath = "data.csv"\n'
    return refused(fit(d, spec, "a,b\n1,2\n2,1\n5,6\n6,5\n1e200,3\n"), "column 'a', row 5")


def case_var_floor(d):
    spec = NB.replace('target = "c"', 'target = "c"\nfeatures_kind = "gaussian"')
    outcome, detail = refused(fit(d, spec, "r,c\n1.0,a\n1.0,a\n2.0,b\n3.0,b\n"),
                              'gaussian = "nig"')
    return ("BAD" if "var_floor" in detail else outcome), detail


def case_duplicate_header(d):
    return refused(fit(d, LR.format(path="data.csv", cov=10.0), lr_csv(header="x1,x1,y")),
                   "column 'x1'", "twice")


def case_nb_resume_class(d):
    (d / "b").mkdir()
    (d / "b" / "1.csv").write_text("a,c\nx,yes\ny,no\nx,yes\n")
    (d / "spec.toml").write_text('model = "naive_bayes"\n[data]\npath = "b/*.csv"\n'
                                 'target = "c"\n')
    run(["fit", d / "spec.toml", "--out", d / "out", "--quiet"])
    (d / "b" / "2.csv").write_text("a,c\nx,maybe\n")
    return refused(run(["fit", d / "spec.toml", "--out", d / "out", "--quiet", "--resume"]),
                   "2.csv, column 'c', row 1", "'maybe'")


def case_stale_posterior(d):
    fit(d, LR.format(path="data.csv", cov=10.0), lr_csv())
    outcome, detail = refused(fit(d, LR.format(path="data.csv", cov=10.0),
                                  lr_csv(bad=(2, 0, "abc"))), "row 3")
    stale = (d / "out" / "posterior.json").exists()
    return ("BAD" if stale else outcome), detail + ("; stale posterior.json" if stale else "")


CASES = {
    "1 LR cell 1e200": case_lr_1e200,
    "2 ARD cell 1e200": case_ard_1e200,
    "3 labels 1, 2.0, 2, 1.0, x": case_labels,
    "4 LR cov 1e-320": case_subnormal_cov,
    "5 Bayes rule likelihoods 98, 3": case_bayes_percentages,
    "6a API asymmetric prior_cov": case_api_asymmetric,
    "6b API prior_cov = -10 I": case_api_negative,
    "6c API noise_sd = '1'": case_api_string,
    "7 NB query 0 in every class": case_nb_zero_scores,
    "usage --seed abc": case_usage(["check", "s.toml", "--seed", "abc"], ["--seed"]),
    "usage no spec": case_usage(["fit"], ["required"]),
    "usage unknown flag": case_usage(["fit", "s.toml", "--colour"], ["--colour"]),
    "--out an existing file": case_out(_file, ["not a folder"]),
    "--out unwritable": case_out(lambda d: Path("/proc/self"), ["not writable"]),
    "--out uncreatable": case_out(_below_file, ["cannot create"]),
    "predict --out a folder": case_predict_folder,
    "spec not UTF-8": case_spec_latin1,
    "two fits on one --out": case_two_writers,
    "report: foreign report.json": case_report("report.json", '{"foo": 1}'),
    "report: foreign calibration.json": case_report("calibration.json", '{"verdict": "pass"}'),
    "1e6 feature columns": case_million_features,
    "timestamp-scale feature": case_timestamp,
    "resume, spec by another path": case_resume_other_path,
    "header 'x1, x2, y'": case_header_spaces,
    "GMM cell 1e200": case_gmm_1e200,
    "NB advice var_floor": case_var_floor,
    "duplicate header x1,x1,y": case_duplicate_header,
    "NB --resume new class": case_nb_resume_class,
    "failed re-run, stale posterior": case_stale_posterior,
}


def main_() -> int:
    counts = {"refused": 0, "computed": 0, "BAD": 0}
    for name, case in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            outcome, detail = case(Path(tmp))
        counts[outcome] += 1
        print(f"{outcome:<9} {name:<34} {detail[:150]}")
    print(f"\n{len(CASES)} cases: {counts['refused']} refused cleanly (exit 2, named), "
          f"{counts['computed']} computed correctly, {counts['BAD']} misbehaved")
    return 1 if counts["BAD"] else 0


if __name__ == "__main__":
    sys.exit(main_())
