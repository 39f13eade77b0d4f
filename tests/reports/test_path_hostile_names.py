"""Node, feature and query names that are hostile to paths and to PyMC, under ``check``.

A ``/`` in a name (``km/h``) or a trailing ``:`` made PyMC refuse the declaration with a
traceback (exit 1); netCDF-4 reads ``/`` as groups. The declaration now escapes them
(:mod:`bayescheck.models.pymc_names`): the check runs, writes nothing outside ``--out`` and no
file named after a node, and the report shows the user's names. ``..``, a leading ``.``, a
backslash and unicode were accepted before and still are.
"""

from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.models.pymc_names import dim, escaped, variable

NETWORK = """model = "bayesian_network"
[data]
path = "data.csv"
[structure]
edges = [["a/b", "../c"], ["a/b", ".d"], ["\\u00fcn\\u00ef \\u2713", ".d"], ["a\\\\b", "../c"]]
[[query]]
name = "q/1:"
target = "../c"
evidence = { "a/b" = "x" }
[sampling]
draws = 300
tune = 300
chains = 2
seed = 0
"""
NETWORK_DATA = ("a/b,../c,.d,\u00fcn\u00ef \u2713,a\\b\n" + "x,y,z,1,p\nx,y,w,2,q\nv,u,z,1,p\n"
                "x,u,w,2,q\nv,y,z,2,p\nv,u,w,1,q\n")

CLASSIFIER_DATA = ("km/h,../w,.t,go:\nfast,wet,hot,yes\nslow,dry,hot,no\nfast,dry,cold,yes\n"
                   "slow,wet,cold,no\nfast,wet,cold,yes\nslow,dry,hot,yes\n")
QUERY = """[[query]]
name = "q/1:"
"km/h" = "fast"
"../w" = "wet"
".t" = "hot"
[sampling]
draws = 300
tune = 300
chains = 2
seed = 0
"""
CLASSIFIER = """[data]
path = "data.csv"
target = "go:"
features = ["km/h", "../w", ".t"]
"""
SPECS = {
    "network": (NETWORK, NETWORK_DATA),
    "naive_bayes": ('model = "naive_bayes"\n' + CLASSIFIER + 'features_kind = "categorical"\n'
                    + QUERY, CLASSIFIER_DATA),
    "aode": ('model = "semi_naive_bayes"\n' + CLASSIFIER + '[fit]\nkind = "aode"\nm_prime = 1\n'
             + QUERY, CLASSIFIER_DATA),
    "spode": ('model = "semi_naive_bayes"\n' + CLASSIFIER + '[fit]\nkind = "spode"\nfolds = 2\n'
              + QUERY, CLASSIFIER_DATA),
    # AODE's cond_<s>_<f> of (a_b, c) and of (a, b_c) were both cond_a_b_c: PyMC refused the
    # second ("already exists"), and the exact draws kept one of the two
    "aode_underscores": ('model = "semi_naive_bayes"\n[data]\npath = "data.csv"\ntarget = "y"\n'
                         'features = ["a_b", "c", "a", "b_c"]\n[fit]\nkind = "aode"\n'
                         'm_prime = 1\n[[query]]\nname = "q"\na_b = "u"\nc = "u"\na = "v"\n'
                         'b_c = "u"\n',
                         "y,a_b,c,a,b_c\nP,u,u,v,u\nN,v,u,u,v\nP,u,v,v,u\nN,v,v,u,u\nP,u,u,u,v\n"
                         "N,v,u,v,v\n"),
}


def write(folder: Path, which: str) -> Path:
    spec, data = SPECS[which]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.toml").write_text(spec)
    (folder / "data.csv").write_text(data)
    return folder / "spec.toml"


def test_escaping_keeps_names_distinct_and_leaves_plain_names_alone():
    names = ["a/b", "a%2Fb", "a:", "a%3A", "a%", "a%25", "a", "..", ".d", "a\\b"]
    assert len({escaped(n) for n in names}) == len(names)
    assert all("/" not in escaped(n) and not escaped(n).endswith(":") for n in names)
    assert variable("cpt", "smoke") == "cpt_smoke" and dim("smoke", "state") == "smoke__state"
    assert variable("cpt", "km/h") == "cpt_km%2Fh" and dim("q:", "target") == "q%3A__target"
    pairs = [("a_b", "c"), ("a", "b_c"), ("a_b_c", "d"), ("a", "b_c_d"), ("a_%5F", "b"),
             ("a%5F", "_b"), ("s", "f")]
    assert len({variable("cond", *p) for p in pairs}) == len(pairs)
    assert variable("cond", "s", "f") == "cond_s_f"  # plain names as written


def test_aode_exact_draws_keep_every_conditional_table(tmp_path):
    # the oracle's draws are a dict by variable name: a collision kept one table of two
    from bayescheck.inference.families import family

    spec = load_spec(write(tmp_path, "aode_underscores"))
    document = fit(spec).to_json()
    variables, _ = family("semi_naive_bayes").exact_draws(
        document, draws=5, chains=1, rng=np.random.default_rng(0))
    conditionals = [v for v in variables if v.startswith("cond_")]
    assert len(conditionals) == 4 * 3, sorted(conditionals)


@pytest.mark.parametrize("which", sorted(SPECS))
def test_the_declaration_holds_every_compared_variable(tmp_path, which):
    # Without the escaping PyMC refused 'cpt_a/b' (ValueError) and 'joint_q/1:' (KeyError).
    spec = load_spec(write(tmp_path, which))
    result = fit(spec)
    model = spec.model.declare(spec.data, fit=result)
    assert result.posterior.marginals
    for m in result.posterior.marginals:
        assert m.var in model.named_vars, m.var
        dims = model.named_vars_to_dims.get(m.var, ())
        for d, value in m.coords.items():
            assert d in dims and value in list(model.coords[d]), (m.name, d)
    shown = {m.name for m in result.posterior.marginals}
    assert any("km/h" in n or "a/b" in n or "b_c=" in n for n in shown)  # the real name


@pytest.mark.nuts
@pytest.mark.parametrize("which", ["network", "naive_bayes", "aode"])
def test_check_runs_and_writes_only_inside_its_folder(tmp_path, capsys, which):
    from bayescheck.reports.cli import main

    spec = write(tmp_path / "case", which)
    before = {p for p in tmp_path.rglob("*")}
    code = main(["check", str(spec), "--out", str(tmp_path / "case" / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code in (0, 3), err  # 3: inconclusive (a short run); never 1 (a traceback)
    assert "Traceback" not in err
    out = tmp_path / "case" / "out"
    written = {p for p in tmp_path.rglob("*")} - before
    assert all(p == out or out in p.parents for p in written), written
    assert {p.name for p in out.iterdir()} <= {
        "posterior.json", "posterior.nc", "comparison.csv", "estimates.csv", "report.html",
        "report.json", "spec.toml", "summary.json", ".bayescheck-manifest.json",
        ".bayescheck.lock"}
    names = (out / "comparison.csv").read_text()
    assert "km/h" in names or "a/b" in names
    import xarray as xr

    with xr.open_datatree(out / "posterior.nc", engine="h5netcdf") as tree:
        variables = set(tree["posterior"].data_vars)
    assert any("%2F" in v for v in variables), variables
