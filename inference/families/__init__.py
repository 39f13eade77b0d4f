"""One glue module per ``models/<name>.py``, of the same name: spec + data -> engine -> fit.

Model ``name`` is fitted by ``fit_<name>(spec, *, out, resume, progress)`` in the module that
:data:`models.registry.MODELS` names for it (see :func:`inference.dispatch.engine`).
"""
