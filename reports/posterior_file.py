"""``posterior.json``: written with a format version and a digest, read back validated.

:func:`sealed` adds ``"format"`` and ``"digest"`` (XXH3-128 of the document's canonical
JSON) to what ``fit`` and ``check`` write; :func:`read_posterior` is the one reader
(``predict``, the facade's ``predict``): it refuses, with exit 2 naming the file and the key,
a file of another format, one whose content no longer matches its digest (edited by hand or
damaged), and content that no fit writes: a wrongly typed entry, a NaN or an infinity
anywhere, a negative sd or variance, a covariance that is not positive
definite, a probability table whose rows do not sum to 1 (within 1e-9), states out of the
order the fit recorded, entries whose shapes, labels, counts or magnitudes no fit writes
(:mod:`.posterior_shapes`), or a fit of another shape than the spec's (``n_components``,
features, nodes). The exact posterior of a user's own PyMC model (``check_model``; its
``"model"`` is :data:`PYMC_MODEL`) is sealed and checked the same way, except that its
variables' names are the user's (no family's layout applies) and a moment the distribution
does not have (the sd of a Student-t with 2 degrees of freedom or fewer) is null.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from bayescheck.models.errors import BayescheckError

from .posterior_shapes import Bad, check_entries, labels, numbers, positive_definite
from .writers import clean_json, first_non_finite

__all__ = ["POSTERIOR_FORMAT", "PYMC_MODEL", "check_shape", "read_posterior", "sealed",
           "validate_posterior"]

#: The format of ``posterior.json``; a file of another format is refused.
POSTERIOR_FORMAT = 1
#: A probability table's rows sum to 1 within this.
SUM_TOLERANCE = 1e-9
#: Spec settings that decide the shape of a fit: a spec that differs there cannot use it.
SHAPE_SETTINGS = ("n_components", "covariance", "kinds", "intercept")
#: ``"model"`` of the exact posterior of a user's own PyMC model
#: (``bayescheck.inference.conjugacy.posterior.MODEL_NAME``, not imported here: reading a
#: posterior must not import the recognition and its PyMC-facing modules).
PYMC_MODEL = "pymc model"
#: Keys whose values are moments: numbers (or nested lists of numbers), finite.
_MOMENTS = ("mean", "sd", "cov", "estimate")


def _digest(document: dict) -> str:
    import xxhash

    body = {k: v for k, v in document.items() if k != "digest"}
    text = json.dumps(clean_json(body), sort_keys=True, allow_nan=False)
    return xxhash.xxh3_128_hexdigest(text.encode())


def sealed(document: dict) -> dict:
    """``document`` with its ``"format"`` and ``"digest"`` (the digest last)."""
    document = {**{k: v for k, v in document.items() if k not in ("format", "digest")},
                "format": POSTERIOR_FORMAT}
    document["digest"] = _digest(document)
    return document


def _probabilities(rows, key: str) -> None:
    rows = np.atleast_2d(rows)
    if (rows < 0).any() or (rows > 1).any():
        raise Bad(key, "a probability outside [0, 1]")
    sums = rows.sum(axis=-1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > SUM_TOLERANCE)
    if bad.size:
        raise Bad(f"{key}[{bad[0]}]" if rows.shape[0] > 1 else key,
                   f"probabilities sum to {sums[bad[0]]:.12g}, not 1")


def _cpt(entry: dict, key: str, states: dict) -> None:
    """A conditional probability table: rows of the parents' states in the recorded order."""
    table = "mean" if isinstance(entry.get("mean"), list) else "estimate"  # EM: estimates
    for name in ("states", "parents", "rows", table):
        if not isinstance(entry.get(name), list):
            raise Bad(f"{key}.{name}", f"expected a list, got {entry.get(name)!r:.60}")
    labels(entry["states"], f"{key}.states")
    if entry["parents"]:
        labels(entry["parents"], f"{key}.parents")
    mean = numbers(entry[table], f"{key}.{table}")
    if mean.ndim != 2 or mean.shape != (len(entry["rows"]), len(entry["states"])):
        raise Bad(f"{key}.{table}", f"expected {len(entry['rows'])} rows of "
                                     f"{len(entry['states'])} probabilities (rows x states)")
    _probabilities(mean, f"{key}.{table}")
    combos = [[]]
    for parent in entry["parents"]:
        if parent not in states:
            return  # a parent outside this table (the class of a semi-naive network)
        combos = [c + [f"{parent}={s}"] for c in combos for s in states[parent]]
    if entry["parents"] and [", ".join(c) for c in combos] != entry["rows"]:
        raise Bad(f"{key}.rows", "the rows are not the parents' states in the order the "
                                  "fit recorded them (states reordered?)")


def _walk(value, key: str, undefined: bool = False) -> None:
    """The checks that apply wherever the key appears (``undefined``: see :func:`_numbers`)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise Bad(key, "a key that is not a string")
            sub = f"{key}.{k}" if key else k
            if k in _MOMENTS and v is not None and not isinstance(v, dict):
                array = numbers(v, sub, undefined=undefined)
                if k == "sd" and (array < 0).any():
                    raise Bad(sub, "a negative standard deviation")
                if k == "cov" and array.ndim == 2:
                    positive_definite(array, sub)
            _walk(v, sub, undefined)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, f"{key}[{i}]", undefined)


def _parameters(parameters: dict) -> None:
    """The checks that depend on what the entry is."""
    network = parameters.get("network")
    cpts = parameters.get("cpts") or (network.get("cpts") if isinstance(network, dict) else None)
    if isinstance(cpts, dict):
        where = "cpts" if "cpts" in parameters else "network.cpts"
        states = {n: e.get("states") for n, e in cpts.items() if isinstance(e, dict)}
        for node, entry in cpts.items():
            if not isinstance(entry, dict):
                raise Bad(f"parameters.{where}.{node}", "expected a table")
            _cpt(entry, f"parameters.{where}.{node}", states)
    for name, entry in parameters.items():
        key = f"parameters.{name}"
        if name in ("sigma2",) and isinstance(entry, dict):
            for k in ("mean", "value", "shape", "scale"):
                if k in entry and not numbers(entry[k], f"{key}.{k}", ()) > 0:
                    raise Bad(f"{key}.{k}", f"expected a positive number, got {entry[k]!r}")
        if name == "sds" and isinstance(entry, dict):
            if (numbers(entry.get("estimate"), f"{key}.estimate") <= 0).any():
                raise Bad(f"{key}.estimate", "a standard deviation that is not positive")
        if name == "covariances" and isinstance(entry, dict):
            # one D x D matrix per component
            for i, cov in enumerate(numbers(entry.get("estimate"), f"{key}.estimate",
                                            (None, None, None))):
                positive_definite(cov, f"{key}.estimate[{i}]")
        if name == "weights" and isinstance(entry, dict):
            _probabilities(numbers(entry.get("estimate"), f"{key}.estimate"),
                           f"{key}.estimate")
        if name == "class_prior" and isinstance(entry, dict):
            _probabilities(numbers(list(entry.values()), key), key)
        if name == "features" and isinstance(entry, dict):
            for feature, f in entry.items():
                if isinstance(f, dict) and f.get("kind") == "categorical":
                    _categorical(f, f"{key}.{feature}")


def _categorical(entry: dict, key: str) -> None:
    categories = entry.get("categories")
    probabilities = entry.get("probabilities")
    if not isinstance(categories, list) or not isinstance(probabilities, dict):
        raise Bad(key, "expected 'categories' (a list) and 'probabilities' (a table)")
    for c, row in probabilities.items():
        if not isinstance(row, dict) or list(row) != categories:
            raise Bad(f"{key}.probabilities.{c}", "the categories are not those of "
                                                   f"{key}.categories, in that order")
        _probabilities(numbers(list(row.values()), f"{key}.probabilities.{c}"),
                       f"{key}.probabilities.{c}")


def validate_posterior(document, where: str, spec=None) -> dict:
    """Check a ``posterior.json`` document (see the module's description); return it.

    Parameters
    ----------
    document : object
        The parsed JSON.
    where : str
        The file, for messages.
    spec : models.Spec, optional
        The spec that will use the fit: its shape settings must be the fit's.

    Raises
    ------
    BayescheckError
        Naming ``where`` and the key.
    """
    def refuse(key: str, why: str):
        return BayescheckError(f"{where}: key '{key}': {why}; fit again with 'bayescheck "
                               f"fit' (posterior.json is written by bayescheck and not "
                               f"meant to be edited)")

    if not isinstance(document, dict):
        raise BayescheckError(f"{where}: not a posterior written by 'bayescheck fit' (not a "
                              f"JSON object)")
    if document.get("format") != POSTERIOR_FORMAT:
        raise refuse("format", f"expected format {POSTERIOR_FORMAT}, got "
                               f"{document.get('format')!r} (written by another version?)")
    if not isinstance(document.get("digest"), str):
        raise refuse("digest", "missing or not a string")
    try:
        digest = _digest(document)
    except (TypeError, ValueError):
        digest = None
    if digest != document["digest"]:
        raise refuse("digest", "the content does not match its digest: the file was "
                               "edited or damaged")
    # bayescheck writes null for a NaN or an infinity (strict JSON), so a NaN, Infinity or a
    # number beyond float64 anywhere (a count, a setting, not only a moment) was put there
    # by hand; the digest skips them as null, so they are refused here
    non_finite = first_non_finite(document)
    if non_finite is not None:
        raise refuse(non_finite, "a NaN or an infinity, which bayescheck never writes")
    if not isinstance(document.get("model"), str):
        raise refuse("model", "expected the model's name")
    if not isinstance(document.get("parameters"), dict):
        raise refuse("parameters", "expected a table")
    users = document["model"] == PYMC_MODEL
    try:
        _walk(document["parameters"], "parameters", undefined=users)
        if document.get("log_evidence") is not None:
            numbers(document["log_evidence"], "log_evidence")
        if not users:  # a spec family's layout; a user's model names its own variables
            _parameters(document["parameters"])
            check_entries(document["model"], document["parameters"], document.get("n_rows"))
    except Bad as bad:
        raise refuse(bad.key, bad.why) from None
    if spec is not None and document["model"] != spec.model.name:
        raise BayescheckError(f"{where}: holds a {document['model']!r} fit, the spec is "
                              f"{spec.model.name!r}")
    if spec is not None:
        check_shape(document, spec, where)
    return document


def check_shape(document: dict, spec, where: str) -> None:
    """Refuse a fit whose shape settings (:data:`SHAPE_SETTINGS`) differ from ``spec``'s."""
    from .fit_summary import model_settings

    settings = document.get("settings")
    saved = settings.get("model") if isinstance(settings, dict) else None
    if settings is not None and not isinstance(saved, dict):
        raise BayescheckError(f"{where}: key 'settings.model': expected a table, got "
                              f"{saved!r:.60}; fit again with 'bayescheck fit'")
    saved = saved or {}
    now = model_settings(spec)["model"]
    for key in SHAPE_SETTINGS:
        if key in saved and key in now and clean_json(saved[key]) != clean_json(now[key]):
            raise BayescheckError(f"{where}: key 'settings.model.{key}': the fit has "
                                  f"{saved[key]!r}, the spec {spec.path} has {now[key]!r}; "
                                  f"fit again with this spec")


def read_posterior(folder: str | Path, spec=None, *, option: str = "--model-from") -> dict:
    """Read and validate ``FOLDER/posterior.json`` (:func:`validate_posterior`).

    Parameters
    ----------
    folder : str or pathlib.Path
        The ``--out`` folder of ``bayescheck fit``.
    spec : models.Spec, optional
        The spec that will use the fit.
    option : str
        The option that named the folder, for messages.

    Raises
    ------
    BayescheckError
        A folder that is not one, a missing or unreadable file, or a posterior that fails
        validation, naming the file and the key.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise BayescheckError(f"{option} {folder}: is a file; name the folder that holds "
                              f"posterior.json (the --out of 'bayescheck fit')")
    where = folder / "posterior.json"
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BayescheckError(f"{where}: not found; run 'bayescheck fit SPEC --out "
                              f"{folder}' first") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BayescheckError(f"{where}: cannot read: {exc}") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise BayescheckError(f"{where}: not JSON: {exc}") from None
    return validate_posterior(document, str(where), spec)
