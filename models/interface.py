"""What a model object provides, declared once: every model, and the optional abilities.

Model classes name the Protocols they implement as base classes (so a reader sees them in
the class line and ``isinstance`` answers without probing attributes); ``reports`` asks
``isinstance(model, Calibratable)`` and so on instead of ``hasattr``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from bayescheck.data.sources import DataSource

__all__ = ["Calibratable", "DeclaresSimulations", "FullDeclaration", "Model",
           "StartsAtEstimate"]


@runtime_checkable
class Model(Protocol):
    """Every model: a name (the spec's ``model`` value) and a PyMC declaration.

    Attributes
    ----------
    name : str
        The ``model = "..."`` value; :data:`bayescheck.models.registry.MODELS` maps it to its
        modules.
    sampler : str or None
        The sampler the declaration needs (``"pymc"`` for discrete parameters NUTS cannot
        move); None for the ``check`` command's choice.
    """

    name: ClassVar[str]
    sampler: ClassVar[str | None] = None

    def declare(self, source: DataSource | None, fit: Any = None) -> Any:
        """The PyMC model of ``source`` (conditioned on what ``fit`` holds fixed, if any)."""
        ...


@runtime_checkable
class Calibratable(Protocol):
    """A model whose engine has an exact posterior, so simulation-based calibration applies."""

    def calibration_model(self, fit: Any) -> Model:
        """The model calibrated, with what the fit on the spec's data holds fixed.

        ARD's hyperparameters, the label sets of categorical models; ``self`` when nothing is.
        """
        ...

    def simulated_frame(self, frame: pd.DataFrame, observed: dict) -> pd.DataFrame:
        """The spec's data with the observed columns replaced by one prior-predictive draw."""
        ...


@runtime_checkable
class DeclaresSimulations(Protocol):
    """A calibratable model that declares the simulations of its calibration itself.

    Its declaration of the spec's data may hold nothing to simulate from (a network whose
    missing cells are summed out in a potential), and one declaration with the data in
    ``pm.Data`` containers serves every simulation under NUTS, compiled once.
    """

    def prior_declaration(self, source: DataSource) -> Any:
        """The PyMC model of ``source``'s rows that the simulations are drawn from."""
        ...

    def declare_simulations(self, sources: Sequence[DataSource]) -> tuple[Any, list[dict]]:
        """One PyMC model for all ``sources`` and, per source, its ``model.set_data`` values."""
        ...


@runtime_checkable
class FullDeclaration(Protocol):
    """A model whose point estimates are judged against a declaration without them.

    ARD's ``declare`` is the exact conditional posterior given the estimated
    hyperparameters; ``declare_full`` puts hyperpriors on them instead.
    """

    def declare_full(self, source: DataSource, fit: Any = None) -> Any:
        """The PyMC model with the estimated quantities as free parameters."""
        ...


@runtime_checkable
class StartsAtEstimate(Protocol):
    """A model whose chains start at its analytic estimate, not at PyMC's default point.

    For a posterior with several modes (a mixture) the check judges the estimate against the
    mode it claims; chains started there explore that mode's neighbourhood, and a chain that
    leaves it shows another mode.
    """

    def initial_values(self, fit: Any) -> dict:
        """``pm.sample(initvals=...)`` for the model ``declare(..., fit=fit)`` returns.

        Values may be symbolic (a seeded random jitter), so that each chain, seeded
        differently, starts at its own point near the estimate.
        """
        ...
