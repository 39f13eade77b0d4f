"""The point-estimate table shows the support columns only where an estimator claims a support
(ARD keeps or prunes weights); a mixture's estimates claim none, so its table has no
"non-zero" / "0 excluded" columns and no support sentence."""

from reports.html import _environment


def _row(name: str, nonzero):
    return {"name": name, "verdict": "pass", "estimate": 1.0, "nonzero": nonzero,
            "posterior_mean": 1.1, "posterior_sd": 0.2, "posterior_lower": 0.7,
            "posterior_upper": 1.5, "distance_sd": 0.5, "zero_excluded": True, "r_hat": 1.0,
            "ess_bulk": 900.0, "inconsistent": None, "reasons": ""}


def _render(rows, support) -> str:
    estimates = {"rows": rows, "verdict": "pass", "level": 0.99, "support_level": 0.95,
                 "support": support, "informational": False, "inconsistent_sd": 8}
    return _environment().get_template("estimates.html.j2").render(estimates=estimates,
                                                                  max_rows=50)


def test_mixture_table_has_no_support_columns():
    html = _render([_row("weights[0]", None), _row("means[0, x1]", None)],
                   {"estimate_nonzero": [], "posterior_excludes_zero": [], "agree": True})
    assert "<th>non-zero</th>" not in html and "<th>0 excluded</th>" not in html
    assert "Support:" not in html
    assert html.count("<th>") == 10 and "<td>weights[0]</td>" in html
    first_row = html.split("<td>weights[0]</td>", 1)[1].split("</tr>", 1)[0]
    assert first_row.count("<td") == 9  # one cell per remaining header after the name


def test_ard_table_keeps_its_support_columns():
    html = _render([_row("w[x1]", True), _row("w[x2]", False)],
                   {"estimate_nonzero": ["w[x1]"], "posterior_excludes_zero": ["w[x1]"],
                    "agree": True})
    assert "<th>non-zero</th>" in html and "<th>0 excluded</th>" in html
    assert "Support: estimated non-zero w[x1]" in html
    assert html.count("<th>") == 12
