"""posterior.json's writer: the same JSON as ``json.dumps(indent=2)``, long lists of
objects (a stream's trajectory) one compact object per line."""

import json
import math

import pytest
from bayescheck.reports.writers import LONG_LIST, clean_json, json_text


def _document(n):
    return {"model": "m", "parameters": {"theta": {"mean": [1.0, 2.5], "cov": [[1.0, 0.0],
                                                                           [0.0, 1.0]]}},
            "trajectory": [{"batch": f"part{i}", "rows": 10, "mean": {"x": i / 3}}
                           for i in range(n)],
            "settings": {"nested": {"deep": [{"a": 1}] * n}}, "empty": [], "none": {}}


def test_without_long_lists_the_text_is_json_dumps_indent_2():
    doc = _document(LONG_LIST - 1)
    assert json_text(doc) == json.dumps(doc, indent=2, allow_nan=False)


@pytest.mark.parametrize("n", [LONG_LIST, 1000])
def test_long_lists_are_one_object_per_line_and_the_same_json(n):
    doc = _document(n)
    text = json_text(doc)
    assert json.loads(text) == doc
    lines = text.splitlines()
    assert '    {"batch": "part0", "rows": 10, "mean": {"x": 0.0}},' in lines
    assert '        {"a": 1},' in lines  # nested deeper: indented with its parent
    assert len(lines) < 3 * n + 40


def test_nan_and_inf_become_null_in_and_outside_long_lists():
    doc = _document(LONG_LIST)
    doc["trajectory"][3]["mean"]["x"] = math.nan
    doc["parameters"]["theta"]["mean"][0] = math.inf
    text = json_text(doc)
    assert json.loads(text) == clean_json(doc)
    assert json.loads(text)["trajectory"][3]["mean"]["x"] is None
    # negative control: the plain encoder refuses what was not cleaned
    with pytest.raises(ValueError):
        json.dumps(doc, allow_nan=False)


def test_a_string_that_looks_like_the_placeholder_is_kept():
    doc = _document(LONG_LIST)
    doc["model"] = "\0list0\0"
    doc["settings"]["k"] = "\\u0000list0\\u0000"
    assert json.loads(json_text(doc)) == doc
