"""A network fit's CPTs as pandas tables, and as pgmpy's ``TabularCPD``.

A fit of ``bayesian_network`` (and the SPODE / TAN network of ``semi_naive_bayes``) keeps each
node's CPT in ``posterior.json`` as lists with row labels ``"A=x, B=y"``. Here the same
numbers are a :class:`pandas.DataFrame` per node: one row per configuration of the parents
(a :class:`pandas.MultiIndex` of their states, the last parent varying fastest), one column
per state of the node; the entries are the posterior means (with missing cells, EM's
estimate). pandas and pgmpy are imported inside the functions that need them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["cpt_table", "network_cpts", "tabular_cpd", "to_pgmpy"]


def network_cpts(parameters: dict) -> dict:
    """The CPT entries of a network fit's parameters (``posterior.json``'s ``parameters``).

    Raises
    ------
    ValueError
        A fit without network CPTs (another model, or AODE).
    """
    if "cpts" in parameters:
        return parameters["cpts"]
    if "network" in parameters:
        return parameters["network"]["cpts"]
    raise ValueError("this fit has no network CPTs: cpt(node) needs a bayesian_network fit, "
                     "or a semi_naive_bayes fit of kind spode or tan")


def _entry(cpts: dict, node: str) -> dict:
    if node not in cpts:
        raise KeyError(f"{node!r} is not a node of the network; its nodes are "
                       f"{', '.join(cpts)}")
    return cpts[node]


def _values(entry: dict) -> np.ndarray:
    """The posterior means, or EM's estimate when cells were missing, ``(rows, states)``."""
    return np.asarray(entry["estimate"] if "estimate" in entry else entry["mean"], float)


def cpt_table(parameters: dict, node: str) -> pd.DataFrame:
    """Node ``node``'s CPT: ``P(node = column | parents = row)``.

    Parameters
    ----------
    parameters : dict
        The fit's parameters (``fit.posterior.parameters``, or ``posterior.json``'s).
    node : str

    Returns
    -------
    pandas.DataFrame
        Index: the parents' states (a MultiIndex named by the parents, in the order of their
        edges, the last varying fastest; a root node has the single row ``"(root)"``);
        columns: the node's states in their order (declared, or sorted), named ``node``.

    Raises
    ------
    KeyError
        ``node`` not a node of the network.
    """
    import pandas as pd

    cpts = network_cpts(parameters)
    entry = _entry(cpts, node)
    parents = list(entry["parents"])
    if parents:
        index = pd.MultiIndex.from_product([list(cpts[p]["states"]) for p in parents],
                                           names=parents)
    else:
        index = pd.Index(["(root)"])
    return pd.DataFrame(_values(entry), index=index,
                        columns=pd.Index(list(entry["states"]), name=node))


def tabular_cpd(parameters: dict, node: str):
    """Node ``node``'s CPT as a ``pgmpy.factors.discrete.TabularCPD`` (needs pgmpy).

    pgmpy's columns are the parent configurations in the same order (the last evidence
    variable fastest), its rows the node's states; every variable keeps its state names.
    """
    from pgmpy.factors.discrete import TabularCPD

    cpts = network_cpts(parameters)
    entry = _entry(cpts, node)
    parents = list(entry["parents"])
    names = {node: list(entry["states"]), **{p: list(cpts[p]["states"]) for p in parents}}
    return TabularCPD(node, len(entry["states"]), _values(entry).T.tolist(),
                      evidence=parents or None,
                      evidence_card=[len(names[p]) for p in parents] or None,
                      state_names=names)


def to_pgmpy(parameters: dict):
    """The fitted network as a ``pgmpy.models.DiscreteBayesianNetwork`` (needs pgmpy).

    Every node with its CPT (:func:`tabular_cpd`); the model passes pgmpy's
    ``check_model()``.
    """
    from pgmpy.models import DiscreteBayesianNetwork

    cpts = network_cpts(parameters)
    model = DiscreteBayesianNetwork([(p, n) for n, e in cpts.items() for p in e["parents"]])
    model.add_nodes_from(list(cpts))
    model.add_cpds(*(tabular_cpd(parameters, n) for n in cpts))
    model.check_model()
    return model
