"""Connecting a :class:`bayescheck.models.SemiNaiveBayes` to the one-dependence engine.

One stream of batches counts (class, x_i, x_j) for every pair of features, per
cross-validation fold when SPODE's super-parent is to be chosen (row ``r`` of the stream in
fold ``r mod folds``; the totals are the sum of the folds). SPODE's choice then takes a second
pass: each fold's rows are classified by the counts of the other folds, for every candidate
super-parent, and the most accurate one wins (ties: lower log loss, then the first feature).
TAN's tree comes from the conditional mutual information of the totals. SPODE and TAN are
then Bayesian networks: their CPT posteriors and query scores are also computed by the network
engine, which gives the oracles of ``check``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.labels import string_labels
from bayescheck.inference.engines.counts import encode_labels
from bayescheck.inference.engines.decisions import bayes_decision
from bayescheck.inference.engines.dist import Dist
from bayescheck.inference.engines.networks import (
    NetworkCounts,
    cpt_posterior,
    log_marginal_likelihood,
)
from bayescheck.inference.engines.one_dependence import (
    PairCounts,
    aode_log_scores,
    conditional_mutual_information,
    maximum_spanning_tree,
    one_dependence_log_scores,
    pair_counts,
    spode_parents,
)
from bayescheck.inference.families.bayesian_network import (
    network_oracles,
    network_prior,
    network_queries,
    network_schema,
)
from bayescheck.inference.families.naive_bayes import decision_loss
from bayescheck.inference.families.predictive import decision_columns, posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import AnalyticFit, ExactMarginal, FitRecord, Posterior
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME, model_key, run_stream
from bayescheck.models.bayesian_network import BayesianNetwork
from bayescheck.models.errors import BayescheckError, DataError, SpecError
from bayescheck.models.pymc_names import dim, variable
from bayescheck.models.resources import require_category_tables
from bayescheck.models.semi_naive_bayes import SemiNaiveBayes
from bayescheck.models.spec import Spec

__all__ = ["FAMILIES", "SemiNaiveStreamState", "choose_super_parent", "class_log_scores",
           "exact_draws_semi_naive_bayes", "fit_semi_naive_bayes", "network_counts_from_pairs",
           "predict_semi_naive_bayes"]


@dataclass(frozen=True)
class SemiNaiveStreamState:
    """Pair counts per fold, flattened (a checkpointable state).

    Attributes
    ----------
    counts : numpy.ndarray, shape (folds, size)
        One row of :meth:`PairCounts.flat` per fold (one row when nothing is cross-validated).
    """

    counts: np.ndarray


def network_counts_from_pairs(net: BayesianNetwork, schema, counts: PairCounts,
                              parents: tuple[int, ...]) -> NetworkCounts:
    """The CPT counts of the class + features network, read off the pair counts.

    Node 0 is the class; feature ``j`` (node ``j + 1``) has parents (class,) or
    (class, x_p) in that order, so its rows are ``c * N_p + x_p``.
    """
    tables = [counts.class_counts[None, :].copy()]
    for j, p in enumerate(parents):
        if p < 0:
            tables.append(counts.singles[j].copy())
        else:
            t = counts.pair(p, j)
            tables.append(t.reshape(t.shape[0] * t.shape[1], t.shape[2]).copy())
    return NetworkCounts(schema, tuple(np.asarray(t, np.int64) for t in tables))


def choose_super_parent(features, folds: list[PairCounts], total: PairCounts, rows,
                        concentration: float) -> tuple[int, dict]:
    """SPODE's super-parent by k-fold cross-validated accuracy (ties: log loss, then order).

    Parameters
    ----------
    features : sequence of str
        Feature names, for the record.
    folds : list of PairCounts
        The counts of each fold (row ``r`` of the stream in fold ``r mod len(folds)``).
    total : PairCounts
        Their sum.
    rows : iterable of (numpy.ndarray, numpy.ndarray)
        The stream again, in the same order: class codes (n,) and feature codes (n, d) per
        batch. Each fold's rows are classified by the counts of the other folds.
    concentration : float

    Returns
    -------
    best : int
        The chosen super-parent's index.
    record : dict
        ``folds``, ``rows``, ``accuracy`` and ``log_loss`` per candidate, ``chosen``.
    """
    d = len(features)
    correct = np.zeros(d)
    log_loss = np.zeros(d)
    seen = 0
    for y, X in rows:
        fold = (seen + np.arange(len(y))) % len(folds)
        seen += len(y)
        for f, held in enumerate(folds):
            idx = np.flatnonzero(fold == f)
            if idx.size == 0:
                continue
            train = PairCounts.from_flat(total.cardinality, total.flat() - held.flat())
            for s in range(d):
                scores = one_dependence_log_scores(train, spode_parents(d, s), X[idx],
                                                   concentration)
                top = scores.max(axis=1, keepdims=True)
                log_p = scores - top - np.log(np.exp(scores - top).sum(axis=1, keepdims=True))
                correct[s] += float((scores.argmax(axis=1) == y[idx]).sum())
                log_loss[s] -= float(log_p[np.arange(idx.size), y[idx]].sum())
    order = sorted(range(d), key=lambda s: (-correct[s], log_loss[s], s))
    best = order[0]
    return best, {"folds": len(folds), "rows": seen,
                  "accuracy": {f: float(correct[s] / seen) for s, f in enumerate(features)},
                  "log_loss": {f: float(log_loss[s] / seen) for s, f in enumerate(features)},
                  "chosen": features[best]}


def _aode_oracles(model: SemiNaiveBayes, total: PairCounts, classes, categories,
                  queries: list[dict]) -> list[ExactMarginal]:
    """Exact marginals of every declared SPODE's parameters and the AODE scores' means."""
    a = model.concentration
    K, n = len(classes), total.n
    checked = [q for q in queries if not q["unseen"] and not q["naive_bayes_fallback"]]
    used = {f for q in checked for f in q["super_parents"]}
    out = []
    for i, s in enumerate(model.features):
        if s not in used:
            continue
        Ni = len(categories[s])
        labels = [f"{c}, {s}={v}" for c in classes for v in categories[s]]
        cells = total.singles[i].ravel()  # (K * N_i,), class-major
        # Beta(alpha_k, the other entries summed): the counts are whole numbers, so n - cell
        # is exact, where the row's total minus alpha_k cancels a tiny a beside the counts
        for cell, label in enumerate(labels):
            out.append(ExactMarginal(f"joint_{s}[{label}]", variable("joint", s),
                                     {dim(s, "joint"): label},
                                     Dist("beta", a + cells[cell],
                                          (K * Ni - 1) * a + (n - cells[cell]))))
        for j, f in enumerate(model.features):
            if j == i:
                continue
            t = total.pair(i, j).reshape(K * Ni, -1)
            Nj = t.shape[1]
            if Nj < 2:
                continue  # one category: the point mass at 1, nothing to compare
            for cell, label in enumerate(labels):
                row_total = t[cell].sum()
                for k, v in enumerate(categories[f]):
                    out.append(ExactMarginal(
                        f"cond_{s}_{f}[{label}, {v}]", variable("cond", s, f),
                        {dim(s, "joint"): label, dim(f, "category"): v},
                        Dist("beta", a + t[cell, k],
                             (Nj - 1) * a + (row_total - t[cell, k]))))
    for q in checked:
        out += [ExactMarginal(f"score[{q['name']}, {c}]", "score",
                              {"query": q["name"], "class": c}, None,
                              exact_mean=q["scores"][c]) for c in classes]
    return out


def fit_semi_naive_bayes(spec: Spec, *, out: Path | None = None, resume: bool = False,
                         progress: bool = False) -> AnalyticFit:
    """Count the data, choose the structure (SPODE / TAN), score the query rows."""
    model: SemiNaiveBayes = spec.model
    started = time.perf_counter()
    classes, categories = model.labels(spec.data)
    card = (len(classes), *(len(categories[f]) for f in model.features))
    require_category_tables(model.features, card[1:], len(classes), pairs=True,
                            path=spec.data.label,
                            remedy="drop the column or merge its values into fewer "
                                   "categories (a numeric column is read as one category "
                                   "per distinct value)")
    size = PairCounts.empty(card).flat().size
    n_folds = model.folds if (model.kind == "spode" and model.super_parent is None) else 1
    K = len(classes)

    def absorb(state: SemiNaiveStreamState, batch: Batch):
        y, X = model.codes(batch, classes, categories)
        arr = np.array(state.counts, dtype=np.int64, copy=True)
        offset = int(arr[:, :K].sum())
        fold = (offset + np.arange(len(y))) % n_folds
        for f in range(n_folds):
            sel = fold == f
            if sel.any():
                arr[f] += pair_counts(y[sel], X[sel], card).flat()
        return SemiNaiveStreamState(arr), len(y)

    def summarize(state: SemiNaiveStreamState):
        return {"rows": int(np.asarray(state.counts)[:, :K].sum())}

    files = spec.data.files()
    stream = run_stream(spec.data,
                        initial_state=SemiNaiveStreamState(np.zeros((n_folds, size), np.int64)),
                        absorb=absorb, summarize=summarize,
                        checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME,
                        resume=resume, model_key=model_key(spec), total=len(files) or None,
                        progress=progress)
    folds = [PairCounts.from_flat(card, row) for row in np.asarray(stream.state.counts)]
    total = PairCounts.from_flat(card, np.asarray(stream.state.counts).sum(axis=0))
    d = len(model.features)
    structure: dict = {"kind": model.kind}
    parents: tuple[int, ...] | None = None
    if model.kind == "spode":
        if model.super_parent is not None:
            s = model.features.index(model.super_parent)
        else:
            s, structure["cross_validation"] = choose_super_parent(
                model.features, folds, total,
                (model.codes(b, classes, categories) for b in spec.data.batches()),
                model.concentration)
        structure["super_parent"] = model.features[s]
        parents = spode_parents(d, s)
    elif model.kind == "tan":
        cmi = conditional_mutual_information(total)
        root = 0 if model.root is None else model.features.index(model.root)
        parents = maximum_spanning_tree(cmi, root=root)
        structure["root"] = model.features[root]
        structure["conditional_mutual_information"] = {
            f: dict(zip(model.features, cmi[i].tolist(), strict=True))
            for i, f in enumerate(model.features)}
    else:
        structure["m_prime"] = model.m_prime
    if parents is not None:
        structure["parents"] = {f: (None if p < 0 else model.features[p])
                                for f, p in zip(model.features, parents, strict=True)}
        structure["edges"] = ([[model.target, f] for f in model.features]
                              + [[model.features[p], f] for f, p in
                                 zip(model.features, parents, strict=True) if p >= 0])

    Xq = model.query_codes(categories)
    loss, options = decision_loss(model, classes, where=spec.path)
    scores, used = class_log_scores(model, total, parents, Xq)
    proba = _probabilities(scores)
    decision = bayes_decision(proba=proba, loss=loss, options=options) if len(Xq) else None
    queries = []
    for r, name in enumerate(model.query_names):
        p = proba[r]
        record = {"name": name, "values": {f: model.queries[r][f] for f in model.features},
                  "scores": dict(zip(classes, np.exp(scores[r]).tolist(), strict=True)),
                  "probabilities": dict(zip(classes, p.tolist(), strict=True)),
                  "most_probable": classes[int(np.argmax(p))],
                  "decision": decision.label[r],
                  "risk": {o: float(decision.risk[r, k]) for k, o in enumerate(options)},
                  "unseen": [f for j, f in enumerate(model.features) if Xq[r, j] < 0]}
        if used is not None:
            record["super_parents"] = [f for j, f in enumerate(model.features) if used[r, j]]
            record["naive_bayes_fallback"] = not used[r].any()
        queries.append(record)

    marginals, log_ml, network = [], None, None
    if parents is not None:
        net = model.network(structure["parents"], categories)
        states = {model.target: classes, **categories}
        schema = network_schema(net, states)
        counts = network_counts_from_pairs(net, schema, total, parents)
        prior = network_prior(net, schema, states)
        post = cpt_posterior(counts, prior)
        log_ml = log_marginal_likelihood(counts, prior)
        net_queries = network_queries(net, schema, post.mean, states)
        marginals = network_oracles(net, post, states, net_queries)
        checked = {q["name"] for q in net_queries}
        for q in queries:
            q["cross_checked"] = q["name"] in checked
        network = {"cpts": {n: {"parents": [net.nodes[i] for i in net.parents[v]],
                                "rows": net.config_labels(v, states),
                                "states": list(states[n]), "mean": post.mean[v].tolist(),
                                "sd": post.sd[v].tolist()}
                            for v, n in enumerate(net.nodes)}}
    parameters = {"classes": list(classes),
                  "categories": {f: list(v) for f, v in categories.items()},
                  "concentration": model.concentration, "structure": structure,
                  "decision": {"options": list(options), "classes": list(classes),
                               "loss": np.asarray(loss).tolist(), "zero_one": model.loss is None},
                  "query": queries,
                  "statistics": {"cardinality": list(card), "counts": total.flat().tolist()}}
    if network is not None:
        parameters["network"] = network
    if model.kind == "aode":
        marginals = _aode_oracles(model, total, classes, categories, queries)
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=marginals,
            log_evidence=log_ml,
            state=total,
        ),
        FitRecord(
            n_rows=total.n,
            batches=[
                {"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
                for r in stream.records
            ],
            trajectory=stream.trajectory,
            seconds=time.perf_counter() - started,
        ),
    )


def class_log_scores(model: SemiNaiveBayes, counts: PairCounts, parents: tuple[int, ...] | None,
                     X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``log E[P(c, x | theta)]`` of feature codes ``X`` (m, d) per class, and AODE's choice.

    SPODE / TAN: the one-dependence network with ``parents``; AODE: the average of the
    qualifying SPODEs (``used[r, i]``: super-parent i qualified for row r; None otherwise).
    """
    if model.kind == "aode":
        return aode_log_scores(counts, X, model.concentration, model.m_prime)
    return one_dependence_log_scores(counts, parents, X, model.concentration), None


def _probabilities(scores: np.ndarray) -> np.ndarray:
    top = scores.max(axis=1, keepdims=True)
    p = np.exp(scores - top)
    return p / p.sum(axis=1, keepdims=True)


def _saved(model: SemiNaiveBayes, posterior: dict, where: str):
    """Classes, categories, pair counts and parents kept in ``posterior.json``."""
    try:
        par = posterior["parameters"]
        classes = tuple(par["classes"])
        categories = {f: tuple(par["categories"][f]) for f in model.features}
        st = par["statistics"]
        counts = PairCounts.from_flat(tuple(st["cardinality"]), np.asarray(st["counts"]))
        kind = par["structure"]["kind"]
        parents = None
        if kind != "aode":
            index = {f: j for j, f in enumerate(model.features)}
            parents = tuple(-1 if par["structure"]["parents"][f] is None
                            else index[par["structure"]["parents"][f]] for f in model.features)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"not a semi_naive_bayes posterior.json of these features "
                        f"({', '.join(model.features)}) written by 'bayescheck fit' of this "
                        f"version ({type(exc).__name__}: {exc})", path=where) from None
    if kind != model.kind:
        raise SpecError(f"was fitted with kind = {kind!r}; the spec has {model.kind!r}",
                        path=where)
    return classes, categories, counts, parents


def predict_semi_naive_bayes(spec: Spec, posterior: dict, batch: Batch | None, *,
                             level: float = 0.9, where: str = "posterior.json",
                             loss: tuple | None = None, warn=None) -> dict[str, np.ndarray]:
    """Class probabilities, minimum-risk decision and the risk of every option per new row.

    The probabilities are the exact posterior predictive of the fitted one-dependence network
    (SPODE, TAN) or the AODE average, from the pair counts kept in ``posterior.json``.
    A category never seen in training leaves that feature out (and, for SPODE / TAN, the
    features whose extra parent it is), with a warning. ``level`` is unused (no intervals).

    Parameters
    ----------
    loss : (numpy.ndarray, tuple), optional
        A loss matrix with its columns in the fit's class order and its option labels
        (``--loss``); default the spec's ``[decision]``, else zero-one loss.
    warn : callable, optional
        Receives the warning messages (default: printed to stderr).

    Returns
    -------
    dict
        The feature columns, ``p_<class>``, ``decision``, ``risk_<option>``.
    """
    import sys

    model: SemiNaiveBayes = spec.model
    if batch is None:
        raise SpecError("predict for 'semi_naive_bayes' needs --data NEW", path=where)
    classes, categories, counts, parents = _saved(model, posterior, where)
    matrix, options = loss if loss is not None else decision_loss(model, classes,
                                                                   where=spec.path)
    warn = warn or (lambda msg: print(f"bayescheck: warning: {msg}", file=sys.stderr))
    columns = {f: string_labels(batch, f) for f in model.features}
    X = np.column_stack([encode_labels(columns[f], categories[f]) for f in model.features])
    for j, f in enumerate(model.features):
        unseen = np.flatnonzero(X[:, j] < 0)
        if unseen.size:
            r = int(unseen[0])
            warn(f"{batch.name}, column '{f}', row {r + 1}: category {columns[f][r]!r} never "
                 f"seen in training; the feature is left out of that row's score "
                 f"({unseen.size} row(s))")
    if X.shape[0] == 0:
        raise DataError("no rows to predict", path=batch.name)
    scores, _ = class_log_scores(model, counts, parents, X)
    proba = _probabilities(scores)
    decision = bayes_decision(proba=proba, loss=matrix, options=options)
    return {**columns, **decision_columns(classes, proba, decision)}


def _dirichlet_rows(alpha: np.ndarray, size: tuple[int, int], rng: np.random.Generator):
    """One Dirichlet draw per row of ``alpha`` (rows, states): shape ``(*size, rows, states)``."""
    return np.stack([rng.dirichlet(a, size=size) for a in alpha], axis=2)


def exact_draws_semi_naive_bayes(posterior: dict, *, draws: int, chains: int,
                                 rng: np.random.Generator) -> tuple[dict, dict]:
    """Independent draws of every CPT row of the declared model, from its exact posterior.

    Every row is Dirichlet(concentration + its counts), independently, the counts read off the
    pair counts kept in ``posterior.json``. SPODE / TAN: the network's ``cpt_<node>`` (dims
    ``<node>__parents``, ``<node>__state``), as :meth:`bayescheck.models.SemiNaiveBayes.declare`
    declares them. AODE: for every feature ``s`` as super-parent, ``joint_<s>`` (dims
    ``<s>__joint``: the ``(class, x_s)`` cells) and ``cond_<s>_<f>`` (dims ``<s>__joint``,
    ``<f>__category``). The declaration holds only the SPODEs its checked queries use; these
    draws hold all of them, with the same names and dims.

    Returns
    -------
    variables, coords : dict
        As :mod:`bayescheck.inference.families.exact` expects.
    """
    classes = list(posterior_value(posterior, "classes"))
    categories = {f: list(v) for f, v in posterior_value(posterior, "categories").items()}
    features = list(categories)
    a = float(posterior_value(posterior, "concentration"))
    st = posterior_value(posterior, "statistics")
    counts = PairCounts.from_flat(tuple(st["cardinality"]), np.asarray(st["counts"]))
    K, size = len(classes), (chains, draws)
    variables, coords = {}, {}
    if posterior_value(posterior, "structure", "kind") == "aode":
        for f in features:
            coords[dim(f, "category")] = categories[f]
        for i, s in enumerate(features):
            Ni = len(categories[s])
            coords[dim(s, "joint")] = [f"{c}, {s}={v}" for c in classes for v in categories[s]]
            variables[variable("joint", s)] = ((dim(s, "joint"),), rng.dirichlet(
                a + counts.singles[i].ravel(), size=size))
            for j, f in enumerate(features):
                if j != i:
                    table = counts.pair(i, j).reshape(K * Ni, -1)
                    variables[variable("cond", s, f)] = ((dim(s, "joint"), dim(f, "category")),
                                                  _dirichlet_rows(a + table, size, rng))
        return variables, coords
    cpts = posterior_value(posterior, "network", "cpts")
    target = next(iter(cpts))
    for node, cpt in cpts.items():
        if node == target:
            table = counts.class_counts[None, :]
        else:
            j = features.index(node)
            extra = [p for p in cpt["parents"] if p != target]
            if not extra:
                table = counts.singles[j]
            else:
                t = counts.pair(features.index(extra[0]), j)  # (K, N_p, N_j)
                if cpt["parents"][0] != target:
                    t = t.transpose(1, 0, 2)  # rows in the declaration's parent order
                table = t.reshape(-1, t.shape[2])
        if table.shape != (len(cpt["rows"]), len(cpt["states"])):
            raise BayescheckError(f"posterior.json: the counts of {node!r} do not fit its "
                                  f"CPT's rows and states; refit with 'bayescheck fit'")
        variables[variable("cpt", node)] = ((dim(node, "parents"), dim(node, "state")),
                                    _dirichlet_rows(a + table, size, rng))
        coords[dim(node, "parents")] = list(cpt["rows"])
        coords[dim(node, "state")] = list(cpt["states"])
    return variables, coords


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("semi_naive_bayes", model=SemiNaiveBayes, fit=fit_semi_naive_bayes,
           predict=predict_semi_naive_bayes, exact_draws=exact_draws_semi_naive_bayes),
)
