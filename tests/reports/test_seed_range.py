"""A seed of 2^64 or more: refused with exit 2 naming --seed or [sampling] seed (the
samplers take a 64-bit seed; it was a traceback under check)."""

from pathlib import Path

import pytest
from bayescheck.reports.cli import main

COIN = Path(__file__).resolve().parents[2] / "examples" / "beta_bernoulli" / "coin.csv"


@pytest.mark.parametrize("seed", [2**64, 2**70, -1])
def test_a_seed_outside_64_bits_is_refused_on_the_command_line(tmp_path, capsys, seed):
    spec = tmp_path / "s.toml"
    spec.write_text(f'model = "beta_bernoulli"\n[data]\npath = "{COIN}"\ntarget = "heads"\n')
    assert main(["check", str(spec), f"--seed={seed}", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "argument --seed:" in err and "Traceback" not in err


def test_a_seed_outside_64_bits_is_refused_in_the_spec(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(f'model = "beta_bernoulli"\n[data]\npath = "{COIN}"\ntarget = "heads"\n'
                    f'[sampling]\nseed = {2**64}\n')
    assert main(["check", str(spec), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "s.toml, key 'sampling.seed': expected a whole number from 0 to 2^64 - 1" in err
