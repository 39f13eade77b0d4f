"""Reading a TOML spec: the generic part every model family shares.

A spec names a model and carries sections (``[data]``, ``[prior]``, ``[sampling]``, ...).
:func:`load_spec` reads the file, checks the top level and hands the sections to the model
family named by ``model``, which validates its own keys through :class:`Section`. Every
error names the file and the dotted key; an unknown key also lists the valid ones.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import validation
from .errors import SpecError
from .interface import Model
from .resources import check_sampler_setting

if TYPE_CHECKING:
    from bayescheck.data.sources import DataSource

__all__ = ["Section", "SamplingConfig", "Spec", "load_spec", "read_toml"]

_MISSING = object()


class Section:
    """A table of a spec whose keys are consumed one by one, then checked for leftovers.

    Parameters
    ----------
    table : dict
        The TOML table.
    name : str
        Its dotted name in the spec (``"prior"``), used in error messages.
    path : pathlib.Path or None
        The spec file, used in error messages.
    defaulted : list of str, optional
        Where the dotted names of absent keys that were given a default are appended; a
        subsection shares its parent's list, so the root's :attr:`defaulted` ends up naming
        every default applied while reading the spec.
    """

    def __init__(self, table: dict | None, name: str, path: Path | None,
                 defaulted: list[str] | None = None):
        if table is not None and not isinstance(table, dict):
            raise SpecError(f"expected a table [{name}], got {type(table).__name__}",
                            path=path, key=name)
        self.table = dict(table or {})
        self.name = name
        self.path = path
        self._known: list[str] = []
        self.defaulted: list[str] = [] if defaulted is None else defaulted

    def key(self, key: str) -> str:
        """Return the dotted name of ``key`` in this section."""
        return f"{self.name}.{key}" if self.name else key

    def error(self, key: str, message: str) -> SpecError:
        """Build a :class:`SpecError` about ``key`` of this section."""
        return SpecError(message, path=self.path, key=self.key(key))

    def __contains__(self, key: str) -> bool:
        return key in self.table

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        """Consume ``key`` and return its value as written, or ``default`` when absent."""
        self._known.append(key)
        if key in self.table:
            return self.table[key]
        if default is _MISSING:
            raise self.error(key, "is required")
        if self.key(key) not in self.defaulted:
            self.defaulted.append(self.key(key))
        return default

    def string(self, key: str, default: Any = _MISSING, *, choices=None) -> Any:
        """Consume a string value, optionally one of ``choices``."""
        value = self.raw(key, default)
        if value is default and key not in self.table:
            return value
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {value!r}")
        if choices is not None and value not in choices:
            raise self.error(key, f"expected one of {', '.join(map(repr, choices))}, "
                                  f"got {value!r}")
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> Any:
        """Consume a boolean value."""
        value = self.raw(key, default)
        if key in self.table and not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def number(self, key: str, default: Any = _MISSING, *, positive: bool = False,
               integer: bool = False, minimum: float | None = None) -> Any:
        """Consume a finite number (optionally a positive one, or an integer >= ``minimum``)."""
        value = self.raw(key, default)
        if key not in self.table:
            return value
        kind = "an integer" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                integer and not isinstance(value, int)):
            raise self.error(key, f"expected {kind}, got {value!r}")
        if not math.isfinite(value):
            raise self.error(key, f"expected a finite number, got {value!r}")
        if positive and value <= 0:
            raise self.error(key, f"expected a positive number, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"expected {kind} >= {minimum}, got {value!r}")
        return value

    def strings(self, key: str, default: Any = _MISSING) -> Any:
        """Consume a list of strings."""
        value = self.raw(key, default)
        if key not in self.table:
            return value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, f"expected a list of strings, got {value!r}")
        if len(set(value)) != len(value):
            raise self.error(key, f"names must be unique, got {value!r}")
        return value

    def array(self, key: str, default: Any = _MISSING) -> Any:
        """Consume a number, a list of numbers or a list of lists as a float64 array."""
        value = self.raw(key, default)
        if key not in self.table:
            return value
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.error(key, f"expected a number, a list of numbers or a list of lists "
                                  f"of numbers of equal length, got {value!r}") from None
        if not np.all(np.isfinite(arr)):
            raise self.error(key, f"expected finite numbers, got {value!r}")
        return arr

    def covariance(self, key: str, dim: int, default: Any = _MISSING) -> Any:
        """Consume a ``dim x dim`` covariance.

        It is a positive number (times the identity), a list of positive numbers (the
        diagonal) or a symmetric positive definite list of lists.
        """
        value = self.array(key, default)
        if key not in self.table:
            return value
        try:
            return validation.covariance(value, dim, key)
        except validation.InvalidArgument as exc:
            raise self.error(key, exc.message) from None

    def subsection(self, key: str) -> Section:
        """Consume a nested table as a :class:`Section` (empty when absent)."""
        self._known.append(key)
        return Section(self.table.get(key), self.key(key), self.path, self.defaulted)

    def tables(self, key: str, expected: str) -> list[Section]:
        """Consume an array of tables ``[[key]]`` as one :class:`Section` each, ``key[i]``.

        Absent: no tables. A single ``[key]`` table counts as one. Anything else raises,
        ``expected <expected>, got <value>``.
        """
        raw = self.raw(key, [])
        if isinstance(raw, dict):
            raw = [raw]
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            raise self.error(key, f"expected {expected}, got {raw!r}")
        return [Section(t, f"{key}[{i}]", self.path) for i, t in enumerate(raw)]

    def finish(self) -> None:
        """Raise on keys that were never consumed, naming the valid ones."""
        unknown = [k for k in self.table if k not in self._known]
        if unknown:
            valid = ", ".join(sorted(set(self._known))) or "(none)"
            raise self.error(unknown[0], f"unknown key; valid keys here are: {valid}")


@dataclass(frozen=True)
class SamplingConfig:
    """NUTS settings: from ``[sampling]``, overridable on the command line."""

    draws: int = 1000
    tune: int = 1000
    chains: int = 4
    seed: int = 0
    #: The mass matrix NUTS adapts: one of :data:`ADAPTATIONS`.
    adaptation: str = "diag"

    @classmethod
    def from_section(cls, section: Section) -> SamplingConfig:
        """Read ``[sampling]`` (every key optional)."""
        config = cls(
            draws=section.number("draws", cls.draws, integer=True, minimum=1),
            tune=section.number("tune", cls.tune, integer=True, minimum=0),
            chains=section.number("chains", cls.chains, integer=True, minimum=1),
            seed=section.number("seed", cls.seed, integer=True, minimum=0),
            adaptation=section.string("adaptation", cls.adaptation, choices=ADAPTATIONS),
        )
        for name in ("draws", "tune", "chains"):
            check_sampler_setting(name, getattr(config, name), path=section.path,
                                  key=section.key(name))
        if config.seed > MAX_SEED:
            raise section.error("seed", seed_message(config.seed))
        section.finish()
        return config


#: Mass-matrix adaptations: the diagonal every NUTS sampler adapts, and nutpie's diagonal plus
#: a low-rank correction along strongly correlated directions.
ADAPTATIONS = ("diag", "low_rank")

#: Largest seed: the samplers (nutpie's Rust, numpy's generators as the checks use them)
#: take a 64-bit unsigned seed, and a larger one is refused rather than reduced.
MAX_SEED = 2**64 - 1


def seed_message(seed: int) -> str:
    """The refusal of a seed above :data:`MAX_SEED`."""
    return (f"expected a whole number from 0 to 2^64 - 1 = {MAX_SEED} (the samplers take a "
            f"64-bit seed), got {seed}")


@dataclass(frozen=True)
class Spec:
    """A validated spec: the model object, where its data live and how to sample it.

    Attributes
    ----------
    model : models.interface.Model
        The model object (for example :class:`bayescheck.models.LinearRegression`).
    data : models.DataSource
        Where the data come from.
    sampling : SamplingConfig
        NUTS settings.
    path : pathlib.Path or None
        The spec file (None when built from Python).
    raw : dict
        The TOML as read, for the report.
    defaults : tuple of str
        The dotted spec keys that were absent and given their default (filled by
        :func:`load_spec`; empty for a spec built in Python, whose model object holds every
        value it uses).
    """

    model: Model
    data: DataSource | None
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    path: Path | None = None
    raw: dict = field(default_factory=dict)
    defaults: tuple[str, ...] = ()

    def text(self) -> str:
        """The spec as the user wrote it.

        The file's text, or ``raw`` as JSON for a spec built in Python.
        """
        if self.path:
            return Path(self.path).read_text()
        return json.dumps(self.raw, indent=2, default=str)


def read_toml(path: str | Path) -> dict:
    """Read a TOML file, turning every failure into a :class:`SpecError` naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError("spec file not found", path=path) from None
    except IsADirectoryError:
        raise SpecError("is a directory, expected a TOML spec file", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", path=path) from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                        f"{exc.start}); TOML files are UTF-8: re-save it as UTF-8",
                        path=path) from None
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror}", path=path) from None


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file.

    Parameters
    ----------
    path : str or pathlib.Path
        The TOML file. Data paths inside it are relative to its folder.

    Returns
    -------
    Spec
        The model object, its data source and the sampling settings.

    Raises
    ------
    SpecError
        On any problem, naming the file and the key.
    """
    from .registry import spec_reader

    path = Path(path)
    raw = read_toml(path)
    top = Section(raw, "", path)
    name = top.string("model")
    make = spec_reader(name, path=path)
    spec = make(top, path)
    top.finish()
    return replace(spec, defaults=tuple(top.defaulted))
