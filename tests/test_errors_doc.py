"""docs/errors.md names, for every refusal, the source file that raises it: the files exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cited_files(text: str) -> set[str]:
    return set(re.findall(r"\| `([\w/]+\.py)` \|$", text, flags=re.M))


def test_every_cited_source_file_exists():
    cited = cited_files((ROOT / "docs" / "errors.md").read_text())
    assert len(cited) > 10
    assert sorted(f for f in cited if not (ROOT / f).is_file()) == []


def test_a_missing_file_would_be_caught():
    assert cited_files("| x | msg | `models/no_such_module.py` |") == {"models/no_such_module.py"}
    assert not (ROOT / "models/no_such_module.py").is_file()
