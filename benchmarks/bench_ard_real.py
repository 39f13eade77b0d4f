"""ARD on real designs with M < n: the evidence each method reaches, and the relevance threshold.

Designs (statsmodels ships them; no download), each as a user with a spec of only ``path`` and
``target`` fits it (every column a feature, no intercept), with columns of pure noise N(0, 1)
appended (numpy seed = the design's seed) so that the methods have something to prune:

- ``star98``: statsmodels ``star98``, the share of pupils above the national median
  (100 NABOVE / (NABOVE + NBELOW)) on the 20 school covariates, 220 of the 303 districts
  (drawn with the seed), + 50 noise columns: 220 x 70 (the design of issue 32);
- ``statecrime``: ``statecrime``, murder rate on the 6 other columns, + 30 noise: 51 x 36;
- ``macrodata``: ``macrodata``, inflation on the 11 other series (year and quarter left out),
  + 50 noise: 203 x 61;
- ``fair``: ``fair``, affairs on the 8 other columns, 300 of the 6366 rows, + 50 noise: 300 x 58;
- ``randhie``: ``randhie``, mdvis on the 9 other columns, 300 of the 20190 rows, + 50 noise:
  300 x 59.

Part 1 (evidence), per design and seed: the log evidence of the default fit (the fast method,
both starts), of the fast method from the empty model alone (the previous default), of EM and
MacKay at their defaults (1000 iterations), and of scikit-learn's ``ARDRegression(fit_intercept=
False)`` estimates under this model (its ``lambda_`` with its own pruning ``lambda_ >=
threshold_lambda`` as infinite, ``1 / alpha_`` as sigma2).

Part 2 (threshold), per design and seed: 10-fold cross-validated RMSE, weights kept and noise
columns kept, for ``relevance_threshold`` 1 (exact type-II ML) and "ric" (2 log M), both with
the default starts; the same without the noise columns (the real features alone, every row,
the folds drawn anew with each seed), and on four small designs without noise columns:
``scotland`` (YES on 7 columns, 32 x 7), ``ccard`` (AVGEXP on 4, 72 x 4), ``longley``
(TOTEMP on 6, 16 x 6), ``cpunish`` (EXECUTIONS on 6, 17 x 6).

Run: ``.venv/bin/python benchmarks/bench_ard_real.py [--seeds N] [--cv-seeds N]``. Writes
bench-output/ard_real.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bayescheck.inference.engines.sbl import ard_log_evidence, fit_sbl  # noqa: E402


def _frame(name):
    import statsmodels.api as sm

    return getattr(sm.datasets, name).load_pandas().data


def _star98():
    d = _frame("star98")
    y = (100 * d.NABOVE / (d.NABOVE + d.NBELOW)).to_numpy()
    return d.drop(columns=["NABOVE", "NBELOW"]).to_numpy(float), y


def _drop_target(name, target, also=()):
    d = _frame(name)
    return d.drop(columns=[target, *also]).to_numpy(float), d[target].to_numpy(float)


#: name -> (loader, rows used with noise (None: all), noise columns)
DESIGNS = {
    "star98": (_star98, 220, 50),
    "statecrime": (lambda: _drop_target("statecrime", "murder"), None, 30),
    "macrodata": (lambda: _drop_target("macrodata", "infl", ("year", "quarter")), None, 50),
    "fair": (lambda: _drop_target("fair", "affairs"), 300, 50),
    "randhie": (lambda: _drop_target("randhie", "mdvis"), 300, 50),
}


#: Small real designs used without noise columns only (part 2): name -> loader.
CLEAN_ONLY = {
    "scotland": lambda: _drop_target("scotland", "YES"),
    "ccard": lambda: _drop_target("ccard", "AVGEXP"),
    "longley": lambda: _drop_target("longley", "TOTEMP"),
    "cpunish": lambda: _drop_target("cpunish", "EXECUTIONS"),
}


def design(name, seed, *, noise=True):
    """``(X, y, n_real)``: the real columns first, then the noise columns."""
    if name in CLEAN_ONLY:
        X, y = CLEAN_ONLY[name]()
        return X, y, X.shape[1]
    load, rows, k = DESIGNS[name]
    X, y = load()
    if not noise:
        return X, y, X.shape[1]
    rng = np.random.default_rng(seed)
    if rows is not None:
        take = np.sort(rng.permutation(len(y))[:rows])
        X, y = X[take], y[take]
    return np.hstack([X, rng.normal(size=(len(y), k))]), y, X.shape[1]


def sklearn_evidence(X, y):
    """Log evidence of ARDRegression's estimates under this model, and its weights kept."""
    from sklearn.linear_model import ARDRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = ARDRegression(fit_intercept=False).fit(X, y)
    alpha = np.where(m.lambda_ < m.threshold_lambda, m.lambda_, np.inf)
    return ard_log_evidence(X, y, alpha, 1.0 / m.alpha_), int(np.isfinite(alpha).sum())


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def evidence_rows(seeds):
    rows = []
    for name in DESIGNS:
        for seed in range(seeds):
            X, y, n_real = design(name, seed)
            r = {"design": name, "seed": seed, "shape": X.shape}
            for key, kw in (("default", {}), ("empty", {"starts": "empty"}),
                            ("em", {"method": "em"}), ("mackay", {"method": "mackay"})):
                res, dt = timed(fit_sbl, X, y, **kw)
                r[key] = (float(res.log_evidence[-1]), res.relevant.size,
                          int(np.sum(res.relevant >= n_real)), dt)
                if key == "default":
                    r["chosen"] = max(res.starts, key=lambda s: s.objective).start
            (ev, k), dt = timed(sklearn_evidence, X, y)
            r["sklearn"] = (ev, k, -1, dt)
            rows.append(r)
            print(name, seed, {key: round(r[key][0], 4) for key in
                               ("default", "empty", "em", "mackay", "sklearn")}, flush=True)
    return rows


def cv_rmse(X, y, n_real, threshold, folds=10, seed=0):
    """10-fold CV RMSE, and the mean weights kept and noise columns kept over the folds."""
    rng = np.random.default_rng(1000 + seed)
    fold = rng.permutation(len(y)) % folds
    sq, kept, noise = 0.0, [], []
    for f in range(folds):
        tr, te = fold != f, fold == f
        res = fit_sbl(X[tr], y[tr], relevance_threshold=threshold)
        sq += float(np.sum((y[te] - X[te] @ res.mean) ** 2))
        kept.append(res.relevant.size)
        noise.append(int(np.sum(res.relevant >= n_real)))
    return np.sqrt(sq / len(y)), float(np.mean(kept)), float(np.mean(noise))


def cv_rows(seeds):
    rows = []
    cases = [(name, noise) for name in DESIGNS for noise in (True, False)]
    for name, noise in cases + [(name, False) for name in CLEAN_ONLY]:
        for seed in range(seeds):  # without noise columns: repeated CV (the folds move)
            X, y, n_real = design(name, seed, noise=noise)
            r = {"design": name + (" + noise" if noise else ""), "seed": seed,
                 "shape": X.shape}
            for t in (1.0, "ric"):
                r[t] = cv_rmse(X, y, n_real, t, seed=seed)
            rows.append(r)
            print(r, flush=True)
    return rows


def evidence_table(rows):
    out = ["| design | n x M | seeds | default - fast from empty (min / mean / max) | "
           "default - EM | default - MacKay | default - sklearn | chosen start (empty / "
           "full_em) | weights kept (noise) default / empty / EM / MacKay / sklearn | time (s) "
           "default / empty / EM / MacKay / sklearn |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for name in DESIGNS:
        rs = [r for r in rows if r["design"] == name]
        n, m = rs[0]["shape"]

        def gap(key, rs=rs):
            g = np.array([r["default"][0] - r[key][0] for r in rs])
            return f"{g.min():+.3f} / {g.mean():+.3f} / {g.max():+.3f}"

        def mean(key, i, rs=rs):
            return np.mean([r[key][i] for r in rs])

        kept = " / ".join(f"{mean(k, 1):.1f} ({mean(k, 2):.1f})" if k != "sklearn"
                          else f"{mean(k, 1):.1f}"
                          for k in ("default", "empty", "em", "mackay", "sklearn"))
        times = " / ".join(f"{mean(k, 3):.2f}"
                           for k in ("default", "empty", "em", "mackay", "sklearn"))
        chosen = sum(r["chosen"] == "empty" for r in rs)
        out.append(f"| {name} | {n} x {m} | {len(rs)} | {gap('empty')} | {gap('em')} | "
                   f"{gap('mackay')} | {gap('sklearn')} | {chosen} / {len(rs) - chosen} | "
                   f"{kept} | {times} |")
    return out


def cv_table(rows):
    out = ["| design | n x M | seeds | CV RMSE, threshold 1 | CV RMSE, ric | ric / 1 | "
           "ric better in | "
           "weights kept (noise columns), 1 | weights kept (noise columns), ric |",
           "|---|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["design"] for r in rows):
        rs = [r for r in rows if r["design"] == name]
        n, m = rs[0]["shape"]

        def mean(t, i, rs=rs):
            return np.mean([r[t][i] for r in rs])

        better = sum(r["ric"][0] < r[1.0][0] for r in rs)
        out.append(f"| {name} | {n} x {m} | {len(rs)} | {mean(1.0, 0):.4g} | "
                   f"{mean('ric', 0):.4g} | {mean('ric', 0) / mean(1.0, 0):.3f} | "
                   f"{better} of {len(rs)} | {mean(1.0, 1):.1f} "
                   f"({mean(1.0, 2):.1f}) | {mean('ric', 1):.1f} ({mean('ric', 2):.1f}) |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=12, help="noise draws per design (evidence)")
    ap.add_argument("--cv-seeds", type=int, default=8,
                    help="noise draws (or fold draws, without noise) per design (CV)")
    args = ap.parse_args()
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    ev = evidence_rows(args.seeds)
    cv = cv_rows(args.cv_seeds)
    load_after = (open("/proc/loadavg").read().split()[:3]
                  if os.path.exists("/proc/loadavg") else [])
    text = ["# ARD on real designs (benchmarks/bench_ard_real.py)", "",
            f"load average before {' '.join(load)}, after {' '.join(load_after)}", "",
            "## Log evidence reached (differences in nats; >= 0: the default is at least as "
            "high)", "", *evidence_table(ev), "",
            "## relevance_threshold: 10-fold cross-validated RMSE", "", *cv_table(cv), ""]
    os.makedirs(os.path.join(ROOT, "bench-output"), exist_ok=True)
    path = os.path.join(ROOT, "bench-output", "ard_real.md")
    with open(path, "w") as fh:
        fh.write("\n".join(text))
    print("\n".join(text))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
