"""A prior near the float maximum is refused with one clear line, no numpy warning before it.

Only the coin is quiet so far: a Dirichlet prior of 1e308 still warns of overflow in numpy's
sums (concentration times categories) before the same refusal (work noted in round 8).
"""

import warnings

import pytest
from bayescheck.reports.cli import main


@pytest.mark.parametrize(("model", "prior", "data"), [
    ("beta_bernoulli", "a = 1e308\nb = 1.0", "heads\n1\n0\n1\n"),
])
def test_overflowing_evidence_is_refused_without_runtime_warnings(tmp_path, capsys, model,
                                                                   prior, data):
    target = data.split("\n", 1)[0]
    (tmp_path / "d.csv").write_text(data)
    spec = tmp_path / "s.toml"
    spec.write_text(f'model = "{model}"\n[data]\npath = "d.csv"\ntarget = "{target}"\n'
                    f"[prior]\n{prior}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["fit", str(spec), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "non-finite value" in err or "too large" in err, err
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
