"""A Dirichlet prior too small for float64 on a CPT row without data is refused up front,
naming the spec key, before anything is written (it was a ZeroDivisionError after
posterior.json)."""

import pytest
from bayescheck.reports.cli import main

SPEC = """model = "bayesian_network"
[data]
path = "d.csv"
[structure]
edges = [["a", "b"], ["c", "b"]]
[prior]
{prior}
[[query]]
name = "q"
target = "b"
evidence = {{ a = "x", c = "q" }}
"""


@pytest.mark.parametrize("prior, key", [("concentration = 1e-160", "prior.concentration"),
                                        ("concentration = 1e-154", "prior.concentration"),
                                        ("equivalent_sample_size = 1e-320",
                                         "prior.equivalent_sample_size"),
                                        ("equivalent_sample_size = 1e-300",
                                         "prior.equivalent_sample_size")])
def test_a_prior_too_small_for_an_empty_cpt_row_is_refused_before_writing(tmp_path, capsys,
                                                                         prior, key):
    (tmp_path / "d.csv").write_text("a,c,b\nx,p,u\ny,q,v\nx,p,u\ny,q,u\n")  # (x, q): no row
    (tmp_path / "s.toml").write_text(SPEC.format(prior=prior))
    out = tmp_path / "out"
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"s.toml, key '{key}'" in err and "is below 1e-150" in err
    assert not (out / "posterior.json").exists()


def test_a_small_prior_above_the_limit_fits_with_finite_numbers(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,c,b\nx,p,u\ny,q,v\nx,p,u\ny,q,u\n")
    (tmp_path / "s.toml").write_text(SPEC.format(prior="concentration = 1e-100"))
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")]) == 0
    printed = capsys.readouterr().out
    assert "nan" not in printed and "P(b | a=x, c=q) = u 0.5000, v 0.5000" in printed


SEMI_NAIVE = """model = "semi_naive_bayes"
[data]
path = "d.csv"
target = "c"
features = ["a", "b"]
[fit]
kind = "{kind}"
[prior]
concentration = {c}
"""


@pytest.mark.parametrize("kind", ["spode", "aode", "tan"])
def test_a_semi_naive_prior_too_small_is_refused_naming_the_key(tmp_path, capsys, kind):
    # SPODE / TAN raised the network's NetworkProblem (a traceback), AODE a ZeroDivisionError
    (tmp_path / "d.csv").write_text("a,b,c\n0,0,yes\n1,1,no\n0,0,yes\n")
    (tmp_path / "s.toml").write_text(SEMI_NAIVE.format(kind=kind, c="1e-320"))
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "s.toml, key 'prior.concentration'" in err and "is below 1e-150" in err
    assert not (tmp_path / "o" / "posterior.json").exists()
    (tmp_path / "s.toml").write_text(SEMI_NAIVE.format(kind=kind, c="1e-100"))
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"]) == 0


def test_a_semi_naive_model_from_python_refuses_it_too():
    from bayescheck.models.semi_naive_bayes import SemiNaiveBayes

    with pytest.raises(ValueError, match="below 1e-150"):
        SemiNaiveBayes(features=("a", "b"), target="c", concentration=1e-320)
