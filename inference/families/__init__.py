"""One glue module per ``models/<name>.py``, of the same name: spec + data -> engine -> fit.

Model ``name`` is fitted by ``fit_<name>(spec, *, out, resume, progress)`` in the module that
:data:`bayescheck.models.registry.MODELS` names for it (see :func:`bayescheck.inference.dispatch.engine`).
"""
