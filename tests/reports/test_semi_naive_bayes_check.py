"""The cross-check of semi_naive_bayes: the AODE declaration's averaged score equals the fit's
at the posterior-mean parameters (no sampling); NUTS agrees with the SPODE network and the
AODE SPODEs on the PlayTennis examples, and a wrong score fails (the notes' AODE denominator).
"""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.checking.compare import compare_idata
from bayescheck.inference.families import fit
from bayescheck.models import load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "semi_naive_bayes"


@pytest.mark.slow  # compiles the PyMC declaration's functions: 2-16 s
def test_aode_declared_score_at_the_posterior_means_is_the_fit_score():
    spec = load_spec(EXAMPLES / "play_tennis_aode.toml")
    result = fit(spec)
    model = spec.model.declare(spec.data, fit=result)
    means = {}
    for m in result.posterior.marginals:
        if m.dist is not None:
            means.setdefault(m.var, {})[tuple(m.coords.values())] = m.mean
    inputs, values = [], []
    for var, entries in means.items():
        rv = model[var]
        dims = model.named_vars_to_dims[var]
        shape = tuple(len(model.coords[d]) for d in dims)
        arr = np.zeros(shape)
        for key, mean in entries.items():
            idx = tuple(list(model.coords[d]).index(k) for d, k in zip(dims, key, strict=True))
            arr[idx] = mean
        inputs.append(rv)
        values.append(arr)
    score = model.compile_fn(model["score"], inputs=inputs, on_unused_input="ignore",
                             point_fn=False)(*values)
    expected = [result.posterior.parameters["query"][0]["scores"][c] for c in ("No", "Yes")]
    np.testing.assert_allclose(score[0], expected, rtol=1e-12)
    # every declared table has an oracle (nothing compared is left out); each is the
    # deterministic of its stick-breaking fractions, the free variables
    assert set(means) == {v.name for v in model.deterministics} - {"score"}
    assert [v.name for v in model.free_RVs] == ["stick_fractions"]


@pytest.fixture(scope="module")
def aode(tmp_path_factory):
    from bayescheck.reports.check import run_check

    return run_check(load_spec(EXAMPLES / "play_tennis_aode.toml"),
                     tmp_path_factory.mktemp("aode"), report=False)


@pytest.mark.nuts
def test_aode_check_passes_and_the_notes_denominator_fails(aode):
    assert aode.verdict == "pass", aode.comparison.summary()
    assert any(p.name == "score[sunny_cool_high_strong, No]" for p in aode.comparison.parameters)
    # the notes' P(c, x_i) = (|D_c,xi| + 1) / (|D| + N_i): every joint entry moves
    K = len(aode.fit.posterior.parameters["classes"])
    wrong = []
    for m in aode.fit.posterior.marginals:
        if m.var.startswith("joint_"):
            n_i = len(aode.fit.posterior.parameters["categories"][m.var.removeprefix("joint_")])
            a, b = m.dist.args  # a + b = |D| + K N_i; the notes divide by |D| + N_i
            m = replace(m, dist=type(m.dist)("beta", a, b - (K - 1) * n_i))
        wrong.append(m)
    assert compare_idata(wrong, aode.sample.idata).verdict == "fail"


@pytest.fixture(scope="module")
def spode(tmp_path_factory):
    from bayescheck.reports.check import run_check

    return run_check(load_spec(EXAMPLES / "play_tennis_spode.toml"),
                     tmp_path_factory.mktemp("spode"), report=False)


@pytest.mark.nuts
def test_spode_check_passes_and_another_super_parents_scores_fail(spode):
    assert spode.verdict == "pass", spode.comparison.summary()
    names = {p.name for p in spode.comparison.parameters}
    assert "joint_sunny_cool_high_strong[No]" in names
    # the query scores of the SPODE with super-parent wind instead of the chosen outlook
    other = load_spec(EXAMPLES / "play_tennis_spode.toml")
    other = replace(other, model=replace(other.model, super_parent="wind"))
    scores = fit(other).posterior.parameters["query"][0]["scores"]
    wrong = [
        replace(m, exact_mean=scores[m.coords["sunny_cool_high_strong__target"]])
        if m.var == "joint_sunny_cool_high_strong"
        else m
        for m in spode.fit.posterior.marginals
    ]
    assert compare_idata(wrong, spode.sample.idata).verdict == "fail"
