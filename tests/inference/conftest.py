"""Fixtures shared by the tests of the NUTS path choice."""

import pytest


class StopSampling(Exception):
    """Raised in place of nutpie's sampling: the path was chosen, nothing is sampled."""


class Paths(list):
    """Paths compiled for, in order."""

    stop = StopSampling


@pytest.fixture
def chosen_paths(monkeypatch):
    """The NUTS paths ``nuts_budget`` compiles for, in order; sampling raises StopSampling.

    The list has the exception class as attribute ``stop`` (tests import no conftest).
    """
    import nutpie
    from bayescheck.inference import nuts_budget

    compiled = Paths()
    monkeypatch.setattr(nuts_budget, "compile_for_nutpie",
                        lambda model, initvals=None, backend=None, store=True:
                        compiled.append(backend) or (object(), backend))

    def sample(_compiled, **_kwargs):
        raise StopSampling

    monkeypatch.setattr(nutpie, "sample", sample)
    return compiled


@pytest.fixture
def auto_without_cache(monkeypatch):
    """``auto`` with Numba reuse on, nothing abandoned and no model's compile on disk."""
    from bayescheck.inference import nuts_budget

    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setenv("BAYESCHECK_NUMBA_REUSE", "1")
    monkeypatch.setattr(nuts_budget, "_ABANDONED", {})
    monkeypatch.setattr(nuts_budget, "is_cached", lambda digest: False)
