"""Issue 31, memory and time without bounds: one resource estimate, refused before allocating.

Each case is refused with exit 2 (a ``TooLarge``, also a ``ValueError``, from Python) naming
the key, option or column, the size and what to change; the memory limits are lowered with
``available_memory`` so that a case small enough to run without the limit shows it is applied.
"""

import io
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from bayescheck.models import resources
from bayescheck.models.resources import TooLarge
from bayescheck.reports.cli import main


@pytest.fixture
def small_machine(monkeypatch):
    """A machine of 1 MB (the estimates are compared with this)."""
    monkeypatch.setattr(resources, "available_memory", lambda: 1 << 20)


def network_spec(tmp_path, parents: int, rows: int = 20):
    rng = np.random.default_rng(0)
    cols = {f"p{i}": rng.choice(["a", "b"], rows) for i in range(parents)}
    cols["child"] = rng.choice(["x", "y"], rows)
    lines = [",".join(cols)] + [",".join(c[r] for c in cols.values()) for r in range(rows)]
    (tmp_path / "net.csv").write_text("\n".join(lines) + "\n")
    edges = ", ".join(f'["p{i}", "child"]' for i in range(parents))
    spec = tmp_path / "net.toml"
    spec.write_text(f'model = "bayesian_network"\n[data]\npath = "net.csv"\n[structure]\n'
                    f'edges = [{edges}]\n[prior]\nconcentration = 1.0\n')
    return spec


# --- count tables ------------------------------------------------------------------------------

def test_a_network_node_with_many_parents_is_refused_naming_node_size_and_remedy(
        tmp_path, capsys, small_machine):
    # 2^10 x 2 = 2048 cells x 2,500 bytes = 5 MB > 1 MB
    spec = network_spec(tmp_path, parents=10)
    code = main(["fit", str(spec), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "column 'child': too large for this machine: node 'child' has 10 parent(s) with " \
           "1,024 joint configurations x 2 states = 2,048 CPT cells" in err
    assert "posterior.json of about" in err and "give 'child' fewer parents" in err
    assert not (tmp_path / "o" / "posterior.json").exists()


def test_a_small_network_still_fits_on_the_small_machine(tmp_path, capsys, small_machine):
    spec = network_spec(tmp_path, parents=2)
    assert main(["fit", str(spec), "--out", str(tmp_path / "o"), "--quiet"]) == 0


def test_posterior_json_is_bounded_even_with_memory_to_spare(monkeypatch):
    monkeypatch.setattr(resources, "MAX_POSTERIOR_JSON", 1000)
    resources.require_cpts(["a", "b"], [2, 1], [(), (0,)])  # 4 cells x 200 bytes
    with pytest.raises(TooLarge, match=r"posterior.json of about 8.2 KB \(at most 1000 bytes"):
        resources.require_cpts(["a", "b"], [2, 20], [(), (0,)])  # 42 cells x 200 bytes
    resources.require_cpts(["a", "b"], [2, 20], [(), (0,)], writes=False)  # an estimator


def test_semi_naive_bayes_refuses_a_column_of_too_many_categories(tmp_path, capsys,
                                                                  small_machine):
    # numeric columns read as categories: 300 values each; their pair 2 x 300 x 300 cells
    rows = [f"{i},{299 - i},{'xy'[i % 3 % 2]}" for i in range(300)]
    (tmp_path / "d.csv").write_text("id,id2,y\n" + "\n".join(rows) + "\n")
    (tmp_path / "s.toml").write_text('model = "semi_naive_bayes"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\nfeatures = ["id", "id2"]\n[fit]\n'
                                     'kind = "aode"\n')
    code = main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "column 'id': too large for this machine: 300 categories x 2 classes" in err
    assert "merge its values into fewer categories" in err


# --- estimators: tables sized by the largest code ----------------------------------------------

def estimators():
    from bayescheck.estimators import (
        BayesianNetworkClassifier,
        CategoricalNaiveBayes,
        SemiNaiveBayesClassifier,
    )

    return [CategoricalNaiveBayes(), SemiNaiveBayesClassifier(kind="aode"),
            SemiNaiveBayesClassifier(kind="spode", super_parent="x0"),
            BayesianNetworkClassifier()]


@pytest.mark.parametrize("index", range(4))
def test_estimators_refuse_a_large_code_up_front_naming_the_column(index, small_machine):
    estimator = estimators()[index]
    X = np.array([[0, 1], [1, 100_000], [0, 0], [1, 1]])
    with pytest.raises(ValueError, match="column 'x1': too large for this machine") as info:
        estimator.fit(X, [0, 1, 0, 1])
    assert isinstance(info.value, TooLarge)
    assert "OrdinalEncoder" in str(info.value) and "100,001" in str(info.value)


@pytest.mark.parametrize("index", range(4))
def test_estimators_with_small_codes_fit_on_the_small_machine(index, small_machine):
    estimators()[index].fit(np.array([[0, 1], [1, 2], [0, 0], [1, 1]]), [0, 1, 0, 1])


# --- sampler settings, calibration, workers ----------------------------------------------------

@pytest.mark.parametrize("key, value", [("draws", 1_000_000_000), ("chains", 10_000),
                                        ("tune", 100_000_000)])
def test_sampler_settings_in_the_spec_are_bounded(tmp_path, capsys, key, value):
    (tmp_path / "c.csv").write_text("y\n1\n0\n")
    (tmp_path / "c.toml").write_text(f'model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                     f'target = "y"\n[sampling]\n{key} = {value}\n')
    code = main(["check", str(tmp_path / "c.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"key 'sampling.{key}': {key} = {value:,} is above the limit" in err


@pytest.mark.parametrize("option, value", [("--draws", "1000000000"), ("--chains", "10000")])
def test_sampler_options_are_bounded(tmp_path, capsys, option, value):
    (tmp_path / "c.csv").write_text("y\n1\n0\n")
    (tmp_path / "c.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                     'target = "y"\n')
    code = main(["check", str(tmp_path / "c.toml"), "--out", str(tmp_path / "o"), option, value,
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and f"key '{option}'" in err and "lower it" in err
    assert not (tmp_path / "o").exists()


def test_sample_nuts_refuses_settings_before_compiling():
    from bayescheck.inference.checking.sampling import sample_nuts

    with pytest.raises(TooLarge, match="draws = 1,000,000,000 is above the limit"):
        sample_nuts(object(), draws=1_000_000_000)


def test_the_draws_memory_is_parameters_x_draws_x_chains(small_machine):
    resources.require_draws_memory(1, 1000, 4)  # (1 + 12) x 4000 x 8 = 416 KB
    with pytest.raises(TooLarge, match=r"1,000 draws x 4 chains of 30 parameters .* need about "
                                       r"1.3 MB"):
        resources.require_draws_memory(30, 1000, 4)  # (30 + 12) x 4000 x 8 = 1,344,000


def test_calibrate_refuses_a_billion_simulations(tmp_path, capsys):
    (tmp_path / "c.csv").write_text("y\n1\n0\n")
    (tmp_path / "c.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                     'target = "y"\n')
    code = main(["calibrate", str(tmp_path / "c.toml"), "--simulations", "1000000000",
                 "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "key '--simulations': 1,000,000,000 simulations is above the limit of 100,000" in err
    assert not (tmp_path / "o").exists()


def test_local_workers_are_bounded():
    with pytest.raises(TooLarge, match=r"key '--workers': 100,000 workers is above the limit"):
        resources.check_workers(100_000)
    resources.check_workers(resources.max_workers())


# --- out of memory ---------------------------------------------------------------------------

def test_out_of_memory_is_an_exit_2_message(tmp_path, capsys, monkeypatch):
    import bayescheck.inference.families

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(bayescheck.inference.families, "fit", no_memory)
    (tmp_path / "c.csv").write_text("y\n1\n0\n")
    (tmp_path / "c.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                     'target = "y"\n')
    code = main(["fit", str(tmp_path / "c.toml"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "bayescheck: error: out of memory during 'fit'" in err


# --- the cost of a check's sampling ------------------------------------------------------------

def cost(gradient_seconds, chains=4, cores=2):
    from bayescheck.inference.checking.cost import SamplingCost

    return SamplingCost(parameters=5, stored=5, gradient_seconds=gradient_seconds, draws=1000,
                        tune=1000, chains=chains, cores=cores)


def test_the_time_estimate_is_rounds_x_iterations_x_steps_x_gradient():
    from bayescheck.inference.checking.cost import TYPICAL_LEAPFROG_STEPS

    # 4 chains on 2 cores: 2 rounds of 2000 iterations
    assert cost(1e-3).seconds == pytest.approx(2 * 2000 * TYPICAL_LEAPFROG_STEPS * 1e-3)
    assert cost(1e-3, chains=3, cores=4).seconds == pytest.approx(
        2000 * TYPICAL_LEAPFROG_STEPS * 1e-3)
    assert "5 free parameter(s)" in cost(1e-3).describe()


def test_a_sampling_above_the_time_limit_is_refused_naming_the_override():
    from bayescheck.inference.checking.cost import require_affordable

    require_affordable(cost(1e-3), max_hours=1)  # 60 s
    require_affordable(cost(10.0), max_hours=None)
    with pytest.raises(TooLarge, match=r"key '--max-hours': the check would sample for about "
                                       r"16.7 h .* above the limit of 6 h; .* --max-hours"):
        require_affordable(cost(1.0))  # 2 x 2000 x 15 s = 16.7 h


def test_max_hours_must_be_positive(tmp_path, capsys):
    (tmp_path / "c.csv").write_text("y\n1\n0\n")
    (tmp_path / "c.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                     'target = "y"\n')
    assert main(["check", str(tmp_path / "c.toml"), "--max-hours", "0", "--quiet"]) == 2
    assert "--max-hours must be a positive number of hours" in capsys.readouterr().err


@pytest.mark.nuts
def test_the_gradient_is_timed_on_the_compiled_model_and_the_check_refused(tmp_path, capsys):
    import pymc as pm
    from bayescheck.inference.checking.cost import sampling_cost

    with pm.Model() as model:
        pm.Normal("x", 0, 1, shape=3)
        pm.HalfNormal("s", 1)
    measured = sampling_cost(model, draws=100, tune=100, chains=2, cores=2)
    assert measured.parameters == 4 and measured.stored >= 4
    assert 0 < measured.gradient_seconds < 0.01

    (tmp_path / "c.csv").write_text("y\n1\n0\n1\n")
    (tmp_path / "c.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                     'target = "y"\n')
    code = main(["check", str(tmp_path / "c.toml"), "--out", str(tmp_path / "o"),
                 "--max-hours", "1e-9"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "sampling (exact): 1 free parameter(s)" in err  # said up front
    assert "above the limit of 1e-09 h" in err
    assert not (tmp_path / "o" / "posterior.nc").exists()


# --- the progress bar of a check's sampling ----------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_draws_bar_draws_every_chain_with_the_time_left():
    from bayescheck.inference.checking.sampling import draws_bar

    stream = Terminal()
    update = draws_bar(2, stream)
    chain = SimpleNamespace
    update([chain(finished_draws=0, total_draws=200, tuning=True)] * 2)
    update([chain(finished_draws=150, total_draws=200, tuning=False),
            chain(finished_draws=50, total_draws=200, tuning=True)])
    update([chain(finished_draws=200, total_draws=200, tuning=False)] * 2)
    text = stream.getvalue()
    assert "draws 0/400 (2 chain(s), 2 tuning)" in text
    assert "draws 200/400 (2 chain(s), 1 tuning)" in text and "s left" in text
    assert text.endswith("draws 400/400 (2 chain(s)), " + text.rsplit(", ", 2)[1]
                         + ", about 0 s left\n")


@pytest.mark.nuts
def test_check_sampling_shows_the_bar_on_a_terminal_only(monkeypatch):
    import pymc as pm
    from bayescheck.inference.checking.sampling import sample_nuts

    with pm.Model() as model:
        pm.Normal("x", 0, 1)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    sample_nuts(model, draws=200, tune=200, chains=2, progress=True)
    assert "draws 800/800 (2 chain(s))" in terminal.getvalue()

    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    sample_nuts(model, draws=200, tune=200, chains=2, progress=True)
    assert "draws" not in pipe.getvalue()


def test_categorical_naive_bayes_refuses_a_column_of_too_many_categories(tmp_path, capsys,
                                                                         small_machine):
    # 30,000 distinct values x 2 classes x 48 bytes = 2.9 MB > 1 MB
    rows = [f"{i},{'ab'[i % 2]},{'xy'[i % 3 % 2]}" for i in range(30_000)]
    (tmp_path / "d.csv").write_text("id,f,y\n" + "\n".join(rows) + "\n")
    (tmp_path / "s.toml").write_text('model = "naive_bayes"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\nfeatures = ["id", "f"]\n'
                                     'features_kind = "categorical"\n')
    code = main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "column 'id': too large for this machine: 30,000 categories x 2 classes" in err
    assert "read it as gaussian" in err
