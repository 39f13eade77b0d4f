"""Finding the pm.Model a Python file defines, and refusing clearly otherwise."""

import textwrap

import pymc as pm
import pytest
from bayescheck.inference.conjugacy import load_model_file
from bayescheck.models.errors import BayescheckError

ONE = """
import pymc as pm
with pm.Model() as coin:
    p = pm.Beta("p", 1, 1)
    pm.Bernoulli("y", p, observed=[1, 0, 1])
if __name__ == "__main__":
    raise SystemExit("the main block must not run")
"""

TWO = ONE + """
with pm.Model() as other:
    pm.Normal("z", 0, 1)
"""


def write(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_only_model(tmp_path):
    model = load_model_file(write(tmp_path, ONE))
    assert isinstance(model, pm.Model)
    assert [rv.name for rv in model.free_RVs] == ["p"]


def test_a_named_model_among_several(tmp_path):
    model = load_model_file(write(tmp_path, TWO), "other")
    assert [rv.name for rv in model.free_RVs] == ["z"]


def test_the_file_imports_its_neighbours(tmp_path):
    write(tmp_path, "DATA = [1, 0, 0]\n", "coin_data.py")
    text = ONE.replace("observed=[1, 0, 1]", "observed=coin_data.DATA")
    model = load_model_file(write(tmp_path, "import coin_data\n" + text))
    assert list(model.rvs_to_values[model["y"]].data) == [1, 0, 0]


@pytest.mark.parametrize("text, name, message", [
    (TWO, None, "defines 2 models (coin, other); choose one with --model NAME"),
    ("import pymc as pm\nx = 1\n", None, "defines no pm.Model"),
    (ONE, "nope", "--model nope: no pm.Model of that name (models defined: coin)"),
    ("raise ValueError('bad data')\n", None, "running it raised ValueError: bad data"),
])
def test_refusals_name_the_file(tmp_path, text, name, message):
    path = write(tmp_path, text)
    with pytest.raises(BayescheckError) as info:
        load_model_file(path, name)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(BayescheckError, match="no such file"):
        load_model_file(tmp_path / "absent.py")


@pytest.mark.nuts
def test_check_model_file_checks_the_file_model(tmp_path):
    from bayescheck.reports.model_check import check_model_file

    res = check_model_file(write(tmp_path, ONE), out=tmp_path / "out", seed=3)
    assert res.verdict == "pass"
    assert res.exact.family == "Beta-Bernoulli (p: 1 latent, 3 observed)"
    assert (tmp_path / "out" / "summary.json").is_file()
    assert (tmp_path / "out" / "report.html").is_file()
