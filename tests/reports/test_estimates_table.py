"""The point-estimate table shows the support columns only where an estimator claims a support
(ARD keeps or prunes weights); a mixture's estimates claim none, so its table has no
"non-zero" / "0 excluded" columns and no support sentence."""

from bayescheck.reports.html import _environment


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


def test_rows_without_a_support_claim_carry_no_support_columns():
    """EstimateCheck.row() (estimates.csv, summary.json, the report) leaves out the support
    columns for a row that claims no support, keeps them for one that does; the table renders
    both kinds together (ARD's hierarchical mode: weights and sigma2)."""
    from bayescheck.inference.checking.compare import EstimateCheck

    def check(name, nonzero):
        return EstimateCheck(name=name, estimate=1.0, nonzero=nonzero,
                             sampled={"mean": 1.1, "sd": 0.2, "lower": 0.7, "upper": 1.5,
                                      "support_lower": 0.8, "support_upper": 1.4},
                             distance_sd=0.5, inside=True, zero_excluded=True, r_hat=1.0,
                             ess_bulk=900.0, ess_tail=800.0, verdict="pass")

    support = {"nonzero", "zero_excluded", "posterior_support_lower", "posterior_support_upper"}
    mixture = check("weights[0]", None).row()
    assert not support & set(mixture) and mixture["posterior_mean"] == 1.1
    assert support <= set(check("w[x1]", True).row())
    html = _render([check("w[x1]", True).row(), check("sigma2", None).row()],
                   {"estimate_nonzero": ["w[x1]"], "posterior_excludes_zero": ["w[x1]"],
                    "agree": True})
    sigma_row = html.split("<td>sigma2</td>", 1)[1].split("</tr>", 1)[0]
    assert html.count("<th>") == 12 and sigma_row.count("<td>–</td>") == 2
    html = _render([check("weights[0]", None).row()],
                   {"estimate_nonzero": [], "posterior_excludes_zero": [], "agree": True})
    assert "<th>non-zero</th>" not in html and html.count("<th>") == 10
