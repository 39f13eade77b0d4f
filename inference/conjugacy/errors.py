"""The refusal: a model, or a part of it, that has no exact conjugate posterior here."""

from __future__ import annotations

from bayescheck.models.errors import BayescheckError

__all__ = ["NotConjugate"]


class NotConjugate(BayescheckError):
    """The model is not one whose posterior :func:`bayescheck.exact` can give exactly.

    The message names the first variable that breaks conjugacy and why, so that the user
    can change that line (exit code 2 on the command line).

    Attributes
    ----------
    variable : str
        The variable that breaks it.
    reason : str
        Why, in words.
    conjugate : list of str
        Variables of the model that are conjugate nevertheless (a partly conjugate model);
        empty when none or not known.
    """

    def __init__(self, variable: str, reason: str, conjugate: list | None = None):
        self.variable = variable
        self.reason = reason
        self.conjugate = list(conjugate or [])
        # a reason may open with the variable's declaration ("sigma ~ HalfNormal: ...")
        message = reason if reason.startswith(f"{variable} ") else f"{variable}: {reason}"
        if self.conjugate:
            message += f" (conjugate elsewhere in the model: {', '.join(self.conjugate)})"
        super().__init__(message)
