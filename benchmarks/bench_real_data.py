"""The real-data gallery: ``bayescheck check`` with default settings on public data sets.

Every family on data that packages ship (scikit-learn's bundled sets, statsmodels datasets,
pgmpy's example networks forward-sampled with a fixed seed), none of them our examples. Each
case writes its CSV and spec into ``--out``; ``check CASE.toml --seed S`` runs with the
sampler at its defaults (4 chains x 1000 draws after 1000 tuning steps), one run at a time.

    .venv/bin/python benchmarks/bench_real_data.py [--seeds 0 1 2] [--cases NAME ...]
                                                   [--out DIR] [--rerun] [--list]

Resumable: each finished (case, seed) is cached in benchmarks/real_data_results.json (next to
this script), and a run skips what is already there (``--rerun`` repeats it). The table of
benchmarks/REAL_DATA.md between the markers ``<!-- table -->`` and ``<!-- /table -->`` is
rewritten from that cache; the words around it (what each inconclusive means) are kept.
It samples with NUTS, about 20-90 s a run on a 2-core machine, so it is not part of
``make test`` nor of ``make bench``: run it on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / "real_data_results.json"
PAGE = HERE / "REAL_DATA.md"


# ----------------------------------------------------------------------------- data sets
def _stackloss() -> pd.DataFrame:
    import statsmodels.api as sm

    frame = sm.datasets.stackloss.load_pandas().data
    return frame.rename(columns=str.lower)


def _diabetes(noise_columns: int = 0) -> pd.DataFrame:
    from sklearn.datasets import load_diabetes

    frame = load_diabetes(as_frame=True).frame   # features as shipped (centred, scaled)
    if noise_columns:
        rng = np.random.default_rng(13)
        scale = frame["bmi"].std()
        for j in range(noise_columns):
            frame.insert(frame.shape[1] - 1, f"noise{j}", rng.normal(0.0, scale, len(frame)))
    return frame


def _iris() -> pd.DataFrame:
    from sklearn.datasets import load_iris

    bunch = load_iris(as_frame=True)
    frame = bunch.frame.drop(columns="target")
    frame.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    frame["species"] = bunch.target_names[bunch.target]
    return frame


def _breast_cancer() -> pd.DataFrame:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame = bunch.frame
    frame["malignant"] = (bunch.target == 0).astype(int)   # sklearn codes malignant as 0
    return frame


def _digits_labels() -> pd.DataFrame:
    from sklearn.datasets import load_digits

    return pd.DataFrame({"digit": load_digits().target})


def _anes96() -> pd.DataFrame:
    import statsmodels.api as sm

    frame = sm.datasets.anes96.load_pandas().data
    out = pd.DataFrame({c: frame[c].astype(int) for c in ["PID", "educ", "selfLR"]})
    out["vote"] = np.where(frame["vote"] == 1, "Dole", "Clinton")
    return out


def _pgmpy_sample(name: str, rows: int, seed: int = 0) -> pd.DataFrame:
    import warnings

    from pgmpy.sampling import BayesianModelSampling
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        network = get_example_model(name)
        frame = BayesianModelSampling(network).forward_sample(size=rows, seed=seed,
                                                              show_progress=False)
    return frame[sorted(frame.columns)]


# ----------------------------------------------------------------------------- the cases
# Each case: name, data set, family, what is modelled, and a writer that puts the CSV and
# the spec in a folder and returns the spec's path. [sampling] is never given: defaults.

def _write(folder: Path, name: str, frame: pd.DataFrame, spec: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / f"{name}.csv", index=False)
    (folder / f"{name}.toml").write_text(spec)
    return folder / f"{name}.toml"


def lr_known_stackloss(folder: Path) -> Path:
    return _write(folder, "stackloss", _stackloss(), """\
# statsmodels' stackloss (Brownlee 1965, 21 rows): stack loss on air flow, water temperature
# and acid concentration, known noise sd 3.24 (the least-squares residual sd), vague prior.
model = "linear_regression"
[data]
path = "stackloss.csv"
target = "stackloss"
intercept = true
[prior]
mean = 0.0
cov = 10000.0
[likelihood]
noise_sd = 3.24
""")


def lr_unknown_diabetes(folder: Path) -> Path:
    return _write(folder, "diabetes", _diabetes(), """\
# scikit-learn's diabetes (442 rows, 10 standardised features): unknown noise,
# theta | sigma2 ~ N(0, 100 sigma2 I), sigma2 ~ InvGamma(1, 1) (the default).
model = "linear_regression"
[data]
path = "diabetes.csv"
target = "target"
intercept = true
[prior]
mean = 0.0
cov = 100.0
""")


def ard_diabetes(folder: Path) -> Path:
    return _write(folder, "diabetes", _diabetes(), """\
# scikit-learn's diabetes (442 rows, 10 features + intercept), ARD with every default:
# fast (Tipping-Faul) type-II ML, exact conditional posterior of the kept weights.
model = "ard"
[data]
path = "diabetes.csv"
target = "target"
intercept = true
""")


def ard_diabetes_noise_both(folder: Path) -> Path:
    return _write(folder, "diabetes_noise", _diabetes(noise_columns=10), """\
# Issue 13 case 3: diabetes plus 10 pure-noise columns (N(0, sd of bmi), numpy seed 13),
# RIC threshold, and both comparisons: the exact conditional posterior with the certificate
# (the verdict) and the hierarchical posterior with Gamma(1, 1) hyperpriors (information).
model = "ard"
[data]
path = "diabetes_noise.csv"
target = "target"
intercept = true
[fit]
relevance_threshold = "ric"
[check]
mode = "both"
""")


def mixture_iris_full(folder: Path) -> Path:
    return _write(folder, "iris", _iris().drop(columns="species"), """\
# scikit-learn's iris, the four measurements (labels unused), K = 3, full covariances,
# MAP-EM with weak conjugate priors (the case of issue 13 and bench_mixture_iris.py).
model = "gaussian_mixture"
n_components = 3
covariance = "full"
[data]
path = "iris.csv"
[prior]
concentration = 2.0
mean = [5.84, 3.06, 3.76, 1.20]
kappa = 0.01
iw_dof = 6.0
iw_scale = 0.1
""")


def mixture_wine_diag(folder: Path) -> Path:
    from sklearn.datasets import load_wine

    frame = load_wine(as_frame=True).frame[["alcohol", "flavanoids", "color_intensity"]]
    return _write(folder, "wine", frame, """\
# scikit-learn's wine (178 rows), three of its 13 measurements (alcohol, flavanoids, colour
# intensity; labels unused), K = 3, diagonal covariances, MAP-EM with weak priors.
model = "gaussian_mixture"
n_components = 3
covariance = "diag"
[data]
path = "wine.csv"
[prior]
concentration = 2.0
mean = [13.0, 2.0, 5.0]
kappa = 0.01
ig_shape = 2.0
ig_scale = 0.5
""")


def beta_bernoulli_breast_cancer(folder: Path) -> Path:
    return _write(folder, "breast_cancer", _breast_cancer()[["malignant"]], """\
# scikit-learn's breast-cancer (Wisconsin diagnostic, 569 rows): the share of malignant
# tumours, uniform Beta(1, 1) prior (the default).
model = "beta_bernoulli"
[data]
path = "breast_cancer.csv"
target = "malignant"
""")


def dirichlet_digits(folder: Path) -> Path:
    return _write(folder, "digits", _digits_labels(), """\
# scikit-learn's digits (1797 images): the share of each label 0-9, Dirichlet(1) prior.
model = "dirichlet_categorical"
[data]
path = "digits.csv"
target = "digit"
""")


def nb_gaussian_iris_decision(folder: Path) -> Path:
    return _write(folder, "iris", _iris(), """\
# scikit-learn's iris with its labels: Gaussian naive Bayes, default NIG prior (mu0 0,
# kappa0 1, a0 1, b0 1). Queries: a typical versicolor, a versicolor/virginica borderline
# and the issue-13 outlier (about 19 sd from setosa, whose scores live in the Student-t tails).
# Decision: calling a virginica "versicolor" costs 5, any other error 1.
model = "naive_bayes"
[data]
path = "iris.csv"
target = "species"
features_kind = "gaussian"
[decision]
classes = ["setosa", "versicolor", "virginica"]
options = ["setosa", "versicolor", "virginica"]
loss = [[0.0, 1.0, 1.0],
        [1.0, 0.0, 5.0],
        [1.0, 1.0, 0.0]]
[[query]]
name = "typical_versicolor"
sepal_length = 5.9
sepal_width = 2.8
petal_length = 4.3
petal_width = 1.3
[[query]]
name = "borderline"
sepal_length = 6.1
sepal_width = 2.9
petal_length = 4.9
petal_width = 1.6
[[query]]
name = "far_outlier"
sepal_length = 5.0
sepal_width = 3.4
petal_length = 5.0
petal_width = 1.7
""")


def nb_categorical_anes96(folder: Path) -> Path:
    return _write(folder, "anes96", _anes96(), """\
# statsmodels' anes96 (1996 American National Election Study, 944 voters): the vote
# (Clinton / Dole) from party identification (PID 0-6), education (1-7) and self-placed
# left-right (1-7), categorical naive Bayes with Laplace smoothing. Decision: the zero-one loss.
model = "naive_bayes"
[data]
path = "anes96.csv"
target = "vote"
features = ["PID", "educ", "selfLR"]
[decision]
classes = ["Clinton", "Dole"]
loss = [[0.0, 1.0], [1.0, 0.0]]
[[query]]
name = "independent_centre"
PID = "3"
educ = "4"
selfLR = "4"
[[query]]
name = "strong_republican_right"
PID = "6"
educ = "6"
selfLR = "6"
""")


def bayes_rule_breast_cancer(folder: Path) -> Path:
    frame = _breast_cancer()
    large = frame["mean radius"] > 15.0
    prior_m = float(frame["malignant"].mean())
    lik_m = float(large[frame["malignant"] == 1].mean())
    lik_b = float(large[frame["malignant"] == 0].mean())
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "radius.toml"
    spec.write_text(f"""\
# scikit-learn's breast-cancer data give the numbers: the share of malignant tumours
# (prior) and, per diagnosis, the share with mean radius above 15 (likelihood). A new
# tumour has mean radius above 15: P(malignant | radius > 15) by Bayes' rule.
model = "bayes_rule"
observation = "mean radius > 15"
[prior]
malignant = {prior_m!r}
benign = {1.0 - prior_m!r}
[likelihood]
malignant = {lik_m!r}
benign = {lik_b!r}
""")
    return spec


def bn_sachs(folder: Path) -> Path:
    import warnings

    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        edges = sorted(get_example_model("sachs").edges())
    edge_text = ", ".join(f'["{a}", "{b}"]' for a, b in edges)
    return _write(folder, "sachs", _pgmpy_sample("sachs", 1000), f"""\
# pgmpy's sachs network (11 proteins, 3 levels each, 178 free CPT entries), 1000 cases
# forward-sampled by pgmpy (seed 0); the true structure, Laplace prior on every CPT row.
model = "bayesian_network"
[data]
path = "sachs.csv"
[structure]
edges = [{edge_text}]
[[query]]
name = "akt_given_pka_high"
target = "Akt"
evidence = {{ PKA = "HIGH" }}
[[query]]
name = "mek_given_raf_pkc"
target = "Mek"
evidence = {{ Raf = "HIGH", PKC = "LOW" }}
[[independence]]
name = "pip3_jnk"
x = ["PIP3"]
y = ["Jnk"]
[[independence]]
name = "erk_raf_given_mek_pka"
x = ["Erk"]
y = ["Raf"]
given = ["Mek", "PKA"]
""")


def snb_tan_anes96(folder: Path) -> Path:
    return _write(folder, "anes96", _anes96(), """\
# statsmodels' anes96: the vote from PID, education and self-placed left-right, TAN (the
# default kind: a tree on conditional mutual information rooted at the first feature).
model = "semi_naive_bayes"
[data]
path = "anes96.csv"
target = "vote"
features = ["PID", "educ", "selfLR"]
[[query]]
name = "independent_centre"
PID = "3"
educ = "4"
selfLR = "4"
""")


def snb_aode_survey(folder: Path) -> Path:
    return _write(folder, "survey", _pgmpy_sample("survey", 1000), """\
# pgmpy's survey network (Scutari & Denis 2014: age, sex, education, occupation, residence,
# travel), 1000 cases forward-sampled by pgmpy (seed 0): the means of travel T from the
# other five by AODE (super-parent values seen in at least 30 rows, the default).
model = "semi_naive_bayes"
[data]
path = "survey.csv"
target = "T"
features = ["A", "S", "E", "O", "R"]
[fit]
kind = "aode"
[[query]]
name = "young_man_high_school_employed_big_city"
A = "young"
S = "M"
E = "high"
O = "emp"
R = "big"
""")


CASES = {
    "lr_known_stackloss": ("statsmodels stackloss", "linear_regression (known noise)",
                           lr_known_stackloss),
    "lr_unknown_diabetes": ("sklearn diabetes", "linear_regression (unknown noise)",
                            lr_unknown_diabetes),
    "ard_diabetes": ("sklearn diabetes", "ard (conditional, defaults)", ard_diabetes),
    "ard_diabetes_noise_both": ("sklearn diabetes + 10 noise columns",
                                "ard (mode both, RIC)", ard_diabetes_noise_both),
    "mixture_iris_full": ("sklearn iris (4 features)", "gaussian_mixture K=3 full MAP",
                          mixture_iris_full),
    "mixture_wine_diag": ("sklearn wine (3 features)", "gaussian_mixture K=3 diag MAP",
                          mixture_wine_diag),
    "beta_bernoulli_breast_cancer": ("sklearn breast_cancer (diagnosis)", "beta_bernoulli",
                                     beta_bernoulli_breast_cancer),
    "dirichlet_digits": ("sklearn digits (labels)", "dirichlet_categorical", dirichlet_digits),
    "nb_gaussian_iris_decision": ("sklearn iris", "naive_bayes Gaussian + decision",
                                  nb_gaussian_iris_decision),
    "nb_categorical_anes96": ("statsmodels anes96", "naive_bayes categorical + decision",
                              nb_categorical_anes96),
    "bayes_rule_breast_cancer": ("sklearn breast_cancer (counts)", "bayes_rule",
                                 bayes_rule_breast_cancer),
    "bn_sachs": ("pgmpy sachs, 1000 sampled cases", "bayesian_network", bn_sachs),
    "snb_tan_anes96": ("statsmodels anes96", "semi_naive_bayes TAN", snb_tan_anes96),
    "snb_aode_survey": ("pgmpy survey, 1000 sampled cases", "semi_naive_bayes AODE",
                        snb_aode_survey),
}


# ----------------------------------------------------------------------------- running
def _diagnostics(summary: dict) -> dict:
    """The worst sampler health over every diagnostics block of a summary."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            d = node.get("diagnostics")
            if isinstance(d, dict) and "max_r_hat" in d:
                found.append(d)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(summary)

    def worst(key, pick):
        values = [d[key] for d in found if isinstance(d.get(key), (int, float))]
        return pick(values) if values else None

    return {"max_r_hat": worst("max_r_hat", max), "min_ess_bulk": worst("min_ess_bulk", min),
            "min_ess_tail": worst("min_ess_tail", min), "divergences": worst("divergences", max)}


def _failed(summary: dict) -> list[str]:
    names = []
    for block in (summary, summary.get("estimates") or {}):
        for row in block.get("parameters", []) or []:
            if row.get("verdict") == "fail":
                names.append(row["name"])
    return names


def read_summary(path: Path) -> dict:
    """What the table and the page need from one run's summary.json."""
    summary = json.loads(path.read_text())
    record = {"verdict": summary.get("verdict"), "diagnostics": _diagnostics(summary),
              "failed": _failed(summary), "not_judged": summary.get("not_judged") or []}
    attempts = summary.get("attempts") or []
    record["attempts"] = [{k: a[k] for k in ("check", "draws", "tune", "seed", "verdict",
                                             "problems")} for a in attempts]
    modes = (summary.get("estimates") or {}).get("modes") or {}
    if modes:
        record["modes"] = [g["chains"] for g in modes.get("groups", [])]
        record["modes_split"] = modes.get("split")
    return record


def run_case(name: str, seed: int, out: Path) -> dict:
    """Write the case's inputs, run ``check`` once, return the cached record."""
    data_set, family, writer = CASES[name]
    spec = writer(out / name)
    folder = out / name / f"seed-{seed}"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    started = time.perf_counter()
    # the installed command, as a user runs it
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "bayescheck"),
            "check",
            str(spec),
            "--out",
            str(folder),
            "--seed",
            str(seed),
            "--quiet",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    record = {"case": name, "seed": seed, "data": data_set, "model": family,
              "code": proc.returncode, "seconds": round(seconds, 1)}
    summary_path = folder / "summary.json"
    if summary_path.exists():
        record.update(read_summary(summary_path))
    else:
        record.update(verdict="error", stderr=proc.stderr[-2000:])
    return record


def load_cache() -> dict:
    return json.loads(CACHE.read_text()) if CACHE.exists() else {}


def table(cache: dict) -> str:
    """The markdown table: one row per case, the verdict of each seed."""
    seeds = sorted({r["seed"] for r in cache.values()})
    head = ("| case | data | model | " + " | ".join(f"seed {s}" for s in seeds)
            + " | worst r_hat / min bulk ESS / divergences | mean time (s) |\n"
            + "|---" * (5 + len(seeds)) + "|")
    lines = [head]
    for name, (data_set, family, _) in CASES.items():
        runs = {r["seed"]: r for r in cache.values() if r["case"] == name}
        if not runs:
            continue
        cells = []
        for s in seeds:
            r = runs.get(s)
            if r is None:
                cells.append("–")
                continue
            checks = [a["check"] for a in r.get("attempts", [])]
            again = " ↻" if len(checks) > len(set(checks)) else ""   # sampled a second time
            cells.append(f"{r['verdict']} ({r['code']}){again}")
        diags = [r.get("diagnostics") or {} for r in runs.values()]
        r_hats = [d["max_r_hat"] for d in diags if d.get("max_r_hat") is not None]
        esss = [d["min_ess_bulk"] for d in diags if d.get("min_ess_bulk") is not None]
        divs = [d["divergences"] for d in diags if d.get("divergences") is not None]
        health = (f"{max(r_hats):.3f} / {min(esss):.0f} / {max(divs)}" if r_hats else "–")
        mean_time = sum(r["seconds"] for r in runs.values()) / len(runs)
        lines.append(f"| `{name}` | {data_set} | {family} | " + " | ".join(cells)
                     + f" | {health} | {mean_time:.0f} |")
    return "\n".join(lines)


def write_page(cache: dict) -> None:
    """Rewrite the table between the markers of REAL_DATA.md (the words are kept)."""
    text = (PAGE.read_text() if PAGE.exists()
            else "# Real-data gallery\n\n<!-- table -->\n<!-- /table -->\n")
    start, end = text.index("<!-- table -->"), text.index("<!-- /table -->")
    PAGE.write_text(text[:start] + "<!-- table -->\n" + table(cache) + "\n" + text[end:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output" / "real_data")
    parser.add_argument("--rerun", action="store_true", help="repeat runs already cached")
    parser.add_argument("--list", action="store_true", help="print the cases and stop")
    parser.add_argument("--table-only", action="store_true",
                        help="rewrite REAL_DATA.md's table from the cache, run nothing")
    args = parser.parse_args(argv)
    if args.list:
        for name, (data_set, family, _) in CASES.items():
            print(f"{name:32s} {data_set:38s} {family}")
        return 0
    cache = load_cache()
    for key, record in cache.items():   # runs recorded by an older version of this script
        summary_path = args.out / key / "summary.json"
        if "attempts" not in record and summary_path.exists():
            record.update(read_summary(summary_path))
    if not args.table_only:
        for seed in args.seeds:
            for name in args.cases:
                key = f"{name}/seed-{seed}"
                if key in cache and not args.rerun:
                    continue
                record = run_case(name, seed, args.out)
                cache[key] = record
                CACHE.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
                print(f"{key}: {record['verdict']} (exit {record['code']}) in "
                      f"{record['seconds']:.0f} s", flush=True)
    write_page(cache)
    print(table(cache))
    return 0


if __name__ == "__main__":
    sys.exit(main())
