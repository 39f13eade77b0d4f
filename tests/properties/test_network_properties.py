"""Issue 31's properties for discrete networks and one-dependence classifiers.

Small random DAGs over 2-4 discrete nodes (some with an optional ``[states]`` table, a
``[[query]]`` and empty cells, which send the fit to EM) and SPODE / AODE / TAN specs over 2-3
categorical features, fitted through ``bayescheck fit`` as the other families' properties are
(``test_bad_input_properties.py``): a valid case fits (exit 0, no lost number); a corrupted
one, by the shared corruptions or one of the structure (a cycle, a self-loop, an unknown node,
a ``[states]`` table that leaves out a value, a query of an unknown state, a super-parent that
is not a feature), exits 0 with no lost number or 2 with one line naming the file or key.

Node and feature names include path-hostile ones (``x/y``, ``..``, ``.d``, a backslash,
unicode): ``fit`` writes no file named after them. Profiles: see ``conftest.py``.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from test_bad_input_properties import Case, _number, assert_sound, corrupted, run

NAMES = ["a", "b", "c", "x/y", "..", ".d", "a\\b", "\u00e9t\u00e9", "A b"]
STATES = ["0", "1", "yes", "no", "None", "NA", "x y", "01", "\u2713"]


def _key(name: str) -> str:
    """``name`` as a TOML key (a basic string: any name, dots and blanks included)."""
    return json.dumps(name)


def _present(rows, column: int) -> list[str]:
    return sorted({r[column] for r in rows if r[column] != ""})


@st.composite
def bayesian_network(draw) -> Case:
    k = draw(st.integers(2, 4))
    nodes = draw(st.lists(st.sampled_from(NAMES), min_size=k, max_size=k, unique=True))
    # an edge only from an earlier to a later node of the list: acyclic by construction
    edges = [[nodes[i], nodes[j]] for i in range(k) for j in range(i + 1, k)
             if draw(st.booleans())]
    edges = draw(st.permutations(edges))  # a node's parents are ordered as their edges
    pools = {v: draw(st.lists(st.sampled_from(STATES), min_size=1, max_size=3, unique=True))
             for v in nodes}
    missing = draw(st.sampled_from([0, 0, 0.1]))  # empty cells: EM
    rows = tuple(tuple("" if missing and draw(st.integers(0, 9)) == 0
                       else draw(st.sampled_from(pools[v])) for v in nodes)
                 for _ in range(draw(st.integers(0, 19))))
    rows = (tuple(pools[v][0] for v in nodes), *rows)  # no node without a value (latent)
    entries = [("", "model", '"bayesian_network"'), ("data", "path", '"data.csv"'),
               ("structure", "edges", json.dumps(list(edges)))]
    prior = draw(st.sampled_from(["concentration", "equivalent_sample_size", None]))
    if prior:
        entries.append(("prior", prior, _number(draw(st.floats(0.1, 10)))))
    if draw(st.booleans()):  # every state of a node, in any order, perhaps one no row holds
        v = draw(st.sampled_from(nodes))
        declared = list(draw(st.permutations(pools[v])))
        if draw(st.booleans()):
            declared.append("never")
        entries.append(("states", _key(v), json.dumps(declared)))
    target, other = draw(st.permutations(nodes))[:2]
    seen = _present(rows, nodes.index(other))
    if draw(st.booleans()) and seen:
        entries += [("[query]", "target", json.dumps(target)),
                    ("[query]", "evidence", f"{{ {_key(other)} = "
                                            f"{json.dumps(draw(st.sampled_from(seen)))} }}")]
    return Case("bayesian_network", tuple(entries), tuple(nodes), rows)


@st.composite
def semi_naive_bayes(draw) -> Case:
    d = draw(st.integers(2, 3))
    *features, target = draw(st.lists(st.sampled_from(NAMES), min_size=d + 1, max_size=d + 1,
                                      unique=True))
    pools = [draw(st.lists(st.sampled_from(STATES), min_size=1, max_size=3, unique=True))
             for _ in features]
    rows = tuple((*(draw(st.sampled_from(p)) for p in pools),
                  draw(st.sampled_from(["yes", "no"]))) for _ in range(draw(st.integers(0, 18))))
    rows = ((*(p[0] for p in pools), "yes"), (*(p[-1] for p in pools), "no"), *rows)
    kind = draw(st.sampled_from(["spode", "aode", "tan"]))
    entries = [("", "model", '"semi_naive_bayes"'), ("data", "path", '"data.csv"'),
               ("data", "target", json.dumps(target)),
               ("data", "features", json.dumps(features)), ("fit", "kind", json.dumps(kind)),
               ("prior", "concentration", _number(draw(st.floats(0.1, 10))))]
    if kind == "spode":
        if draw(st.booleans()):
            entries.append(("fit", "super_parent", json.dumps(draw(st.sampled_from(features)))))
        else:
            entries.append(("fit", "folds", str(draw(st.integers(2, 5)))))
    if kind == "aode":
        entries.append(("fit", "m_prime", str(draw(st.integers(0, 5)))))
    if draw(st.booleans()):  # a new row: any value of the pools, seen in the data or not
        entries += [("[query]", _key(f), json.dumps(draw(st.sampled_from(p))))
                    for f, p in zip(features, pools, strict=True)]
    # The super-parent (SPODE) or the root (TAN) has no extra parent: null by design.
    # AODE averages models: it has no one evidence.
    nullable = frozenset(f".parameters.structure.parents.{f}" for f in features)
    if kind == "aode":
        nullable |= {".log_evidence"}
    return Case("semi_naive_bayes", tuple(entries), (*features, target), rows, nullable)


valid_cases = st.one_of(bayesian_network(), semi_naive_bayes())


@st.composite
def structural(draw, case: Case):
    """A corruption of what the spec says about the columns: (what, spec text, data)."""
    entries = list(case.entries)
    nodes = list(case.header)
    a, b = draw(st.permutations(nodes))[:2]
    if case.family == "bayesian_network":
        edges = json.loads(dict(((s, k), v) for s, k, v in entries)[("structure", "edges")])
        kinds = {"cycle": [*edges, [a, b], [b, a]], "self_loop": [*edges, [a, a]],
                 "unknown_node": [*edges, [a, "nowhere"]], "not_a_pair": [*edges, [a]],
                 "duplicate_edge": [*edges, [a, b], [a, b]]}
        kind = draw(st.sampled_from([*kinds, "states_short", "query_state", "query_node"]))
        if kind in kinds:
            entries = [(s, k, json.dumps(kinds[kind]) if k == "edges" else v)
                       for s, k, v in entries]
        elif kind == "states_short":  # a value in the data outside the declared states
            seen = _present(case.rows, nodes.index(a))
            entries = [e for e in entries if e[0] != "states"]
            entries.append(("states", _key(a), json.dumps(seen[:-1] or ["never"])))
        else:
            entries = [e for e in entries if e[0] != "[query]"]
            entries += [("[query]", "target", json.dumps(a if kind == "query_state" else "zz")),
                        ("[query]", "evidence", f"{{ {_key(b)} = \"unheard of\" }}")]
    else:
        target = nodes[-1]
        kinds = {"super_parent": ("fit", "super_parent", '"nowhere"'),
                 "target_is_feature": ("data", "features", json.dumps(nodes)),
                 "one_feature": ("data", "features", json.dumps(nodes[:1])),
                 "unknown_feature": ("data", "features", json.dumps([*nodes[:-1], "zz"])),
                 "states_short": ("states", _key(target), '["yes"]')}
        kind = draw(st.sampled_from(sorted(kinds)))
        section, key, literal = kinds[kind]
        entries = [e for e in entries if (e[0], e[1]) != (section, key)
                   and not (kind == "super_parent" and e[1] in ("folds", "kind", "m_prime"))]
        if kind == "super_parent":
            entries.append(("fit", "kind", '"spode"'))
        entries.append((section, key, literal))
    fixed = replace(case, entries=tuple(entries))
    return kind, fixed.spec_text(), fixed.csv_bytes()


def sound(case: Case, code: int, err: str, post: dict | None, what: str):
    """:func:`assert_sound`; a fit by EM (empty cells) has no evidence: null by design."""
    if post is not None and "em" in post["parameters"]:
        case = replace(case, nullable=case.nullable | {".log_evidence"})
    assert_sound(case, code, err, post, what)


def _fit(spec, data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        code, err, post = run(spec, data, folder)
        # nothing named after a node or feature: only the fit's own files, inside --out
        names = {p.name for p in folder.rglob("*")} - {"spec.toml", "data.csv", "out"}
    return code, err, post, names


FIT_FILES = {"posterior.json", "summary.json", "report.html", "checkpoint.npz",
             ".bayescheck-manifest.json", ".bayescheck.lock", "spec.toml"}


@given(data=st.data())
def test_valid_networks_and_one_dependence_classifiers_fit(data):
    case = data.draw(valid_cases, label="valid case")
    code, err, post, names = _fit(case.spec_text(), case.csv_bytes())
    sound(case, code, err, post, "clean")
    assert code == 0, err
    assert names <= FIT_FILES, names


@given(data=st.data())
def test_corrupted_networks_and_classifiers_exit_0_or_2(data):
    case = data.draw(valid_cases, label="valid case")
    what, spec, csv = data.draw(st.one_of(corrupted(case), structural(case)),
                                label="corruption")
    code, err, post, _ = _fit(spec, csv)
    sound(case, code, err, post, what)
