"""Connecting a :class:`bayescheck.models.BayesianNetwork` to the network engine.

The batches stream through :func:`bayescheck.inference.scale.streaming.run_stream` in one pass; the
checkpointed state is :class:`NetworkTally`: every node's states in the order first seen,
its count table of the complete rows indexed by them, and the distinct incomplete rows with
their multiplicities. Each batch's columns are factorised once, straight into codes of the
states (:meth:`bayescheck.models.BayesianNetwork.state_columns`), and counted with one ``bincount``
per node on a mixed-radix index; at the end the states are sorted and the tables renumbered. With
complete data the fit holds every CPT's Dirichlet posterior, each query's posterior
predictive (variable elimination on the posterior-mean CPTs), each independence question's
d-separation answer with a connecting path, and the BD / BDeu log marginal likelihood as
``log_evidence``.

With missing cells the CPTs are EM point estimates (:mod:`bayescheck.inference.engines.network_em`),
the queries are answered at those CPTs (plug-in, not the posterior predictive), there is no
``log_evidence`` and no exact marginal. ``check`` then judges the estimate against NUTS on
the declaration with the missing cells summed out
(:func:`bayescheck.models.bayesian_network.summed_rows`),
as the mixture's EM estimate is judged: sampler health first, every CPT entry inside the
posterior's central interval (:func:`bayescheck.inference.checking.compare.compare_estimates`), and
no draw of higher posterior density than the estimate (:func:`network_posterior_checks`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.inference.engines.network_em import (
    EMResult,
    MissingPatterns,
    log_objective,
    network_em,
)
from bayescheck.inference.engines.networks import (
    CPTPosterior,
    NetworkCounts,
    NetworkSchema,
    count_columns,
    count_tables,
    cpt_posterior,
    d_separation,
    grow_tables,
    log_marginal_likelihood,
    predict_target,
    query,
    reorder_tables,
)
from bayescheck.inference.families.predictive import posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import (
    AnalyticFit,
    ExactMarginal,
    FitRecord,
    PointEstimate,
    Posterior,
)
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME, model_key, run_stream
from bayescheck.models.bayesian_network import (
    COMPLETE_DECLARATION,
    SUMMED_DECLARATION,
    BayesianNetwork,
)
from bayescheck.models.errors import BayescheckError, DataError, SpecError
from bayescheck.models.pymc_names import dim, variable
from bayescheck.models.resources import require_cpts
from bayescheck.models.spec import Spec

__all__ = [
    "FAMILIES",
    "NetworkTally",
    "absorb_batch",
    "em_estimates",
    "exact_draws_bayesian_network",
    "fit_bayesian_network",
    "network_oracles",
    "network_posterior_checks",
    "network_queries",
    "network_prior",
    "network_schema",
    "predict_bayesian_network",
    "predictive_proba",
    "tally_counts",
]


@dataclass(frozen=True)
class NetworkTally:
    """Every node's states as first seen and counts indexed by them (a checkpointable state).

    One pass over the data: each batch's columns are factorised once, new states are
    appended to their node's list (so the codes already counted keep their meaning and the
    tables only grow), and at the end the states are sorted and the tables renumbered
    (:func:`tally_counts`).

    Attributes
    ----------
    labels : str
        JSON list, per node, of its states in the order first seen.
    counts : numpy.ndarray, shape (sum of q_v r_v,)
        Counts of the complete rows, every node's table flattened, in node order.
    patterns, pattern_counts : numpy.ndarray, shapes (m, nodes) and (m,)
        The distinct incomplete rows (first-seen codes, -1 for a missing cell) and their
        multiplicities.
    """

    labels: str
    counts: np.ndarray
    patterns: np.ndarray
    pattern_counts: np.ndarray

    @classmethod
    def start(cls, model: BayesianNetwork) -> NetworkTally:
        """No rows yet; the model's held states, if any, already in place."""
        held = model.held_states or {}
        labels = [list(held.get(n, ())) for n in model.nodes]
        require_cpts(model.nodes, [len(x) for x in labels], model.parents)
        tables = count_tables(np.zeros((0, len(model.nodes)), np.int64),
                              [len(x) for x in labels], model.parents)
        return cls.of(labels, tables, MissingPatterns.empty(len(model.nodes)))

    @classmethod
    def of(cls, labels: list[list[str]], tables, missing: MissingPatterns) -> NetworkTally:
        """A tally of these states, tables and incomplete rows."""
        return cls(json.dumps(labels), np.concatenate([t.ravel() for t in tables]),
                   missing.rows, missing.counts)

    def states(self) -> list[list[str]]:
        """Every node's states, in the order first seen."""
        return json.loads(self.labels)

    def tables(self, parents) -> tuple[np.ndarray, ...]:
        """The count tables, ``(q_v, r_v)`` each."""
        card = [len(x) for x in self.states()]
        shapes = [(math.prod(card[p] for p in pa), r) for pa, r in zip(parents, card,
                                                                         strict=True)]
        flat = np.asarray(self.counts, np.int64)
        parts = np.split(flat, np.cumsum([q * r for q, r in shapes])[:-1])
        return tuple(p.reshape(shape) for p, shape in zip(parts, shapes, strict=True))

    def missing(self) -> MissingPatterns:
        """The incomplete rows."""
        return MissingPatterns(np.asarray(self.patterns, np.int64),
                               np.asarray(self.pattern_counts, np.int64))


def absorb_batch(model: BayesianNetwork, tally: NetworkTally, batch: Batch
                 ) -> tuple[NetworkTally, int]:
    """Count one batch into a tally; returns the new tally and the batch's row count.

    Every row of the batch is in that count: the complete ones are counted into the tables,
    the incomplete ones kept for EM.

    Raises
    ------
    DataError
        A missing column; with held states, a state not among them (naming the row).
    """
    parents = model.parents
    labels = tally.states()
    old = [len(x) for x in labels]
    columns = model.state_columns(batch, labels)  # appends the new states to labels
    rows = len(columns[0][0]) if columns else 0
    card = [len(x) for x in labels]
    if card != old:  # before the grown tables exist
        require_cpts(model.nodes, card, parents, path=batch.name)
    tables = tally.tables(parents)
    if card != old:
        tables = grow_tables(tables, parents, old, card)
    missing = tally.missing()
    codes = [c for c, _ in columns]
    gaps = [v for v, (_, gap) in enumerate(columns) if gap]
    if gaps:
        matrix = np.empty((rows, len(model.nodes)), dtype=np.int32, order="F")
        for v, c in enumerate(codes):
            matrix[:, v] = c
        incomplete = matrix[:, gaps].min(axis=1) < 0
        missing = missing + MissingPatterns.from_codes(matrix[incomplete])
        codes = list(np.asfortranarray(matrix[~incomplete]).T)
    # every code indexes its node's states by construction: no range check, no copy
    batch_tables = count_columns(codes, card, parents)
    tables = tuple(a + b for a, b in zip(tables, batch_tables, strict=True))
    return NetworkTally.of(labels, tables, missing), rows


def tally_counts(model: BayesianNetwork, tally: NetworkTally, source
                 ) -> tuple[dict, NetworkCounts, MissingPatterns]:
    """The sorted states, and the counts and incomplete rows renumbered to them.

    Held (declared) states keep their given order, every one kept. A node's other states
    are sorted, and a state that no row holds is dropped: a pandas categorical column
    brings its categories as labels, used or not (the other readers list only the labels
    found).

    Raises
    ------
    DataError
        A node with no observed value at all.
    """
    labels = tally.states()
    tables = tally.tables(model.parents)
    missing = tally.missing()
    declared = model.held_states or {}
    orders = []
    for v, (words, table) in enumerate(zip(labels, tables, strict=True)):
        if model.nodes[v] in declared:
            orders.append(np.arange(len(words)))
            continue
        seen = table.sum(axis=0) > 0
        held = missing.rows[:, v]
        seen[held[held >= 0]] = True
        orders.append(np.array(sorted(np.flatnonzero(seen).tolist(),
                                      key=words.__getitem__), dtype=np.int64))
    for n, order in zip(model.nodes, orders, strict=True):
        if not len(order):
            raise model.no_observed_value(source, n)
    states = {n: tuple(words[k] for k in order)
              for n, words, order in zip(model.nodes, labels, orders, strict=True)}
    schema = network_schema(model, states)
    tables = reorder_tables(tables, model.parents, [len(x) for x in labels], orders)
    inverse = []
    for words, order in zip(labels, orders, strict=True):
        inv = np.full(len(words), -1, np.int64)  # a dropped state: held by no row
        inv[order] = np.arange(len(order))
        inverse.append(inv)
    if missing.n:
        missing = missing.recoded(inverse)
    return states, NetworkCounts(schema, tables), missing


def network_schema(model: BayesianNetwork, states: dict) -> NetworkSchema:
    """The engine's schema of a model with the states read from the data."""
    return NetworkSchema(tuple(model.nodes), tuple(tuple(states[n]) for n in model.nodes),
                         model.parents)


def network_prior(model: BayesianNetwork, schema: NetworkSchema, states: dict):
    """The prior concentrations of every CPT (one ``(q_v, r_v)`` array per node)."""
    return tuple(np.full((schema.n_configs(v), r), model.prior_alpha(v, states))
                 for v, r in enumerate(schema.cardinality))


def _cpts_json(model: BayesianNetwork, states: dict, prior, counts: NetworkCounts,
               distribution: str, **per_node) -> dict:
    """Every node's CPT entry of ``posterior.json``: what both fits share, then ``per_node``.

    ``per_node``: name -> one array per node (``concentration``, ``mean``, ``sd`` of the
    Dirichlet posterior; ``expected_counts``, ``estimate`` of EM), written as lists.
    """
    out = {}
    for v, n in enumerate(model.nodes):
        out[n] = {
            "states": list(states[n]),
            "parents": [model.nodes[p] for p in model.parents[v]],
            "rows": model.config_labels(v, states),
            "distribution": distribution,
            "prior": float(prior[v][0, 0]),
            "counts": counts.tables[v].tolist(),
            **{key: np.asarray(arrays[v]).tolist() for key, arrays in per_node.items()},
        }
    return out


def network_queries(model: BayesianNetwork, schema: NetworkSchema, cpts, states: dict
                    ) -> list[dict]:
    """Each query's answer at ``cpts``, joint sums and P(evidence) (for posterior.json).

    At the posterior-mean CPTs that is the posterior predictive of a new case.
    """
    index = {n: i for i, n in enumerate(model.nodes)}
    out = []
    for q in model.queries:
        evidence = {index[n]: states[n].index(s) for n, s in q.evidence}
        joint, p_e = query(cpts, schema, index[q.target], evidence)
        tstates = states[q.target]
        out.append({
            "name": q.name, "target": q.target, "evidence": dict(q.evidence),
            "probabilities": dict(zip(tstates, (joint / p_e).tolist(), strict=True)),
            "joint": dict(zip(tstates, joint.tolist(), strict=True)),
            "p_evidence": p_e,
            "cross_checked": model.enumeration(q, states) is not None,
        })
    return out


def _independences(model: BayesianNetwork) -> list[dict]:
    index = {n: i for i, n in enumerate(model.nodes)}
    out = []
    for ind in model.independences:
        ans = d_separation(model.parents, [index[n] for n in ind.x], [index[n] for n in ind.y],
                           [index[n] for n in ind.given])
        out.append({
            "name": ind.name, "x": list(ind.x), "y": list(ind.y), "given": list(ind.given),
            "d_separated": ans.separated,
            "path": None if ans.path is None else [model.nodes[i] for i in ans.path],
            "moral_links": [[model.nodes[a], model.nodes[b]] for a, b in ans.moral_links],
            "ancestral_set": [model.nodes[i] for i in ans.ancestral],
        })
    return out


def network_oracles(model: BayesianNetwork, post: CPTPosterior, states: dict,
                    queries: list[dict]) -> list[ExactMarginal]:
    """Every CPT entry's exact Beta marginal, and the exact means of each query's sums.

    A node with a single state has no marginals: its CPT rows are Dirichlet over one state,
    the point mass at 1 (the declaration's ``cpt_<node>`` draws are all 1).
    """
    out = []
    for v, n in enumerate(model.nodes):
        if len(states[n]) < 2:
            continue  # one state: every CPT entry is the constant 1, nothing to compare
        rows = model.config_labels(v, states)
        for j, row in enumerate(rows):
            for k, s in enumerate(states[n]):
                out.append(ExactMarginal(f"cpt_{n}[{row}, {s}]", variable("cpt", n),
                                         {dim(n, "parents"): row, dim(n, "state"): s},
                                         post.marginal(v, j, k)))
    for q in queries:
        if not q["cross_checked"]:
            continue
        for s, value in q["joint"].items():
            out.append(ExactMarginal(f"joint_{q['name']}[{s}]", variable("joint", q["name"]),
                                     {dim(q["name"], "target"): s}, None, exact_mean=value))
        if q["evidence"]:
            out.append(ExactMarginal(f"evidence_{q['name']}", variable("evidence", q["name"]), {},
                                     None, exact_mean=q["p_evidence"]))
    return out


def fit_bayesian_network(spec: Spec, *, out: Path | None = None, resume: bool = False,
                         progress: bool = False) -> AnalyticFit:
    """Count the data into every CPT, then answer the spec's queries and independences.

    Raises
    ------
    DataError
        A missing column or value, naming the file, column and row.
    SpecError
        An evidence value never seen in the data, naming the query key.
    """
    model: BayesianNetwork = spec.model
    started = time.perf_counter()

    def absorb(tally: NetworkTally, batch: Batch):
        return absorb_batch(model, tally, batch)

    def summarize(tally: NetworkTally):
        tables = tally.tables(model.parents)
        return {"rows": (int(tables[0].sum()) if tables else 0) + tally.missing().n}

    files = spec.data.files()
    stream = run_stream(spec.data, initial_state=NetworkTally.start(model),
                        absorb=absorb, summarize=summarize,
                        checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME,
                        resume=resume, model_key=model_key(spec), total=len(files) or None,
                        progress=progress)
    states, counts, missing = tally_counts(model, stream.state, spec.data)
    problems = model.state_problems(states)
    if problems:
        key, message = problems[0]
        raise SpecError(message, path=spec.path, key=key)
    schema = counts.schema
    prior = network_prior(model, schema, states)
    parameters = {
        "nodes": list(model.nodes),
        "edges": [list(e) for e in model.edges],
        "prior": ({"concentration": model.concentration} if model.concentration is not None
                  else {"equivalent_sample_size": model.equivalent_sample_size, "bdeu": True}),
    }
    batches = [{"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
               for r in stream.records]
    if missing.n:
        return _fit_with_missing(model, spec, schema, states, counts, missing, prior,
                                 parameters, batches, stream.trajectory, started)
    post = cpt_posterior(counts, prior)
    log_ml = log_marginal_likelihood(counts, prior)
    queries = network_queries(model, schema, post.mean, states)
    cpts = _cpts_json(model, states, post.prior, counts, "dirichlet per row",
                      concentration=post.alpha, mean=post.mean, sd=post.sd)
    parameters.update(cpts=cpts, query=queries, independence=_independences(model))
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=network_oracles(model, post, states, queries),
            log_evidence=log_ml,
            state=post,
        ),
        FitRecord(
            n_rows=counts.n,
            batches=batches,
            trajectory=stream.trajectory,
            seconds=time.perf_counter() - started,
            info={"log_marginal_likelihood": log_ml, "declaration": COMPLETE_DECLARATION},
        ),
    )


def exact_draws_bayesian_network(posterior: dict, *, draws: int, chains: int,
                                 rng: np.random.Generator) -> tuple[dict, dict]:
    """Independent draws of every ``cpt_<node>`` from its exact posterior.

    Each row of a CPT (a configuration of the node's parents) is Dirichlet(prior + counts),
    independently of the others; dims ``(<node>__parents, <node>__state)`` as declared.

    Returns
    -------
    variables, coords : dict
        As :mod:`bayescheck.inference.families.exact` expects.
    """
    if "em" in posterior.get("parameters", {}):
        raise BayescheckError("no exact posterior draws: the CPTs were estimated by EM over "
                              "missing cells, so their posterior is not a Dirichlet")
    variables, coords = {}, {}
    for node, cpt in posterior_value(posterior, "cpts").items():
        alpha = np.asarray(cpt["concentration"], dtype=float)  # (rows, states)
        rows = np.stack([rng.dirichlet(a, size=(chains, draws)) for a in alpha], axis=2)
        variables[variable("cpt", node)] = ((dim(node, "parents"), dim(node, "state")), rows)
        coords[dim(node, "parents")] = list(cpt["rows"])
        coords[dim(node, "state")] = list(cpt["states"])
    return variables, coords


#: How ``posterior.json`` and ``fit`` describe CPTs estimated by EM.
EM_WORDS = ("EM point estimate (the maximum of log P(observed cells | theta) + "
            "sum alpha log theta, i.e. the mode under Dirichlet(prior + 1)); with missing "
            "cells the Dirichlet posterior is no longer exact, so there is no sd, no exact "
            "marginal and no log marginal likelihood, and queries are plug-in answers at "
            "these CPTs")


def _fit_with_missing(model: BayesianNetwork, spec: Spec, schema: NetworkSchema, states,
                      complete: NetworkCounts, missing: MissingPatterns, prior, parameters,
                      batches, trajectory, started) -> AnalyticFit:
    try:
        em: EMResult = network_em(complete, missing, prior, max_iter=model.max_iter,
                                  tol=model.tol)
    except ValueError as exc:
        raise DataError(f"EM for the missing cells: {exc}", path=spec.data.label) from None
    cpts = _cpts_json(model, states, prior, complete, "EM point estimate",
                      expected_counts=em.expected_counts, estimate=em.cpts)
    per_node = {n: int(((missing.rows[:, v] < 0) * missing.counts).sum())
                for v, n in enumerate(model.nodes)}
    parameters.update(
        cpts=cpts, query=network_queries(model, schema, em.cpts, states),
        independence=_independences(model),
        em={"words": EM_WORDS, "complete_rows": complete.n, "incomplete_rows": missing.n,
            "missing_cells": missing.cells, "missing_by_node": per_node,
            "log_likelihood": em.log_likelihood, "objective": list(em.objective)},
        fit={"method": "EM", "converged": em.converged, "n_iter": em.iterations,
             "max_iter": model.max_iter, "tol": model.tol})
    for q in parameters["query"]:
        q["cross_checked"] = False
        q["plug_in"] = True
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=[],
            log_evidence=None,
            estimates=em_estimates(model, states, em.cpts),
            state=em,
        ),
        FitRecord(
            n_rows=complete.n + missing.n,
            batches=batches,
            trajectory=trajectory,
            seconds=time.perf_counter() - started,
            info={
                "em_log_likelihood": em.log_likelihood,
                "n_iter": em.iterations,
                "converged": em.converged,
                "declaration": SUMMED_DECLARATION,
            },
            posterior_checks=partial(
                network_posterior_checks, complete=complete, missing=missing, prior=prior
            ),
        ),
    )


def em_estimates(model: BayesianNetwork, states: dict, cpts) -> list[PointEstimate]:
    """One point estimate per CPT entry (nodes with one state apart: their entries are 1)."""
    out = []
    for v, n in enumerate(model.nodes):
        if len(states[n]) < 2:
            continue
        for j, row in enumerate(model.config_labels(v, states)):
            for k, s in enumerate(states[n]):
                out.append(PointEstimate(f"cpt_{n}[{row}, {s}]", variable("cpt", n),
                                         {dim(n, "parents"): row, dim(n, "state"): s},
                                         float(cpts[v][j, k])))
    return out


#: The density criterion fails when a draw's log posterior density exceeds the estimate's by
#: more than this (nats): far above the objective's change once EM's steps are below
#: ``tol`` = 1e-9, far below the gap of any draw in a posterior of a few dimensions.
DENSITY_MARGIN = 1e-6


def network_posterior_checks(fit: AnalyticFit, comparison, idata, spec: Spec, *,
                             complete: NetworkCounts, missing: MissingPatterns, prior,
                             margin: float = DENSITY_MARGIN):
    """Add the mode criterion to the EM estimate's comparison with the NUTS draws.

    The EM estimate maximises ``log P(observed cells | theta) + sum alpha log theta``, which
    is, up to a constant, the declared posterior's log density in the sampler's coordinates
    (each Dirichlet row in log-ratio coordinates, Jacobian ``prod theta``): the estimate is
    the posterior mode there. So no draw may have a higher density: the row
    ``log posterior density (mode)`` fails when the best draw exceeds the estimate by more
    than ``margin`` nats (an exact criterion, no Monte Carlo tolerance: any point of the
    posterior is a valid witness). Its ``distance_sd`` is the estimate's density minus the
    draws' mean density, in their sd. The mixture's marginal-mode criterion is not used:
    in the CPT coordinates the estimate is not a marginal mode (with complete data it is the
    posterior mean ``a / A`` while the Beta marginal peaks at ``(a - 1) / (A - 2)``), so
    that distance would not be zero for a correct estimate.

    Returns
    -------
    inference.compare.EstimateComparison
        ``comparison``, with the row added and the verdict recomputed.
    """
    from bayescheck.inference.checking.compare import EstimateCheck

    model: BayesianNetwork = spec.model
    draws = [np.asarray(idata.posterior[variable("cpt", n)].transpose(
        "chain", "draw", dim(n, "parents"), dim(n, "state")).values, dtype=np.float64)
        for n in model.nodes]
    chains, n_draws = draws[0].shape[:2]
    values = log_objective([d.reshape(-1, *d.shape[2:]) for d in draws], complete, missing,
                           prior)
    at_estimate = float(log_objective(list(fit.posterior.state.cpts), complete, missing, prior))
    best = int(np.argmax(values))
    gap = float(values[best] - at_estimate)
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    check = EstimateCheck(
        name="log posterior density (mode)", estimate=at_estimate, nonzero=None,
        sampled={"mean": mean, "sd": sd, "lower": float(values.min()), "upper": float(
            values[best]), "support_lower": math.nan, "support_upper": math.nan,
            "best_draw_minus_estimate": gap, "best_chain": best // n_draws,
            "best_draw": best % n_draws, "draws_used": int(values.size)},
        distance_sd=(at_estimate - mean) / sd if sd > 0 else math.nan,
        inside=gap <= margin, zero_excluded=False, r_hat=math.nan, ess_bulk=math.nan,
        ess_tail=math.nan)
    comparison.add_check(check, None if check.inside else (
        f"draw {best % n_draws} of chain {best // n_draws} has a log posterior density "
        f"{gap:.4g} above the estimate's: the estimate is not the posterior mode"))
    return comparison


# ---- predict -----------------------------------------------------------------------------


def predictive_proba(cpts, schema: NetworkSchema, target: int, codes: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``P(target = t | the row's observed cells)`` for every row, by exact inference.

    Complete rows (and rows whose empty cells are barren) at once by numpy gathers, the
    others by variable elimination once per distinct pattern of observed cells
    (:func:`bayescheck.inference.engines.networks.predict_target`).

    Parameters
    ----------
    cpts : sequence of numpy.ndarray
        ``cpts[v][j, k]``: the posterior-mean CPTs (the posterior predictive of a new case),
        or a point estimate (plug-in).
    schema : NetworkSchema
    target : int
        The predicted node; its column of ``codes`` is ignored.
    codes : numpy.ndarray of int, shape (rows, nodes)
        State codes, -1 for an unobserved cell (summed out).

    Returns
    -------
    proba : numpy.ndarray, shape (rows, r_target)
        NaN where the observed cells have probability 0.
    log_p_observed : numpy.ndarray, shape (rows,)
        ``log P(the row's observed cells other than the target)`` under ``cpts``.
    """
    return predict_target(cpts, schema, target, codes)


def _saved_cpts(model: BayesianNetwork, posterior: dict, where: str):
    """The states and the CPTs (posterior means, or the EM estimate) in ``posterior.json``."""
    try:
        saved = posterior["parameters"]["cpts"]
        states = {n: tuple(saved[n]["states"]) for n in model.nodes}
        parents_ok = all(list(saved[n]["parents"]) == [model.nodes[p] for p in model.parents[v]]
                         for v, n in enumerate(model.nodes))
        key = "estimate" if "em" in posterior["parameters"] else "mean"
        cpts = tuple(np.asarray(saved[n][key], dtype=float) for n in model.nodes)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"not a bayesian_network posterior.json of these nodes "
                        f"({', '.join(model.nodes)}) written by 'bayescheck fit' of this "
                        f"version ({type(exc).__name__}: {exc})", path=where) from None
    if set(saved) != set(model.nodes) or not parents_ok:
        raise SpecError(f"was fitted with other nodes or edges than the spec's (nodes "
                        f"{', '.join(model.nodes)}); refit with 'bayescheck fit'", path=where)
    schema = network_schema(model, states)
    for v, n in enumerate(model.nodes):
        if cpts[v].shape != (schema.n_configs(v), len(states[n])):
            raise SpecError(f"CPT of {n!r} has shape {cpts[v].shape}, expected "
                            f"{(schema.n_configs(v), len(states[n]))}", path=where)
    return states, schema, cpts


def prediction_targets(model: BayesianNetwork, target=None, *, where=None) -> tuple[str, ...]:
    """The nodes to predict: ``target`` (a name or names), else the spec's query targets."""
    if target is None:
        chosen = tuple(dict.fromkeys(q.target for q in model.queries))
        if not chosen:
            raise SpecError("the spec has no [[query]]: give the node to predict with "
                            "--target NODE", path=where)
        return chosen
    chosen = (target,) if isinstance(target, str) else tuple(dict.fromkeys(target))
    for t in chosen:
        if t not in model.nodes:
            raise BayescheckError(f"--target {t!r}: not a node of the spec; its nodes are "
                                  f"{', '.join(model.nodes)}")
    return chosen


def predict_bayesian_network(spec: Spec, posterior: dict, batch: Batch | None, *,
                             level: float = 0.9, where: str = "posterior.json",
                             target=None, warn=None) -> dict[str, np.ndarray]:
    """``P(target = each state | the row's observed cells)`` per new row, by exact inference.

    Every target node is predicted from the observed cells of the non-target nodes, at the
    CPTs ``fit`` wrote (posterior means: the posterior predictive of a new case; after EM,
    the plug-in answer at the estimate). An empty cell is unobserved and summed out. A
    target's own column may be absent; its values, when present, are not used (a warning
    says so). ``level`` is unused.

    Parameters
    ----------
    target : str or sequence of str, optional
        The node(s) to predict (``--target``); default the targets of the spec's [[query]]
        tables, in order.
    warn : callable, optional
        Receives the warning messages (default: printed to stderr).

    Returns
    -------
    dict
        The non-target node columns as read, then per target ``T``: ``p_<T>_<state>`` per
        state and ``most_probable_<T>`` (the first state on a tie); and
        ``log_p_observed``, the log posterior predictive probability of the row's observed
        non-target cells.

    Raises
    ------
    DataError
        A missing node column, a state never seen in the fit (file, column, row); a row
        whose observed cells have probability 0 under the CPTs (file, row).
    """
    import sys

    model: BayesianNetwork = spec.model
    if batch is None:
        raise SpecError("predict for 'bayesian_network' needs --data NEW", path=where)
    targets = prediction_targets(model, target, where=spec.path)
    states, schema, cpts = _saved_cpts(model, posterior, where)
    warn = warn or (lambda msg: print(f"bayescheck: warning: {msg}", file=sys.stderr))
    frame = batch.frame
    for t in targets:
        if t in frame.columns and frame[t].notna().any():
            r = int(np.flatnonzero(frame[t].notna().to_numpy())[0])
            warn(f"{batch.name}, column '{t}', row {r + 1}: the target's values are not used "
                 f"({t!r} is predicted from the other nodes' cells)")
    codes = model.codes(batch, states, skip=frozenset(targets))
    if codes.shape[0] == 0:
        raise DataError("no rows to predict", path=batch.name)
    out: dict[str, np.ndarray] = {}
    for n in model.nodes:
        if n not in targets:
            col = frame[n]
            out[n] = np.where(col.isna().to_numpy(), "", col.astype(str).to_numpy(dtype=object))
    log_p = None
    for t in targets:
        v = model.nodes.index(t)
        proba, log_p_obs = predictive_proba(cpts, schema, v, codes)
        if not np.isfinite(log_p_obs).all():
            r = int(np.flatnonzero(~np.isfinite(log_p_obs))[0])
            raise DataError("the row's observed cells have probability 0 under the fitted CPTs, "
                            "so P(target | cells) = 0 / 0 is undefined", path=batch.name,
                            row=r + 1)
        for k, s in enumerate(states[t]):
            out[f"p_{t}_{s}"] = proba[:, k]
        out[f"most_probable_{t}"] = np.asarray(states[t], dtype=object)[proba.argmax(axis=1)]
        log_p = log_p_obs
    out["log_p_observed"] = log_p
    return out


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("bayesian_network", model=BayesianNetwork, fit=fit_bayesian_network,
           predict=predict_bayesian_network, exact_draws=exact_draws_bayesian_network),
)
