"""Finding the PyMC model a Python file defines (``bayescheck check model.py``)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from bayescheck.models.errors import BayescheckError

__all__ = ["find_model_file", "load_model_file"]


def load_model_file(path, name: str | None = None):
    """Run a Python file and return the ``pm.Model`` it defines.

    As :func:`find_model_file`, the model alone.
    """
    return find_model_file(path, name)[1]


def find_model_file(path, name: str | None = None) -> tuple:
    """Run a Python file and return the ``pm.Model`` it defines, with its name there.

    The file is run as a script would be (its folder first on the import path, so that it
    can import its neighbours), under the module name ``__bayescheck__``, so code under
    ``if __name__ == "__main__":`` does not run.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    name : str, optional
        The name the model is bound to in the file; needed when it defines several.

    Returns
    -------
    name : str
        The name the model is bound to in the file.
    model : pymc.Model

    Raises
    ------
    bayescheck.BayescheckError
        Naming the file: it is missing, it raised, it defines no model, several models and
        no ``name``, or ``name`` is not a model.
    """
    import pymc as pm

    path = Path(path)
    if not path.is_file():
        raise BayescheckError(f"{path}: no such file")
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        namespace = runpy.run_path(str(path), run_name="__bayescheck__")
    except Exception as exc:  # the user's code: any error is theirs to see
        raise BayescheckError(f"{path}: running it raised {type(exc).__name__}: {exc}") from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    models: dict = {}
    for key, value in namespace.items():
        if isinstance(value, pm.Model) and not key.startswith("_"):
            models.setdefault(id(value), (key, value))
    found = sorted(models.values(), key=lambda kv: kv[0])
    if name is not None:
        value = namespace.get(name)
        if isinstance(value, pm.Model):
            return name, value
        known = ", ".join(k for k, _ in found) or "none"
        raise BayescheckError(f"{path}: --model {name}: no pm.Model of that name (models "
                              f"defined: {known})")
    if not found:
        raise BayescheckError(f"{path}: defines no pm.Model at top level (bind it to a name: "
                              f"'with pm.Model() as model:')")
    if len(found) > 1:
        raise BayescheckError(f"{path}: defines {len(found)} models "
                              f"({', '.join(k for k, _ in found)}); choose one with --model "
                              f"NAME")
    return found[0]
