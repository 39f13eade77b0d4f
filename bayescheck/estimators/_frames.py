"""Data frames in and out of the categorical classifiers: categories per column, as text.

A column of ``X`` is one of two things. *Category codes*: integers ``0, 1, ...`` (numbers in
a numpy array or a numeric column of a DataFrame), as scikit-learn's CategoricalNB takes.
*Categories*: text (str columns, numpy arrays of str or object) or a pandas categorical.
Categories are encoded as scikit-learn's ``OrdinalEncoder`` does: the sorted distinct values
of the column, or a pandas categorical's declared categories in their declared order (unused
ones included); the estimator keeps them per column (``categories_``) and applies them to
the rows it is given later. A code column's categories are ``0 .. n_categories_ - 1``.

``partial_fit`` appends a category first seen in a later batch after those known, so the
codes of earlier batches stay valid. At prediction a category never seen in fitting gets the
code ``len(categories_[j])``, beyond those known: every classifier already treats such a code
as its spec counterpart treats an unseen category (naive Bayes: the prior's mass of an unseen
category; semi-naive Bayes: left out of the row's score; networks: summed out), and a warning
names the column, the value and how many rows have it.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["FrameOutputMixin", "categories_of", "category_table", "declared_sizes"]

_TEXT = ("string", "bytes")
_MIXED = ("mixed", "mixed-integer")


def _is_frame(X) -> bool:
    return hasattr(X, "iloc") and hasattr(X, "columns")


def _has_text(X) -> bool:
    """A DataFrame with a non-numeric column, or an array of str or object."""
    import pandas as pd

    if _is_frame(X):
        return any(isinstance(d, pd.CategoricalDtype)
                   or not (pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d))
                   for d in X.dtypes)
    if hasattr(X, "toarray"):
        return False  # sparse: the numeric path refuses it
    try:
        kind = np.asarray(X).dtype.kind
    except (TypeError, ValueError):  # ragged: the numeric path says so
        return False
    return kind in "OUS"


def _columns(X) -> list:
    """The columns of ``X`` (a DataFrame's Series, else the columns of a 2-d object array)."""
    if _is_frame(X):
        return [X.iloc[:, j] for j in range(X.shape[1])]
    arr = np.asarray(X, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"Expected a 2D array, got a {arr.ndim}D array instead: reshape "
                         f"your data (one row per case, one column per feature)")
    return [arr[:, j] for j in range(arr.shape[1])]


def _values(column) -> tuple[np.ndarray, np.ndarray, str]:
    """The column's cells as an object array, its missing cells, and what it holds.

    What: ``"categorical"`` (a pandas categorical), ``"text"`` or ``"codes"``.
    """
    import pandas as pd

    dtype = getattr(column, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype):
        values = column.to_numpy(dtype=object)
        return values, np.asarray(pd.isna(values), bool), "categorical"
    if dtype is not None and (pd.api.types.is_numeric_dtype(dtype)
                              or pd.api.types.is_bool_dtype(dtype)):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        return values, np.isnan(values), "codes"
    values = np.asarray(column, dtype=object)
    missing = np.asarray(pd.isna(values), bool)
    inferred = pd.api.types.infer_dtype(values[~missing], skipna=True)
    if inferred in _TEXT:
        return values, missing, "text"
    if inferred in _MIXED and any(isinstance(v, (str, bytes)) for v in values[~missing]):
        return values, missing, "mixed"
    return values, missing, "codes"


def _code_column(values: np.ndarray, missing: np.ndarray, name: str,
                 allow_nan: bool) -> np.ndarray:
    """A column of category codes as int64 (-1 where missing), checked."""
    numbers = np.asarray(values, dtype=np.float64)  # a dict or list here is a TypeError
    missing = missing | np.isnan(numbers)
    if missing.any() and not allow_nan:
        raise ValueError(f"Input X contains NaN: column {name!r}, row "
                         f"{int(np.flatnonzero(missing)[0]) + 1}")
    present = numbers[~missing]
    if not np.all(np.isfinite(present)):
        raise ValueError(f"Input X contains infinity: column {name!r}")
    if np.any(present < 0):
        raise ValueError(f"Negative values in data: column {name!r} must hold category codes "
                         f"0, 1, ... or categories (text or a pandas categorical)")
    bad = present != np.floor(present)
    if np.any(bad):
        raise ValueError(f"column {name!r} holds {float(present[bad][0])!r}, not a category code "
                         f"(an integer 0, 1, ...): give categories as text or a pandas "
                         f"categorical, or encode the column with "
                         f"sklearn.preprocessing.OrdinalEncoder")
    codes = np.where(missing, 0, numbers).astype(np.int64)
    codes[missing] = -1
    return codes


def _sorted_categories(values: np.ndarray, name: str) -> np.ndarray:
    try:
        return np.asarray(sorted(set(values.tolist())), dtype=object)
    except TypeError:  # values that do not compare (str with bytes)
        raise ValueError(f"column {name!r} mixes values that cannot be sorted into one order "
                         f"(for example {values[0]!r}): make the column one type, or a pandas "
                         f"categorical with its categories declared") from None


def _new_categories(column, values, missing, what, name, known) -> np.ndarray:
    """The column's categories not among ``known``: in declared order, else sorted."""
    import pandas as pd

    if what == "categorical":  # declared order, unused categories included
        candidates = np.asarray(column.cat.categories.to_numpy(dtype=object), dtype=object)
    else:
        candidates = _sorted_categories(values[~missing], name)
    if known is None:
        return candidates
    return candidates[pd.Index(known).get_indexer(candidates) < 0]


def category_table(estimator, X, y=None, *, reset: bool, fit: bool = False,
                   allow_nan: bool = False, unseen: str = "is treated as an unseen category"):
    """``X`` (``fit``: ``(X, y)``) as int64 category codes, text columns encoded.

    Parameters
    ----------
    estimator : the classifier; keeps ``_column_categories`` (per column the categories, or
        None for a code column), ``n_features_in_`` and ``feature_names_in_``.
    reset : bool
        Forget the categories known (``fit``, the first ``partial_fit``).
    fit : bool
        Rows to learn from: ``y`` is validated, and new categories are appended (``partial_fit``
        after the first call).
    allow_nan : bool
        A missing cell (NaN, None) becomes the code -1; otherwise it is refused.
    unseen : str
        At prediction, what the classifier does with a category never seen (for the warning).

    Raises
    ------
    ValueError
        A missing cell (without ``allow_nan``), a negative or fractional code (naming the column
        and saying to encode with ``OrdinalEncoder``), a column mixing text and numbers, a text
        column given where codes were fitted, a row count that differs from ``y``'s.
    """
    from sklearn.utils.validation import check_consistent_length, column_or_1d, validate_data

    from ._base import category_codes

    known = None if reset else getattr(estimator, "_column_categories", None)
    if not _has_text(X) and (known is None or all(c is None for c in known)):
        out = category_codes(estimator, X, y, reset=reset, fit=fit, allow_nan=allow_nan)
        if reset or known is None:
            estimator._column_categories = [None] * estimator.n_features_in_
        return out
    if not _is_frame(X):
        X = np.asarray(X, dtype=object)
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    columns = _columns(X)
    if len(columns[0]) == 0 if columns else True:
        raise ValueError(f"Found array with 0 sample(s) (shape={np.shape(X)}) while a minimum "
                         f"of 1 is required by {type(estimator).__name__}.")
    names = [str(n) for n in getattr(estimator, "feature_names_in_", [])] or \
        [f"x{j}" for j in range(len(columns))]
    known = [None] * len(columns) if known is None else list(known)
    codes = np.empty((len(columns[0]), len(columns)), np.int64)
    for j, column in enumerate(columns):
        codes[:, j], known[j] = _encode_column(
            column, names[j], known[j], first=reset, fit=fit, allow_nan=allow_nan,
            unseen=unseen)
    if reset or fit:
        estimator._column_categories = known
    if not fit:
        return codes
    y = column_or_1d(y, warn=True)
    check_consistent_length(codes, y)
    return codes, y


def _encode_column(column, name, known, *, first, fit, allow_nan, unseen):
    """One column's codes and its categories (None: a code column)."""
    import pandas as pd

    values, missing, what = _values(column)
    if what == "mixed":
        kinds = sorted({type(v).__name__ for v in values[~missing]})
        raise ValueError(f"column {name!r} mixes text and numbers ({', '.join(kinds)}): make "
                         f"it one type (text, or integer codes 0, 1, ...), or encode it with "
                         f"sklearn.preprocessing.OrdinalEncoder")
    if not first and known is None:
        if what != "codes":
            raise ValueError(f"column {name!r} was fitted on category codes (integers 0, 1, "
                             f"...) and is now given categories ({values[~missing][0]!r}): "
                             f"give the same kind of column as in fitting")
        return _code_column(values, missing, name, allow_nan), None
    if first and what == "codes":
        return _code_column(values, missing, name, allow_nan), None
    if missing.any() and not allow_nan:
        raise ValueError(f"column {name!r}, row {int(np.flatnonzero(missing)[0]) + 1}: a "
                         f"missing value; {'fit' if fit else 'predict'} needs every cell of "
                         f"this classifier (BayesianNetworkClassifier sums missing cells out)")
    if first or fit:
        fresh = _new_categories(column, values, missing, what, name, None if first else known)
        known = fresh if first else np.concatenate([known, fresh]).astype(object)
    idx = pd.Index(known).get_indexer(values)
    new = (idx < 0) & ~missing
    if new.any():  # only at prediction: fitting added every category it saw
        first_new = values[new][0]
        warnings.warn(f"column {name!r}: category {first_new!r} was never seen in fitting "
                      f"({int(new.sum())} row(s) with a new category); it {unseen}",
                      UserWarning, stacklevel=4)
        idx = np.where(new, len(known), idx)
    return np.where(missing, -1, idx).astype(np.int64), known


def declared_sizes(estimator) -> np.ndarray:
    """Per column the number of categories known (0 for a code column)."""
    return np.array([0 if c is None else len(c)
                     for c in getattr(estimator, "_column_categories", None)
                     or [None] * estimator.n_features_in_], np.int64)


def categories_of(estimator, n_categories) -> list[np.ndarray]:
    """``categories_``: per column its categories, or ``arange(n_categories_[j])`` for codes."""
    cats = getattr(estimator, "_column_categories", None) or [None] * len(n_categories)
    return [np.arange(int(n)) if c is None else np.asarray(c).copy()
            for c, n in zip(cats, n_categories, strict=True)]


class FrameOutputMixin:
    """``predict_frame``: the class probabilities of a DataFrame's rows, under its index."""

    def predict_frame(self, X):
        """Class probabilities and the most probable class of each row, as a DataFrame.

        ``predict_proba`` and ``predict`` return numpy arrays whatever ``X`` is, as
        scikit-learn's tools expect of a classifier (its scorers slice ``predict_proba(X)[:,
        k]``, which a DataFrame refuses). This method keeps the rows' labels.

        Parameters
        ----------
        X : DataFrame or array_like
            The rows, as for :meth:`predict_proba`.

        Returns
        -------
        pandas.DataFrame
            Indexed as ``X`` (a DataFrame; else ``0 .. n-1``), with a column ``p_<class>`` per
            class in ``classes_`` order and ``most_probable``, the class of highest
            probability.
        """
        import pandas as pd

        proba = self.predict_proba(X)
        index = X.index if _is_frame(X) else None
        frame = pd.DataFrame(proba, index=index, columns=[f"p_{c}" for c in self.classes_])
        frame["most_probable"] = self.classes_[np.argmax(proba, axis=1)]
        return frame
