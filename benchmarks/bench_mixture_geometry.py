"""Which declaration lets NUTS explore a full-covariance Gaussian mixture on real data.

Each run fits MAP-EM on one real data set, declares the same posterior in PyMC in one of
several geometries, samples it (4 chains x 1000 draws after 1000 tuning steps unless told)
and judges the EM estimate with the product's own criteria
(:func:`bayescheck.inference.checking.compare.compare_estimates_idata` and the mixture's
``posterior_checks``). One line of JSON per run is appended to ``--results``: case, variant,
seed, verdict, max r_hat, min bulk ESS, divergences, seconds, and the chains furthest from
the others.

    .venv/bin/python benchmarks/bench_mixture_geometry.py CASE VARIANT [VARIANT ...]
        [--seeds 0 1] [--results FILE] [--out DIR] [--draws N] [--tune N] [--n-init N]

Cases (data shipped by scikit-learn and statsmodels, K = 3, full covariances): ``wine3``,
``iris3`` (three standardised measurements each), ``macro`` (statsmodels' macrodata: infl,
realint, unemp, as shipped). Variants:

``product``
    the declaration and chain starts of ``bayescheck.models.GaussianMixture`` as they are
    (since this measurement: ``whiten+noncentred``).
``prec_chol``
    the declaration the product had before: each precision's Cholesky factor
    (log-diagonal and free lower triangle) in the data's coordinates, centred means.
``whiten``
    the same in the coordinates ``y = L^-1 (x - s)``, ``s`` and ``L L'`` the mean and
    covariance of the EM mixture (the data have mean 0 and covariance I there).
``lkj``
    each precision as ``diag(t) R diag(t)``: log scales ``t`` and the Cholesky factor of the
    correlation ``R`` through PyMC's ``LKJCorr(eta=1)`` transform (the inverse-Wishart prior
    then held by a potential with the Jacobian of ``(log t, R) -> precision``).
``noncentred``
    means ``mu_k = a_k + U_k^-T z_k / sqrt(n_k + kappa)`` (``a_k``, ``n_k`` from EM): the
    conditional posterior scale of each mean given its precision taken out.
``ordered``
    the components ordered along the direction in which the EM means spread most (an ordered
    transform on that coordinate, the others free): no label switching inside a chain.
``emscaled``
    each precision factor relative to the estimate's, ``U_k = U0_k V_k`` (V_k sampled).
``lowrank``
    nutpie's low-rank mass-matrix adaptation instead of the diagonal one.
``kmeans_start``
    the product's declaration started at PyMC's initial point (the k-means clusters) with
    PyMC's own jitter, not at the EM estimate.
Variants combine with ``+`` (``lkj+noncentred``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------- data sets
def _standardised(frame: pd.DataFrame) -> pd.DataFrame:
    return ((frame - frame.mean()) / frame.std(ddof=0)).round(6)


def _wine3() -> pd.DataFrame:
    from sklearn.datasets import load_wine

    cols = ["alcohol", "flavanoids", "color_intensity"]
    return _standardised(load_wine(as_frame=True).frame[cols])


def _iris3() -> pd.DataFrame:
    from sklearn.datasets import load_iris

    frame = load_iris(as_frame=True).frame
    frame = frame[["sepal length (cm)", "petal length (cm)", "petal width (cm)"]]
    frame.columns = ["sepal_length", "petal_length", "petal_width"]
    return _standardised(frame)


def _macro() -> pd.DataFrame:
    import statsmodels.api as sm

    return sm.datasets.macrodata.load_pandas().data[["infl", "realint", "unemp"]]


#: case -> (data, prior mean, iw_scale); every case: K = 3, full, Dirichlet(2), kappa 0.01,
#: iw_dof = D + 2 = 5.
CASES = {"wine3": (_wine3, None, 1.0), "iris3": (_iris3, None, 1.0),
         "macro": (_macro, "data", 1.0)}


def write_case(name: str, folder: Path, *, n_init: int = 5, iw_scale: float | None = None
               ) -> Path:
    """Write CASE.csv and CASE.toml into ``folder``; return the spec's path."""
    make, mean, scale = CASES[name]
    frame = make()
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / f"{name}.csv", index=False)
    m0 = [0.0] * frame.shape[1] if mean is None else [round(float(v), 2) for v in frame.mean()]
    spec = folder / f"{name}.toml"
    spec.write_text(f"""\
model = "gaussian_mixture"
n_components = 3
covariance = "full"
[data]
path = "{name}.csv"
features = {json.dumps(list(frame.columns))}
[prior]
concentration = 2.0
mean = {json.dumps(m0)}
kappa = 0.01
iw_dof = 5.0
iw_scale = {scale if iw_scale is None else iw_scale}
[fit]
n_init = {n_init}
""")
    return spec


# ----------------------------------------------------------------------------- declarations
def _jitter(value, scale, jitter_sd):
    import pytensor.tensor as pt

    value = np.asarray(value, dtype=np.float64)
    if jitter_sd <= 0:
        return value
    rng = pt.random.shared_rng(seed=None)
    _, eps = pt.random.normal(0.0, 1.0, size=value.shape, rng=rng, return_next_rng=True)
    return value + jitter_sd * np.broadcast_to(scale, value.shape) * eps


def _precision_factors(covs: np.ndarray) -> np.ndarray:
    from scipy.linalg import solve_triangular

    eye = np.eye(covs.shape[-1])
    out = []
    for S in covs:
        L_inv = solve_triangular(np.linalg.cholesky(S), eye, lower=True)
        out.append(np.linalg.cholesky(L_inv.T @ L_inv))
    return np.array(out)


def declare(gm, X: np.ndarray, fit, flags: set[str], jitter_sd: float = 0.5):
    """The posterior of ``gm`` on ``X`` in the geometry ``flags``; (pymc.Model, initvals)."""
    import itertools

    import pymc as pm
    import pytensor.tensor as pt
    from pymc.distributions.transforms import ordered
    from pytensor.tensor.linalg import solve_triangular

    state = fit.posterior.state
    n, D = X.shape
    K = gm.n_components
    w0 = np.asarray(state.weights)
    mu0 = np.asarray(state.means)
    covs0 = np.asarray(state.covariances)
    psi = np.asarray(gm.iw_scale, dtype=np.float64)
    m0 = np.asarray(gm.prior_mean, dtype=np.float64)
    shift, L_data = np.zeros(D), np.eye(D)
    if "whiten" in flags:  # sample the image under y = A (x - xbar), A = chol(cov X)^-1
        from scipy.linalg import solve_triangular as solve_tri

        shift = X.mean(axis=0)
        L_data = np.linalg.cholesky(np.cov(X.T, ddof=0))
        A = solve_tri(L_data, np.eye(D), lower=True)
        X = (X - shift) @ A.T
        mu0 = (mu0 - shift) @ A.T
        covs0 = A @ covs0 @ A.T
        psi = A @ psi @ A.T
        m0 = A @ (m0 - shift)
    n_k = np.maximum(w0 * n, 1.0)
    U0 = _precision_factors(covs0)
    tri = np.tril_indices(D, -1)
    psi_chol = np.linalg.cholesky(psi)
    nu = gm.iw_dof
    order = np.arange(K)
    if "ordered" in flags:  # components in the order of their EM means along `direction`
        centred = mu0 - mu0.mean(axis=0)
        _, _, vt = np.linalg.svd(centred)
        basis = vt.T  # (D, D) orthonormal; column 0 the direction of largest spread
        order = np.argsort(mu0 @ basis[:, 0])
    w0, mu0, n_k, U0 = w0[order], mu0[order], n_k[order], U0[order]
    init = {}
    coords = {"component": [str(k) for k in range(K)], "feature": list(gm.features),
              "feature_": list(gm.features)}
    with pm.Model(coords=coords) as model:
        logp_cov = 0.0
        if "lkj" in flags:
            t0 = np.sqrt(np.sum(U0 ** 2, axis=2))  # row norms: U = diag(t) Lc
            log_t = pm.Flat("prec_log_scale_raw", shape=(K, D), initval=np.log(t0))
            init["prec_log_scale_raw"] = _jitter(np.log(t0), 1.0 / np.sqrt(2 * n_k)[:, None],
                                                 jitter_sd)
            corr = pm.LKJCorr("prec_corr_chol_raw", n=D, eta=1.0, size=K,
                              initval=U0 / t0[:, :, None])
            U = [pt.exp(log_t[k])[:, None] * corr[k] for k in range(K)]
            log_diag = [pt.log(pt.diag(Uk)) for Uk in U]
            # d(precision) / d(log t, R): 2^D prod t^(D+1); LKJCorr(eta=1) adds d R / d its
            # unconstrained coordinates and a constant density.
            for k in range(K):
                logp_cov += (D + 1.0) * pt.sum(log_t[k])
        elif "emscaled" in flags:  # U_k = U0_k V_k: V_k's coordinates are 0 at the estimate
            log_v = pm.Flat("prec_rel_log_diag_raw", shape=(K, D), initval=np.zeros((K, D)))
            off_v = pm.Flat("prec_rel_offdiag_raw", shape=(K, len(tri[0])),
                            initval=np.zeros((K, len(tri[0]))))
            init["prec_rel_log_diag_raw"] = _jitter(np.zeros((K, D)),
                                                    1.0 / np.sqrt(2 * n_k)[:, None], jitter_sd)
            init["prec_rel_offdiag_raw"] = _jitter(np.zeros((K, len(tri[0]))),
                                                   1.0 / np.sqrt(n_k)[:, None], jitter_sd)
            U, log_diag = [], []
            jac = D - np.arange(D) + 1.0
            for k in range(K):
                Vk = pt.set_subtensor(pt.diag(pt.exp(log_v[k]))[tri], off_v[k])
                U.append(U0[k] @ Vk)
                ld = np.log(np.diagonal(U0[k])) + log_v[k]
                log_diag.append(ld)
                # (log diag V, offdiag V) -> U: a constant Jacobian besides prod V_ii, so the
                # same potential as for (log diag U, offdiag U), up to a constant
                logp_cov += pt.sum(jac * ld)
        else:
            log_d = pm.Flat("prec_chol_log_diag_raw", shape=(K, D),
                            initval=np.log(np.diagonal(U0, axis1=1, axis2=2)))
            off = pm.Flat("prec_chol_offdiag_raw", shape=(K, len(tri[0])),
                          initval=U0[:, tri[0], tri[1]])
            diag0 = np.diagonal(U0, axis1=1, axis2=2)
            init["prec_chol_log_diag_raw"] = _jitter(np.log(diag0),
                                                     1.0 / np.sqrt(2 * n_k)[:, None], jitter_sd)
            init["prec_chol_offdiag_raw"] = _jitter(U0[:, tri[0], tri[1]],
                                                    diag0[:, tri[0]] / np.sqrt(n_k)[:, None],
                                                    jitter_sd)
            U, log_diag = [], []
            jac = D - np.arange(D) + 1.0
            for k in range(K):
                Uk = pt.set_subtensor(pt.diag(pt.exp(log_d[k]))[tri], off[k])
                U.append(Uk)
                log_diag.append(log_d[k])
                logp_cov += pt.sum(jac * log_d[k])
        for k in range(K):  # Wishart(nu, Psi^-1) on the precision U U'
            logp_cov += (nu - D - 1.0) * pt.sum(log_diag[k]) - 0.5 * pt.sum(
                (psi_chol.T @ U[k]) ** 2
            )
        pm.Potential("covariance_prior", logp_cov)
        eye = np.eye(D)
        covs = pt.stack([(lambda W: W @ W.T)(solve_triangular(Uk.T, eye, lower=False))
                         for Uk in U])
        # means
        sd = np.sqrt(np.diagonal(covs0[order], axis1=1, axis2=2))
        mscale = sd / np.sqrt(n_k + gm.kappa)[:, None]
        if "noncentred" in flags:
            z = pm.Flat("means_z_raw", shape=(K, D), initval=np.zeros((K, D)))
            init["means_z_raw"] = _jitter(np.zeros((K, D)), 1.0, jitter_sd)
            c = np.sqrt(n_k + gm.kappa)
            means = pt.stack([mu0[k] + solve_triangular(U[k].T, z[k], lower=False) / c[k]
                              for k in range(K)])
            jac_means = -sum(pt.sum(ld) for ld in log_diag)
        elif "ordered" in flags:
            proj0 = mu0 @ basis
            t = pm.Flat("means_along_raw", shape=K, transform=ordered, initval=proj0[:, 0])
            rest = pm.Flat("means_across_raw", shape=(K, D - 1), initval=proj0[:, 1:])
            s_along = np.array([mscale[k] @ np.abs(basis[:, 0]) for k in range(K)])
            init["means_along_raw"] = pt.sort(_jitter(proj0[:, 0], s_along, jitter_sd))
            init["means_across_raw"] = _jitter(proj0[:, 1:], mscale.mean(axis=1)[:, None],
                                               jitter_sd)
            means = pt.concatenate([t[:, None], rest], axis=1) @ basis.T
            jac_means = 0.0
        else:
            means = pm.Flat("means_raw", shape=(K, D), initval=mu0)
            init["means_raw"] = _jitter(mu0, mscale, jitter_sd)
            jac_means = 0.0
        pm.Potential("means_prior", jac_means + sum(
            -0.5 * gm.kappa * pt.sum(pt.dot(U[k].T, means[k] - m0) ** 2) + pt.sum(log_diag[k])
            for k in range(K)))
        weights = pm.Dirichlet("weights_raw", a=np.full(K, gm.concentration), initval=w0)
        init["weights_raw"] = pt.special.softmax(_jitter(np.log(w0), 1.0 / np.sqrt(n_k),
                                                         jitter_sd)) if jitter_sd > 0 else w0
        Xc = pt.as_tensor_variable(X)
        terms = []
        for k in range(K):
            quad = pt.sum(pt.dot(Xc - means[k], U[k]) ** 2, axis=1)
            terms.append(pt.log(weights[k]) - 0.5 * quad + pt.sum(log_diag[k])
                         - 0.5 * D * math.log(2 * math.pi))
        pm.Potential("log_likelihood",
                     pt.sum(pm.math.logsumexp(pt.stack(terms, axis=1), axis=1)))
        reference = np.asarray(state.means)
        means = means @ L_data.T + shift
        covs = L_data @ covs @ L_data.T
        perms = np.array(list(itertools.permutations(range(K))), dtype=np.int64)
        cost = pt.sum((means[perms] - reference[None]) ** 2, axis=(1, 2))
        perm = pt.as_tensor_variable(perms)[pt.argmin(cost)]
        pm.Deterministic("means", means[perm], dims=("component", "feature"))
        pm.Deterministic("weights", weights[perm], dims="component")
        pm.Deterministic("covariances", covs[perm], dims=("component", "feature", "feature_"))
    return model, init


# ----------------------------------------------------------------------------- one run
def _stuck_chains(draws: dict[str, np.ndarray], top: int = 3) -> list[dict]:
    """The parameters whose chains disagree most, with the chain furthest from the others."""
    rows = []
    for name, x in draws.items():
        means, sds = x.mean(axis=1), x.std(axis=1, ddof=1)
        pooled = float(np.sqrt(np.mean(sds ** 2)))
        if pooled == 0:
            continue
        others = np.array([np.delete(means, c).mean() for c in range(len(means))])
        far = np.abs(means - others) / pooled
        c = int(np.argmax(far))
        rows.append({"parameter": name, "chain": c, "distance_sd": float(far[c])})
    return sorted(rows, key=lambda r: -r["distance_sd"])[:top]


def run(case: str, variant: str, seed: int, folder: Path, *, draws: int, tune: int,
        n_init: int, keep: Path | None = None) -> dict:
    from bayescheck.inference.checking.compare import compare_estimates_idata, draws_from_idata
    from bayescheck.inference.checking.sampling import sample_nuts
    from bayescheck.inference.families import fit
    from bayescheck.inference.families.gaussian_mixture import posterior_checks
    from bayescheck.models import load_spec

    spec = load_spec(write_case(case, folder, n_init=n_init))
    result = fit(spec)
    flags = set(variant.split("+"))
    X = spec.model.data_matrix(spec.data)
    started = time.perf_counter()
    if flags - {"lowrank"} <= {"product", "kmeans_start"}:
        model = spec.model.declare(spec.data, fit=result)
        starts = None if "kmeans_start" in flags else spec.model.initial_values(result)
    else:
        model, starts = declare(spec.model, X, result, flags - {"prec_chol", "lowrank"})
    declared = time.perf_counter() - started
    if "lowrank" in flags:  # nutpie's low-rank mass-matrix adaptation
        import nutpie
        from bayescheck.inference.checking.sampling import compiled_for_nutpie
        from pymc.backends.arviz import patch_nutpie_idata

        began = time.perf_counter()
        compiled = compiled_for_nutpie(model, starts)
        idata = nutpie.sample(compiled, draws=draws, tune=tune, chains=4, cores=2, seed=seed,
                              save_warmup=False, store_unconstrained=False,
                              progress_bar=False, adaptation="low_rank")
        patch_nutpie_idata(idata, model, sampling_time=0.0)
        seconds = time.perf_counter() - began
    else:
        sampled = sample_nuts(model, draws=draws, tune=tune, chains=4, seed=seed,
                              initvals=starts)
        idata, seconds = sampled.idata, sampled.seconds
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        idata.to_netcdf(keep / f"{case}_{variant}_{seed}.nc", engine="h5netcdf")
    estimates = result.posterior.estimates
    judged = posterior_checks(result, compare_estimates_idata(estimates, idata), idata, spec)
    d = judged.diagnostics
    modes = judged.modes or {}
    return {"case": case, "variant": variant, "seed": seed, "draws": draws, "tune": tune,
            "n_init": n_init, "em_objective": float(result.posterior.state.objective),
            "verdict": judged.verdict, "max_r_hat": d.max_r_hat, "min_ess_bulk": d.min_ess_bulk,
            "min_ess_tail": d.min_ess_tail, "divergences": d.divergences,
            "seconds": declared + seconds,
            "groups": [g["chains"] for g in modes.get("groups", [])],
            "log_density_median": [c["log_density_median"] for c in modes.get("chains", [])],
            "stuck": _stuck_chains(draws_from_idata(idata, result.posterior.estimates)),
            "problems": list(d.problems), "load": open("/proc/loadavg").read().split()[:3]}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("variants", nargs="+")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--results", type=Path, default=HERE / "mixture_geometry_results.jsonl")
    p.add_argument("--out", type=Path, default=Path("/tmp/bench_mixture_geometry"))
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--n-init", type=int, default=5)
    p.add_argument("--keep", type=Path, default=None, help="write each run's draws here")
    args = p.parse_args(argv)
    for variant in args.variants:
        for seed in args.seeds:
            row = run(args.case, variant, seed, args.out / args.case, draws=args.draws,
                      tune=args.tune, n_init=args.n_init, keep=args.keep)
            with open(args.results, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(
                f"{row['case']:6s} {row['variant']:22s} seed {seed} n_init {row['n_init']:3d} "
                f"{row['verdict']:12s} r_hat {row['max_r_hat']:.3f} ess {row['min_ess_bulk']:7.1f} "
                f"div {row['divergences']:3d} {row['seconds']:6.1f} s  groups {row['groups']}  "
                f"stuck {row['stuck'][:1]}",
                flush=True,
            )


if __name__ == "__main__":
    main()
