"""What the CLI writes when nobody is watching: no sampler progress bar in a log, no
"0 batch(es)" for a model whose data are in the spec."""

import io
from pathlib import Path

from bayescheck.inference.checking.sampling import show_progress_bar
from bayescheck.reports.cli import main
from bayescheck.reports.writers import rows_and_batches

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal():
    assert show_progress_bar(True, _Terminal())
    assert not show_progress_bar(True, io.StringIO())  # a log file or a pipe
    assert not show_progress_bar(False, _Terminal())  # --quiet
    assert not show_progress_bar(True, object())  # stderr replaced by something odd


def test_rows_and_batches_reads_like_a_sentence():
    assert rows_and_batches(150, 1) == "150 rows"
    assert rows_and_batches(1, 1) == "1 row"
    assert rows_and_batches(101, 3) == "101 rows in 3 batches"
    assert rows_and_batches(0, 0) == "no data rows (the model is given in the spec)"


def test_fit_of_a_model_without_batches_says_so(tmp_path, capsys):
    assert main(["fit", str(EXAMPLES / "bayes_rule" / "disease.toml"), "--out", str(tmp_path),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "batch(es)" not in out and "0 batch" not in out
    assert "no data rows (the model is given in the spec)" in out.splitlines()[0]


def test_fit_of_one_file_does_not_mention_batches(tmp_path, capsys):
    assert main(["fit", str(EXAMPLES / "beta_bernoulli" / "coin.toml"), "--out", str(tmp_path),
                 "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "batch" not in first and " rows" in first
