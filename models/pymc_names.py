"""Names of PyMC variables and dims built from the user's node, feature and query names.

PyMC refuses a variable name holding ``/`` or ending in ``:``, and netCDF-4 (``posterior.nc``)
reads ``/`` as a path of groups. A user's name may hold both (a column ``km/h``, a query
``q:``), while every other character (``..``, a leading ``.``, a backslash, any unicode) is
accepted by both. So every name a declaration builds from a user's name goes through
:func:`escaped`: ``%``, ``/`` and ``:`` are written as ``%25``, ``%2F`` and ``%3A``, which
keeps distinct names distinct and leaves every other name as written (``cpt_smoke`` stays
``cpt_smoke``). A variable named after two names (AODE's ``cond_<super-parent>_<feature>``)
also writes ``_`` inside each name as ``%5F``: otherwise features ``a_b`` and ``c`` would give
the name of ``a`` and ``b_c`` (both ``cond_a_b_c``). Reports show the user's name (the oracles'
display names); only the variables and dims of the PyMC model and of ``posterior.nc`` carry
the escaped one.
"""

from __future__ import annotations

__all__ = ["dim", "escaped", "variable"]

_ESCAPES = str.maketrans({"%": "%25", "/": "%2F", ":": "%3A"})
#: Inside one of several names joined by ``_``: ``_`` too, so the join reads back one way.
_JOINED_ESCAPES = str.maketrans({"%": "%25", "/": "%2F", ":": "%3A", "_": "%5F"})


def escaped(name: str) -> str:
    """``name`` with ``%``, ``/`` and ``:`` percent-encoded (any other text unchanged)."""
    return str(name).translate(_ESCAPES)


def variable(prefix: str, *names: str) -> str:
    """A variable's name: ``prefix`` then each name, escaped, joined by ``_``.

    ``variable("cpt", "km/h")`` is ``"cpt_km%2Fh"``; ``variable("cond", "s", "f")`` is
    ``"cond_s_f"``. With several names, a ``_`` inside one is written ``%5F``, so distinct
    names give distinct variables: ``variable("cond", "a_b", "c")`` is ``"cond_a%5Fb_c"``,
    ``variable("cond", "a", "b_c")`` is ``"cond_a_b%5Fc"``.
    """
    if len(names) > 1:
        return "_".join((prefix, *(str(n).translate(_JOINED_ESCAPES) for n in names)))
    return "_".join((prefix, *(escaped(n) for n in names)))


def dim(name: str, role: str) -> str:
    """A dim's name: the escaped ``name``, ``__`` and ``role`` (``"smoke__parents"``)."""
    return f"{escaped(name)}__{role}"
