"""``bayescheck fit`` prints a summary by default and every parameter with ``--verbose``.

A network of 30 binary nodes in a chain has 118 CPT entries: by default the output stays
short, says how many values it leaves out and where they all are; ``--verbose`` prints each
one, as posterior.json holds them. A small model prints everything either way.
"""

import json

import numpy as np
import pandas as pd
from bayescheck.reports.cli import main
from bayescheck.reports.fit_summary import SUMMARY_LINES


def chain_spec(tmp_path, nodes=30):
    rng = np.random.default_rng(0)
    names = [f"n{i}" for i in range(nodes)]
    pd.DataFrame(rng.integers(0, 2, (50, nodes)).astype(str), columns=names).to_csv(
        tmp_path / "data.csv", index=False)
    edges = ", ".join(f'["{a}", "{b}"]' for a, b in zip(names[:-1], names[1:], strict=True))
    (tmp_path / "spec.toml").write_text(f'model = "bayesian_network"\n[data]\npath = '
                                        f'"data.csv"\n[structure]\nedges = [{edges}]\n')
    return tmp_path / "spec.toml"


def entries(text):
    return [line for line in text.splitlines() if " mean " in line]


def test_fit_prints_a_summary_and_everything_with_verbose(tmp_path, capsys):
    spec = chain_spec(tmp_path)
    assert main(["fit", str(spec), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    short = capsys.readouterr().out
    assert main(["fit", str(spec), "--out", str(tmp_path / "b"), "--quiet", "--verbose"]) == 0
    full = capsys.readouterr().out
    cpts = json.loads((tmp_path / "b" / "posterior.json").read_text())["parameters"]["cpts"]
    n = sum(np.size(c["mean"]) for c in cpts.values())
    assert n == 2 + 29 * 4 and len(entries(full)) == n
    assert len(short.splitlines()) <= SUMMARY_LINES + 10 < n
    assert set(entries(short)) < set(entries(full))
    assert f"a summary of {n} values" in short
    assert str(tmp_path / "a" / "posterior.json") in short
    assert "--verbose" in short and "a summary of" not in full


def test_a_small_fit_prints_every_value(tmp_path, capsys):
    spec = chain_spec(tmp_path, nodes=3)
    assert main(["fit", str(spec), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert len(entries(capsys.readouterr().out)) == 2 + 2 * 4
