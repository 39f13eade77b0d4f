"""Connecting a :class:`bayescheck.models.NaiveBayes` to the naive Bayes engine.

The engine is fed over a stream; the spec's query rows get minimum-risk decisions.

The batches go through :func:`bayescheck.inference.scale.streaming.run_stream`; the checkpointed
state is the
engine's :class:`~bayescheck.inference.engines.naive_bayes_stats.NaiveBayesStats` itself (its
schema,
classes and categories, is rebuilt from the spec and a pass over the labels, and a checkpoint
written for another schema is refused on resume).
``posterior.json`` keeps the sufficient statistics, so ``bayescheck predict`` rebuilds the
fitted model from it (:func:`model_from_posterior`) without reading the training data;
:mod:`bayescheck.reports.predict` reads the new rows and the loss file and writes the table.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.labels import string_labels
from bayescheck.inference.engines.counts import encode_labels
from bayescheck.inference.engines.decisions import bayes_decision, zero_one_loss
from bayescheck.inference.engines.naive_bayes_stats import (
    CATEGORICAL,
    NaiveBayesModel,
    NaiveBayesSchema,
    NaiveBayesStats,
    UnivariateNIGPosterior,
    UnivariateNIGPrior,
    naive_bayes_stats,
    normal_normal_inverse_gamma,
)
from bayescheck.inference.engines.naive_bayes_stats import fit_naive_bayes as naive_bayes_from_stats
from bayescheck.inference.families.predictive import decision_columns, posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import AnalyticFit, ExactMarginal, FitRecord, Posterior
from bayescheck.inference.scale.distributed import (
    active,
    partition_files,
    reduce_partitions,
    stream_or_reduce,
    uncovered_files,
)
from bayescheck.models.errors import DataError, SpecError
from bayescheck.models.naive_bayes import LabelSets, NaiveBayes
from bayescheck.models.pymc_names import escaped, variable
from bayescheck.models.resources import require_category_tables
from bayescheck.models.spec import Spec

if TYPE_CHECKING:
    import pandas as pd

from bayescheck.inference.scale.streaming import (
    CHECKPOINT_NAME,
    SchemaChanged,
    checkpoint_description,
    load_checkpoint,
    model_key,
    run_stream,
)

__all__ = [
    "FAMILIES",
    "UNDEFINED",
    "exact_draws_naive_bayes",
    "decision_loss",
    "fit_naive_bayes",
    "fitted_model",
    "model_from_posterior",
    "predict_naive_bayes",
    "undefined_rows",
]


def _new_label(model: NaiveBayes, spec: Spec, records) -> DataError | None:
    """The first class or category of a not yet absorbed batch that absorbed ones lack.

    Only called once a resumed stream failed on a changed schema, so the extra pass over the
    labels costs nothing on the normal path.
    """
    absorbed = {os.path.realpath(r.name) for r in records}
    columns = [model.target, *model.categorical]
    old: dict[str, set] = {c: set() for c in columns}
    for new_pass in (False, True):
        for batch in spec.data.batches():
            if (os.path.realpath(batch.name) in absorbed) == new_pass:
                continue
            for c in columns:
                labels = string_labels(batch, c)
                if not new_pass:
                    old[c].update(labels.tolist())
                    continue
                fresh = ~np.isin(labels, np.asarray(sorted(old[c]), dtype=object))
                if fresh.any():
                    i = int(np.flatnonzero(fresh)[0])
                    what = "class" if c == model.target else "category"
                    return DataError(
                        f"{what} {labels[i]!r} is new: the batches in the checkpoint have only "
                        f"{sorted(old[c])}, and a resumed naive Bayes stream keeps the classes "
                        f"and categories of its first run; start afresh without --resume",
                        path=batch.name, column=c, row=i + 1)
    return None


def _schema(model: NaiveBayes, classes, categories) -> NaiveBayesSchema:
    return NaiveBayesSchema(
        classes=tuple(classes), kinds=tuple(model.kinds),
        categories=tuple(tuple(categories[f]) if k == CATEGORICAL else None
                         for f, k in zip(model.features, model.kinds, strict=True)),
        feature_names=tuple(model.features))


_SPEC_ADVICE = ('set [prior] gaussian = "nig" (each variance then has a prior and needs no '
                'minimum number of distinct rows)')


def fitted_model(model: NaiveBayes, stats: NaiveBayesStats, *, where: str = "") -> NaiveBayesModel:
    """Fit the engine from statistics with the spec's prior.

    Engine errors become :class:`DataError` (exit 2) naming the data.
    """
    try:
        return naive_bayes_from_stats(
            stats=stats, smoothing=model.smoothing, concentration=model.concentration,
            class_prior=model.class_prior, gaussian=model.gaussian,
            nig_prior=UnivariateNIGPrior(mu0=model.mu0, kappa0=model.kappa0, a0=model.a0,
                                         b0=model.b0))
    except ValueError as exc:
        # The engine's advice names its own arguments; a spec user has only [prior] keys.
        message = str(exc)
        for engine_words in ("pass var_floor > 0 or gaussian='nig'", "pass var_floor > 0",
                             f"pass var_floor >= {np.finfo(np.float64).tiny:.3g}",
                             "use gaussian='nig'"):
            message = message.replace(engine_words, _SPEC_ADVICE)
        raise DataError(message, path=where or None, column=model.target) from None


def decision_loss(model: NaiveBayes, classes: tuple, *,
                  where: Path | None = None) -> tuple[np.ndarray, tuple]:
    """The spec's loss matrix with its columns in ``classes`` order, and its option labels.

    Zero-one loss over the classes when the spec has no ``[decision]``; a :class:`SpecError`
    naming ``where`` when the spec's ``decision.classes`` are not the data's classes.
    """
    if model.loss is None:
        return zero_one_loss(len(classes)), tuple(classes)
    if set(model.decision_classes) != set(classes) or len(model.decision_classes) != len(classes):
        raise SpecError(f"expected the classes of the data {list(classes)}, got "
                        f"{list(model.decision_classes)}", path=where, key="decision.classes")
    order = [model.decision_classes.index(c) for c in classes]
    return model.loss[:, order], tuple(model.decision_options)


def undefined_rows(nb: NaiveBayesModel, X: pd.DataFrame | Mapping[str, np.ndarray]
                   ) -> list[tuple[int, str]]:
    """Rows with probability 0 under every class, each with the features that say so.

    ``X``: a frame, or a mapping of feature name -> column.

    Possible only without smoothing. P(c | x) is then 0 / 0: undefined, not the class prior.
    (A value so far from every class that its squares overflow is compared up to a constant
    of its row: ``relative`` scores, not a row without probabilities.)

    Returns
    -------
    list of (int, str)
        0-based row index and why the row has no class probabilities: per feature, the
        classes it rules out, and what the user can change.
    """
    scores = nb.joint_log_likelihood(X, relative=True)
    dead = np.flatnonzero(np.all(np.isneginf(scores), axis=1))
    s = nb.schema
    out = []
    for i in dead:
        why = []
        for f, j in enumerate(s.categorical_features):
            name = s.feature_names[j]
            value = np.asarray(X[name])[i]
            code = encode_labels(np.asarray([value], dtype=object), s.categories[j])[0]
            logp = nb.category_log_prob[f][:, code] if code >= 0 else nb.unknown_log_prob[f]
            ruled = [str(c) for c, lp in zip(s.classes, logp, strict=True) if np.isneginf(lp)]
            if ruled and len(ruled) < len(s.classes):
                why.append(f"{name} = {value!r} was never seen with {', '.join(ruled)}")
        out.append((int(i), UNDEFINED.format(
            why="; ".join(why) or "every class gives these values probability 0")))
    return out


UNDEFINED = ("has probability 0 under every class ({why}), so P(class | x) = 0 / 0 is "
             "undefined; set [prior] smoothing = true to give unseen combinations prior mass")


def _query_records(model: NaiveBayes, nb: NaiveBayesModel, loss, options, checked, *,
                   where=None) -> list[dict]:
    if not model.queries:
        return []
    Q = model.query_columns()
    for i, why in undefined_rows(nb, Q):
        raise SpecError(f"query {model.query_names[i]!r} {why}",
                        path=where, key="query")
    classes = nb.classes
    jll = nb.joint_log_likelihood(Q)
    proba = nb.predict_proba(Q)
    decision = bayes_decision(proba=proba, loss=loss, options=options)
    records = []
    for i, name in enumerate(model.query_names):
        records.append({
            "name": name,
            "values": {f: model.queries[i][f] for f in model.features},
            "scores": {c: float(np.exp(jll[i, k])) for k, c in enumerate(classes)},
            "probabilities": {c: float(proba[i, k]) for k, c in enumerate(classes)},
            "most_probable": classes[int(np.argmax(proba[i]))],
            "decision": decision.label[i],
            "risk": {o: float(decision.risk[i, r]) for r, o in enumerate(options)},
            "cross_checked": bool(model.bayesian_predictive and i in checked),
        })
    return records


def _statistics_json(stats: NaiveBayesStats) -> dict:
    s = stats.schema
    return {
        "classes": list(s.classes),
        "features": list(s.feature_names),
        "kinds": list(s.kinds),
        "categories": {s.feature_names[j]: list(s.categories[j]) for j in s.categorical_features},
        "class_counts": stats.class_counts.tolist(),
        "gaussian_mean": stats.gaussian_mean.tolist(),
        "gaussian_m2": stats.gaussian_m2.tolist(),
        "category_counts": {s.feature_names[j]: stats.category_counts[f].tolist()
                            for f, j in enumerate(s.categorical_features)},
    }


def _features_json(model: NaiveBayes, nb: NaiveBayesModel) -> dict:
    s, classes = nb.schema, nb.classes
    out = {}
    for f, j in enumerate(s.categorical_features):
        name, cats = s.feature_names[j], s.categories[j]
        out[name] = {
            "kind": "categorical", "categories": list(cats),
            "probabilities": {c: dict(zip(cats, np.exp(nb.category_log_prob[f][k]).tolist(),
                                          strict=True)) for k, c in enumerate(classes)},
            "counts": {c: dict(zip(cats, nb.stats.category_counts[f][k].tolist(), strict=True))
                       for k, c in enumerate(classes)},
        }
    for g, j in enumerate(s.gaussian_features):
        name = s.feature_names[j]
        entry = {"kind": "gaussian", "model": nb.gaussian,
                 "mean": {c: float(nb.means[k, g]) for k, c in enumerate(classes)},
                 "variance": {c: float(nb.variances[k, g]) for k, c in enumerate(classes)}}
        if nb.gaussian == "nig":
            post = nb.nig
            entry["predictive"] = {
                "distribution": "student_t",
                "df": {c: float(2 * post.a[k, g]) for k, c in enumerate(classes)},
                "loc": {c: float(post.mu[k, g]) for k, c in enumerate(classes)},
                "scale": {c: float(post.predictive_scale[k, g]) for k, c in enumerate(classes)},
            }
        out[name] = entry
    return out


def _oracles(model: NaiveBayes, nb: NaiveBayesModel, queries: list[dict]) -> list[ExactMarginal]:
    """Exact marginals of the declared model's parameters and exact means of the query scores.

    The marginals are always given (the parameters are conjugate); the means of the query
    scores only when the fit reports the Bayesian predictive.
    """
    s, classes = nb.schema, nb.classes
    out = [ExactMarginal(f"class_weight[{c}]", "class_weight", {"class": c},
                         nb.class_posterior.marginal(k)) for k, c in enumerate(classes)]
    for f, j in enumerate(s.categorical_features):
        name, cats = s.feature_names[j], s.categories[j]
        if nb.category_posteriors[f] is None:
            continue  # one category: p = 1, a constant with nothing to compare
        for k, c in enumerate(classes):
            post = nb.category_posteriors[f][k]
            out += [ExactMarginal(f"p_{name}[{c}, {v}]", variable("p", name),
                                  {"class": c, f"{escaped(name)}_category": v}, post.marginal(i))
                    for i, v in enumerate(cats)]
    if s.gaussian_features:
        prior = UnivariateNIGPrior(mu0=model.mu0, kappa0=model.kappa0, a0=model.a0,
                                   b0=model.b0)
        st = nb.stats
        for g, j in enumerate(s.gaussian_features):
            name = s.feature_names[j]
            for k, c in enumerate(classes):
                post: UnivariateNIGPosterior = normal_normal_inverse_gamma(
                    count=st.class_counts[k], mean=st.gaussian_mean[k, g],
                    m2=st.gaussian_m2[k, g], prior=prior)
                coords = {"class": c, "gaussian_feature": name}
                out.append(ExactMarginal(f"mu[{c}, {name}]", "mu", coords,
                                         post.mean_marginal()))
                out.append(ExactMarginal(f"sigma2[{c}, {name}]", "sigma2", coords,
                                         post.variance_marginal()))
    for q in queries:
        if q["cross_checked"]:
            coords = [{"query": q["name"], "class": c} for c in classes]
            out += [ExactMarginal(f"score[{q['name']}, {c}]", "score", co, None,
                                  exact_mean=q["scores"][c])
                    for c, co in zip(classes, coords, strict=True)]
            logs = _expected_log_scores(model, nb, q["values"])
            out += [ExactMarginal(f"log_score[{q['name']}, {c}]", "log_score", co, None,
                                  exact_mean=float(v))
                    for c, co, v in zip(classes, coords, logs, strict=True)]
    return out


def _expected_log_scores(model: NaiveBayes, nb: NaiveBayesModel, values: dict) -> np.ndarray:
    """Exact posterior mean of ``log s_c(x)`` for one query row, per class.

    The score ``s_c(x) = w_c prod_j p(x_j | c, theta)`` of a row far from a class is a density
    deep in a tail: its draws are so heavy-tailed that their mean has no usable Monte Carlo
    error (the check then leaves it "not judged"). Its logarithm is a sum of light-tailed
    terms whose posterior mean is exact: ``digamma(alpha_c) - digamma(sum alpha)`` for the
    Dirichlet class weights and category probabilities, and
    :meth:`UnivariateNIGPosterior.expected_logpdf` for the Gaussian features.
    """
    from scipy.special import digamma

    s, classes = nb.schema, nb.classes
    alpha = np.asarray(nb.class_posterior.alpha, dtype=np.float64)
    out = digamma(alpha) - digamma(alpha.sum())
    for f, j in enumerate(s.categorical_features):
        if nb.category_posteriors[f] is None:
            continue  # one category: log p = 0
        v = list(s.categories[j]).index(values[s.feature_names[j]])
        for k in range(len(classes)):
            a = np.asarray(nb.category_posteriors[f][k].alpha, dtype=np.float64)
            out[k] += digamma(a[v]) - digamma(a.sum())
    if s.gaussian_features:
        prior = UnivariateNIGPrior(mu0=model.mu0, kappa0=model.kappa0, a0=model.a0,
                                   b0=model.b0)
        st = nb.stats
        for g, j in enumerate(s.gaussian_features):
            x = float(values[s.feature_names[j]])
            for k in range(len(classes)):
                post = normal_normal_inverse_gamma(count=st.class_counts[k],
                                                   mean=st.gaussian_mean[k, g],
                                                   m2=st.gaussian_m2[k, g], prior=prior)
                out[k] += float(post.expected_logpdf(x))
    return out


def _batch_stats(model: NaiveBayes, schema: NaiveBayesSchema, batch: Batch) -> NaiveBayesStats:
    """The statistics of one batch (on a worker, on a cluster)."""
    X, y = model.columns(batch)
    try:
        return naive_bayes_stats(X, y, schema=schema)
    except ValueError as exc:
        raise DataError(f"{exc}", path=batch.name) from None


def _checkpoint_labels(model: NaiveBayes, spec: Spec, checkpoint: Path,
                       described: dict) -> tuple[LabelSets, list]:
    """The labels counted in a checkpoint (classes and categories with a count > 0).

    They are the labels of the batches it covers, which a resumed cluster fit then need not
    read again; also the checkpoint's records.
    """
    try:
        schema = NaiveBayesSchema(
            classes=tuple(described["classes"]), kinds=tuple(described["kinds"]),
            categories=tuple(None if c is None else tuple(c) for c in described["categories"]),
            feature_names=tuple(described["feature_names"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"cannot read checkpoint: its schema ({type(exc).__name__}: {exc})",
                        path=checkpoint) from None
    done = load_checkpoint(checkpoint, NaiveBayesStats, model_key(spec),
                           initial_state=NaiveBayesStats.empty(schema))
    stats = done.state
    categories = {}
    for f, j in enumerate(schema.categorical_features):
        present = np.asarray(stats.category_counts[f]).sum(axis=0) > 0
        categories[schema.feature_names[j]] = frozenset(
            c for c, p in zip(schema.categories[j], present, strict=True) if p)
    classes = frozenset(c for c, k in zip(schema.classes, np.asarray(stats.class_counts),
                                          strict=True) if k > 0)
    return LabelSets(classes, categories, int(stats.n)), done.records


def _cluster_labels(model: NaiveBayes, spec: Spec, checkpoint: Path | None):
    """The label pass on the workers: resumed (``checkpoint``), over the uncovered files only.

    The covered files' labels are those counted in the checkpoint, so the schema equals the
    one a pass over every file gives (a covered file that changed is refused afterwards).
    """
    seen = LabelSets(frozenset(), {f: frozenset() for f in model.categorical})
    files = partition_files(spec.data)
    described = None if checkpoint is None else checkpoint_description(checkpoint, "schema")
    if described is not None:
        counted, records = _checkpoint_labels(model, spec, checkpoint, described)
        seen = seen + counted
        files = uncovered_files(files, records)
    if files:
        labels, _ = reduce_partitions(spec.data, model.batch_labels, operator.add, files=files)
        seen = seen + labels
    return model.resolve_labels(seen, where=spec.data.label, source=spec.data)


def fit_naive_bayes(spec: Spec, *, out: Path | None = None, resume: bool = False,
                     progress: bool = False) -> AnalyticFit:
    """Stream the data through the naive Bayes engine.

    The fit holds the class probabilities, decisions and expected risks of the spec's query
    rows, and the oracles of the cross-check.
    """
    model: NaiveBayes = spec.model
    started = time.perf_counter()
    if active() is not None and model.held_labels is None:  # the label pass on the workers
        checkpoint = None if out is None or not resume else Path(out) / CHECKPOINT_NAME
        classes, categories = _cluster_labels(model, spec, checkpoint)
    else:
        classes, categories = model.labels(spec.data)
    require_category_tables(list(categories), [len(c) for c in categories.values()],
                            len(classes), path=spec.data.label,
                            remedy="merge its values into fewer categories, or read it as "
                                   "gaussian (a numeric column read as categorical has one "
                                   "category per distinct value)")
    schema = _schema(model, classes, categories)

    def summarize(state: NaiveBayesStats):
        return {"class_counts": dict(zip(classes, np.asarray(state.class_counts).tolist(),
                                         strict=True))}

    files = spec.data.files()
    initial = NaiveBayesStats.empty(schema)
    try:
        stream = stream_or_reduce(
            spec.data, initial_state=initial, statistic=partial(_batch_stats, model, schema),
            apply=operator.add, merge=operator.add, summarize=summarize, progress=progress,
            checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME, resume=resume,
            model_key=model_key(spec),
            stream=lambda absorb, statistic: run_stream(
                spec.data, initial_state=initial, absorb=absorb, statistic=statistic,
                summarize=summarize,
                checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME, resume=resume,
                model_key=model_key(spec), total=len(files) or None, progress=progress))
    except SchemaChanged as exc:  # name the batch, column and row that brought the change
        raise _new_label(model, spec, exc.records) or exc from None
    stats = stream.state
    nb = fitted_model(model, stats, where=spec.data.label)
    loss, options = decision_loss(model, classes, where=spec.path)
    checked = model.checked_queries(categories)
    queries = _query_records(model, nb, loss, options, checked, where=spec.path)
    parameters = {
        "classes": list(classes),
        "settings": {
            "smoothing": model.smoothing,
            "concentration": model.concentration,
            "class_prior": model.class_prior,
            "gaussian": nb.gaussian,
            "nig_prior": {"mu0": model.mu0, "kappa0": model.kappa0, "a0": model.a0, "b0": model.b0}
            if model.gaussians
            else None,
        },
        "class_prior": {
            c: float(p) for c, p in zip(classes, np.exp(nb.class_log_prior), strict=True)
        },
        "class_weight": {
            "mean": dict(zip(classes, nb.class_posterior.mean.tolist(), strict=True)),
            "sd": dict(zip(classes, nb.class_posterior.sd.tolist(), strict=True)),
            "distribution": "dirichlet",
            "concentration": nb.class_posterior.alpha.tolist(),
        },
        "features": _features_json(model, nb),
        "decision": {
            "options": list(options),
            "classes": list(classes),
            "loss": np.asarray(loss).tolist(),
            "zero_one": model.loss is None,
        },
        "query": queries,
        "statistics": _statistics_json(stats),
    }
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=_oracles(model, nb, queries),
            log_evidence=None,
            state=nb,
        ),
        FitRecord(
            n_rows=stats.n,
            batches=[
                {"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
                for r in stream.records
            ],
            trajectory=stream.trajectory,
            seconds=time.perf_counter() - started,
        ),
    )


# ---- the fitted model again, for prediction ------------------------------------------------


def model_from_posterior(model: NaiveBayes, posterior: dict, *, where: str) -> NaiveBayesModel:
    """Rebuild the fitted engine from the statistics kept in ``posterior.json``.

    The spec's prior is used; a file of another model or other columns is a
    :class:`SpecError`.
    """
    if posterior.get("model") != model.name:
        raise SpecError(f"holds a {posterior.get('model')!r} fit, not naive_bayes", path=where)
    try:
        st = posterior["parameters"]["statistics"]
        if st["features"] != list(model.features) or st["kinds"] != list(model.kinds):
            raise SpecError(f"was fitted with features {st['features']} of kinds {st['kinds']}; "
                            f"the spec has {list(model.features)} of kinds {list(model.kinds)}",
                            path=where)
        schema = _schema(model, st["classes"], st["categories"])
        stats = NaiveBayesStats(
            schema=schema, class_counts=np.asarray(st["class_counts"], np.int64),
            gaussian_mean=np.asarray(st["gaussian_mean"], np.float64).reshape(
                len(schema.classes), -1),
            gaussian_m2=np.asarray(st["gaussian_m2"], np.float64).reshape(
                len(schema.classes), -1),
            category_counts=tuple(np.asarray(st["category_counts"][f], np.int64)
                                  for f in model.categorical))
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"not a naive Bayes posterior.json written by 'bayescheck fit' "
                        f"({type(exc).__name__}: {exc})", path=where) from None
    return fitted_model(model, stats, where=where)


def exact_draws_naive_bayes(posterior: dict, *, draws: int, chains: int,
                            rng: np.random.Generator) -> tuple[dict, dict]:
    """Independent draws of the declaration's parameters from their exact posterior.

    The declared model (:meth:`bayescheck.models.NaiveBayes.declare`, whatever the prediction
    settings): ``class_weight ~ Dirichlet(concentration + class counts)`` (dims ``class``); per
    categorical feature ``p_<f>[c] ~ Dirichlet(concentration + counts of class c)`` (dims
    ``class``, ``<f>_category``); per class and Gaussian feature the Normal-Inverse-Gamma
    posterior, ``sigma2 ~ InvGamma(a, b)`` and ``mu | sigma2 ~ N(m, sigma2 / kappa)`` (dims
    ``class``, ``gaussian_feature``). The parameter posteriors are independent.

    Returns
    -------
    variables, coords : dict
        As :mod:`bayescheck.inference.families.exact` expects.
    """
    st = posterior_value(posterior, "statistics")
    settings = posterior_value(posterior, "settings")
    alpha = float(settings["concentration"])
    classes = list(st["classes"])
    size = (chains, draws)
    counts = np.asarray(st["class_counts"], dtype=float)
    variables = {"class_weight": (("class",), rng.dirichlet(alpha + counts, size=size))}
    coords = {"class": classes}
    for f in st["features"]:
        if f not in st["categories"]:
            continue
        table = np.asarray(st["category_counts"][f], dtype=float)  # (K, N_f)
        draws_f = np.stack([rng.dirichlet(alpha + row, size=size) for row in table], axis=2)
        variables[variable("p", f)] = (("class", f"{escaped(f)}_category"), draws_f)
        coords[f"{escaped(f)}_category"] = list(st["categories"][f])
    gaussians = [f for f, k in zip(st["features"], st["kinds"], strict=True) if k == "gaussian"]
    if gaussians:
        K, G = len(classes), len(gaussians)
        nig = normal_normal_inverse_gamma(
            count=np.broadcast_to(counts[:, None], (K, G)),
            mean=np.asarray(st["gaussian_mean"], float).reshape(K, G),
            m2=np.asarray(st["gaussian_m2"], float).reshape(K, G),
            prior=UnivariateNIGPrior(**settings["nig_prior"]))
        sigma2 = nig.b / rng.gamma(nig.a, size=(*size, K, G))  # InvGamma(a, b) = b / Gamma(a)
        mu = nig.mu + np.sqrt(sigma2 / nig.kappa) * rng.standard_normal((*size, K, G))
        dims = ("class", "gaussian_feature")
        variables.update(mu=(dims, mu), sigma2=(dims, sigma2))
        coords["gaussian_feature"] = gaussians
    return variables, coords


def predict_naive_bayes(spec: Spec, posterior: dict, batch: Batch | None, *,
                        level: float = 0.9, where: str = "posterior.json",
                        loss: tuple | None = None, warn=None) -> dict[str, np.ndarray]:
    """Class probabilities, minimum-risk decision and the risk of every option per new row.

    The fitted engine is rebuilt from ``posterior.json`` (:func:`model_from_posterior`); the
    probabilities are its posterior predictive P(class | row). ``level`` is unused (no
    intervals).

    Parameters
    ----------
    loss : (numpy.ndarray, tuple), optional
        A loss matrix with its columns in the fit's class order and its option labels
        (``--loss``); default the spec's ``[decision]``, else zero-one loss over the classes.
    warn : callable, optional
        Receives a message for each categorical feature with labels never seen in training
        (they get the prior's mass when smoothed, probability 0 otherwise); default: printed
        to stderr.

    Returns
    -------
    dict
        The feature columns, ``p_<class>`` per class, ``decision`` and ``risk_<option>`` per
        option.
    """
    import sys

    model: NaiveBayes = spec.model
    if batch is None:
        raise SpecError("predict for 'naive_bayes' needs --data NEW", path=where)
    nb = model_from_posterior(model, posterior, where=where)
    matrix, options = loss if loss is not None else decision_loss(model, nb.classes)
    X, _ = model.table(batch, with_target=False)
    warn = warn or (lambda msg: print(f"bayescheck: warning: {msg}", file=sys.stderr))
    for j in nb.schema.categorical_features:
        f = nb.schema.feature_names[j]
        codes = encode_labels(X[f].to_numpy(dtype=object), nb.schema.categories[j])
        if (codes < 0).any():
            r = int(np.flatnonzero(codes < 0)[0])
            how = "gets the prior's mass" if model.smoothing else \
                "has probability 0 in every class and is left out"
            warn(f"{batch.name}, column '{f}', row {r + 1}: category {X[f].iloc[r]!r} never "
                 f"seen in training; it {how} ({int((codes < 0).sum())} row(s))")
    if len(X) == 0:
        raise DataError("no rows to predict", path=batch.name)
    for i, why in undefined_rows(nb, X):
        raise DataError(why, path=batch.name, row=i + 1)
    proba = nb.predict_proba(X)
    decision = bayes_decision(proba=proba, loss=matrix, options=options)
    return {**{f: X[f].to_numpy() for f in model.features},
            **decision_columns(nb.classes, proba, decision)}


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("naive_bayes", model=NaiveBayes, fit=fit_naive_bayes, predict=predict_naive_bayes,
           exact_draws=exact_draws_naive_bayes, on_cluster=True),
)
