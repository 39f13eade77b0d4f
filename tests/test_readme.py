"""The README's Python examples run as written."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def python_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_readme_opens_with_the_two_commands():
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:8])
    assert "make demo" in head and "make test" in head


@pytest.mark.nuts
def test_readme_python_blocks_run(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(block.replace('"examples/', f'"{ROOT}/examples/'), namespace)  # noqa: S102
    assert namespace["comparison"].verdict == "pass"
    assert (tmp_path / "bayescheck-output" / "stream" / "report.html").exists()
    assert namespace["posterior"].parameters["theta"]["mean"][1] == pytest.approx(2.0, abs=0.05)
