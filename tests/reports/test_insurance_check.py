"""pgmpy's Insurance network (27 nodes, 1,419 CPT entries) at 20,000 forward-sampled rows,
checked through its counts with the default sampling (4 chains x 1000 draws after 1000).

Declared row by row, ``check`` of these data ran more than 25 minutes; through the counts
(a gradient costs the CPT entries, not the rows x nodes) and with the CPT rows declared by
stick-breaking (its structural zeros, posterior ``Beta(1, n)``, mixed too slowly for a
verdict in PyMC's log-ratio coordinates) it passes in about a minute.
"""

import gzip
import json
import math
import os

import pytest
from bayescheck.models import load_spec
from bayescheck.models.bayesian_network import COMPLETE_DECLARATION

pgmpy = pytest.importorskip("pgmpy")

pytestmark = [pytest.mark.nuts, pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def test_insurance_at_20000_rows_is_checked_through_its_counts(tmp_path):
    from bayescheck.reports.check import run_check
    from pgmpy.readwrite import BIFReader

    path = os.path.join(os.path.dirname(pgmpy.__file__), "utils", "example_models",
                        "insurance.bif.gz")
    with gzip.open(path) as fh:
        network = BIFReader(string=fh.read().decode()).get_model()
    network.simulate(20_000, seed=0, show_progress=False).astype(str).to_csv(
        tmp_path / "insurance.csv", index=False)
    edges = ", ".join(f'["{a}", "{b}"]' for a, b in network.edges())
    (tmp_path / "insurance.toml").write_text(
        f'model = "bayesian_network"\n[data]\npath = "insurance.csv"\n'
        f"[structure]\nedges = [{edges}]\n")
    spec = load_spec(tmp_path / "insurance.toml")

    declared = spec.model.declare(spec.data)
    assert not declared.observed_RVs
    assert [p.name for p in declared.potentials] == ["log_p_counts"]
    assert [v.name for v in declared.free_RVs] == ["stick_fractions"]

    check = run_check(spec, tmp_path / "out", report=False)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert check.verdict == "pass", summary["diagnostics"]
    assert len(summary["attempts"]) == 1  # healthy on the first run, no retry
    assert summary["observed"] == [] and summary["declaration"] == COMPLETE_DECLARATION
    assert "nothing to predict" in check.predictive["skipped"]
    # every CPT entry (of the states the rows show) of a node with two states or more
    states = spec.model.states(spec.data)
    card = [len(states[n]) for n in spec.model.nodes]
    entries = sum(math.prod(card[p] for p in pa) * card[v]
                  for v, pa in enumerate(spec.model.parents) if card[v] > 1)
    assert len(check.comparison.rows()) == entries > 1300
