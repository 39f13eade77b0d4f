"""Random Gaussian linear DAGs and random conjugate pairs: exact() against a dense computation.

Hypothesis builds PyMC models of random structure (which latents feed which, through which
kind of expression, with which shapes and scales); the reference posterior is computed here
from the structural equations ``v = B v + c + S e`` of all the nodes at once (the joint
Gaussian, conditioned on the observed nodes with ``numpy.linalg.solve``), or for the pairs
from per-observation sums in plain Python loops.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special, stats

import bayescheck

SETTINGS = settings(max_examples=25, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def gaussian_dags(draw):
    """A random DAG: its latents and observations, each ``sum_j A_j parent_j + c`` plus noise."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n_latent = draw(st.integers(1, 4))
    nodes = []
    for i in range(n_latent + draw(st.integers(1, 3))):
        observed = i >= n_latent
        size = draw(st.integers(1, 4))
        pool = list(range(n_latent if observed else i))
        parents = draw(st.lists(st.sampled_from(pool), unique=True, max_size=3,
                                min_size=1 if observed else 0)) if pool else []
        terms = [(j, draw(st.sampled_from(["matrix", "index", "sum"])),
                  rng.uniform(-2, 2, size=(size, nodes[j]["size"])),
                  rng.integers(0, nodes[j]["size"], size=size)) for j in parents]
        nodes.append({"observed": observed, "size": size, "terms": terms,
                      "c": rng.uniform(-1, 1, size), "sigma": rng.uniform(0.3, 3.0, size)})
    for node in nodes:
        if node["observed"]:
            node["data"] = rng.normal(0, 3, node["size"])
    return nodes


def _term(kind, a, idx, z):
    if kind == "matrix":
        return pt.dot(a, z)
    if kind == "index":
        return z[idx] * a[:, 0]
    return a[:, 0] * pt.sum(z)


def _dense_term(kind, a, idx, size_j):
    if kind == "matrix":
        return a
    if kind == "index":
        m = np.zeros((len(idx), size_j))
        m[np.arange(len(idx)), idx] = a[:, 0]
        return m
    return np.outer(a[:, 0], np.ones(size_j))


def build_model(nodes):
    with pm.Model() as model:
        made = []
        for i, node in enumerate(nodes):
            mean = pt.as_tensor(node["c"])
            for j, kind, a, idx in node["terms"]:
                mean = mean + _term(kind, a, idx, made[j])
            name = f"v{i}"
            kwargs = {"observed": node["data"]} if node["observed"] else {}
            made.append(pm.Normal(name, mean, node["sigma"], shape=node["size"], **kwargs))
    return model


def dense_reference(nodes):
    """Posterior mean, sd of the latents and log p(observed), from the joint Gaussian."""
    offsets = np.cumsum([0] + [n["size"] for n in nodes])
    total = offsets[-1]
    b = np.zeros((total, total))
    c = np.concatenate([n["c"] for n in nodes])
    s = np.concatenate([n["sigma"] for n in nodes])
    for i, node in enumerate(nodes):
        for j, kind, a, idx in node["terms"]:
            b[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]] += _dense_term(
                kind, a, idx, nodes[j]["size"])
    lower = np.linalg.solve(np.eye(total) - b, np.diag(s))
    mean = np.linalg.solve(np.eye(total) - b, c)
    cov = lower @ lower.T
    lat = np.concatenate([np.arange(offsets[i], offsets[i + 1])
                          for i, n in enumerate(nodes) if not n["observed"]])
    obs = np.concatenate([np.arange(offsets[i], offsets[i + 1])
                          for i, n in enumerate(nodes) if n["observed"]])
    y = np.concatenate([n["data"] for n in nodes if n["observed"]])
    s_oo = cov[np.ix_(obs, obs)]
    gain = np.linalg.solve(s_oo, cov[np.ix_(obs, lat)]).T
    post_mean = mean[lat] + gain @ (y - mean[obs])
    post_cov = cov[np.ix_(lat, lat)] - gain @ cov[np.ix_(obs, lat)]
    evidence = stats.multivariate_normal(mean[obs], s_oo).logpdf(y)
    return post_mean, np.sqrt(np.diag(post_cov)), evidence


@SETTINGS
@given(gaussian_dags())
def test_random_gaussian_dags_match_the_joint_gaussian(nodes):
    ex = bayescheck.exact(build_model(nodes))
    mean, sd, evidence = dense_reference(nodes)
    table = ex.summary(deterministics=False)
    np.testing.assert_allclose(table["mean"].to_numpy(), mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(table["sd"].to_numpy(), sd, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(ex.log_evidence, evidence, rtol=1e-8, atol=1e-8)


@st.composite
def conjugate_pairs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    kind = draw(st.sampled_from(["beta", "gamma", "dirichlet", "variance"]))
    groups = draw(st.integers(1, 3))
    n = draw(st.integers(1, 12))
    group = rng.integers(0, groups, n)
    return {"kind": kind, "groups": groups, "group": group,
            "a": rng.uniform(0.5, 4, groups), "b": rng.uniform(0.5, 4, groups),
            "trials": rng.integers(1, 6, n), "exposure": rng.uniform(0.1, 3, n),
            "k": draw(st.integers(2, 4)), "rng": rng, "n": n}


def pair_model(case):
    g, kind, rng = case["group"], case["kind"], case["rng"]
    with pm.Model() as model:
        if kind == "beta":
            p = pm.Beta("v", case["a"], case["b"], shape=case["groups"])
            case["y"] = rng.binomial(case["trials"], 0.4)
            pm.Binomial("y", n=case["trials"], p=p[g], observed=case["y"])
        elif kind == "gamma":
            lam = pm.Gamma("v", case["a"], case["b"], shape=case["groups"])
            case["y"] = rng.poisson(2.0 * case["exposure"])
            pm.Poisson("y", mu=case["exposure"] * lam[g], observed=case["y"])
        elif kind == "dirichlet":
            alpha = rng.uniform(0.5, 3, (case["groups"], case["k"]))
            case["alpha"] = alpha
            pi = pm.Dirichlet("v", alpha)
            case["y"] = rng.integers(0, case["k"], case["n"])
            pm.Categorical("y", p=pi[g], observed=case["y"])
        else:
            s2 = pm.InverseGamma("v", case["a"], case["b"], shape=case["groups"])
            case["y"] = rng.normal(0.5, 2.0, case["n"])
            pm.Normal("y", 0.5, case["exposure"] * pm.math.sqrt(s2)[g], observed=case["y"])
    return model


def pair_reference(case):
    """The posterior's parameters and log evidence, observation by observation."""
    kind, y, g = case["kind"], case["y"], case["group"]
    evidence = 0.0
    if kind == "dirichlet":
        alpha = case["alpha"].copy()
        for yi, gi in zip(y, g, strict=True):  # sequential predictive probabilities
            evidence += np.log(alpha[gi, yi] / alpha[gi].sum())
            alpha[gi, yi] += 1
        return [alpha], evidence
    a, b = case["a"].copy(), case["b"].copy()
    for i, (yi, gi) in enumerate(zip(y, g, strict=True)):
        if kind == "beta":
            ni = case["trials"][i]
            evidence += (np.log(special.comb(ni, yi)) + special.betaln(a[gi] + yi,
                                                                        b[gi] + ni - yi)
                         - special.betaln(a[gi], b[gi]))
            a[gi], b[gi] = a[gi] + yi, b[gi] + ni - yi
        elif kind == "gamma":  # the negative binomial predictive of each count
            t = case["exposure"][i]
            evidence += stats.nbinom(a[gi], b[gi] / (b[gi] + t)).logpmf(yi)
            a[gi], b[gi] = a[gi] + yi, b[gi] + t
        else:  # the Student-t predictive of each residual
            c = case["exposure"][i]
            evidence += stats.t(2 * a[gi], 0.5, c * np.sqrt(b[gi] / a[gi])).logpdf(yi)
            a[gi], b[gi] = a[gi] + 0.5, b[gi] + 0.5 * ((yi - 0.5) / c) ** 2
    return [a, b], evidence


@SETTINGS
@given(conjugate_pairs())
def test_random_conjugate_pairs_match_sequential_updates(case):
    ex = bayescheck.exact(pair_model(case))
    params, evidence = pair_reference(case)
    v = ex.variables["v"]
    if case["kind"] == "dirichlet":
        np.testing.assert_allclose(v.args[0], params[0][..., :], rtol=1e-12)
    elif case["kind"] == "beta":
        np.testing.assert_allclose(v.args, params, rtol=1e-12)
    elif case["kind"] == "gamma":
        np.testing.assert_allclose(v.args[0], params[0], rtol=1e-12)
        np.testing.assert_allclose(1.0 / v.kwds["scale"], params[1], rtol=1e-12)
    else:
        np.testing.assert_allclose(v.args[0], params[0], rtol=1e-12)
        np.testing.assert_allclose(v.kwds["scale"], params[1], rtol=1e-12)
    np.testing.assert_allclose(ex.log_evidence, evidence, rtol=1e-9, atol=1e-9)
