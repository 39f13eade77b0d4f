"""The HTML report, rendered from a finished run's files.

Two small examples are checked once with NUTS (module fixture, through ``bayescheck demo``):
a linear regression whose feature column is named ``<script>alert(1)</script>`` and the
Beta-Bernoulli coin. Every other report here (a failing one, an inconclusive one, a model
with 25 parameters) is rendered from those files or from synthetic draws, without sampling.
Headless Chromium opens the reports to prove every image loads and nothing is fetched.
"""

import json
import re
import shutil
import subprocess
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.checking.check import CheckResult
from bayescheck.inference.checking.compare import Thresholds, compare_idata
from bayescheck.inference.checking.sampling import SampleResult
from bayescheck.inference.families import fit
from bayescheck.inference.result import AnalyticFit, ExactMarginal, Posterior
from bayescheck.models import load_spec
from bayescheck.reports.cli import main
from bayescheck.reports.report import MAX_ROWS, render_run, report_data, write_report_data
from scipy import stats

EVIL = "<script>alert(1)</script>"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHROMIUM = Path("/usr/bin/chromium")
VERDICT_COLOURS = {"pass": "rgb(46, 125, 50)", "fail": "rgb(198, 40, 40)",
                   "inconclusive": "rgb(180, 83, 9)"}


# ------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``bayescheck demo`` over two small examples (the only NUTS runs of this module)."""
    root = tmp_path_factory.mktemp("report")
    examples = root / "examples"
    (examples / "evil").mkdir(parents=True)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    pd.DataFrame({EVIL: X[:, 0], "x2": X[:, 1],
                  "y": 1.5 * X[:, 0] - X[:, 1] + rng.normal(size=40)}).to_csv(
        examples / "evil" / "d.csv", index=False)
    sampling = "[sampling]\ndraws = 600\ntune = 600\nchains = 4\nseed = 1\n"
    (examples / "evil" / "evil.toml").write_text(
        'model = "linear_regression"\n[data]\npath = "d.csv"\ntarget = "y"\n'
        "[likelihood]\nnoise_sd = 1.0\n" + sampling)
    (examples / "coin").mkdir()
    shutil.copy(EXAMPLES / "beta_bernoulli" / "coin.csv", examples / "coin" / "coin.csv")
    coin = (EXAMPLES / "beta_bernoulli" / "coin.toml").read_text()
    (examples / "coin" / "coin.toml").write_text(coin.split("[sampling]")[0] + sampling)
    out = root / "demo"
    code = main(["demo", "--out", str(out), "--examples", str(examples)])
    return {"code": code, "out": out, "evil": out / "evil" / "evil",
            "coin": out / "coin" / "coin", "spec": examples / "evil" / "evil.toml"}


def _rerender(demo, dst: Path, *, wrong: bool = False,
              thresholds: Thresholds | None = None) -> Path:
    """A report of the evil run's draws against a (possibly wrong) analytic posterior, built
    the way run_check builds one, without sampling."""
    import xarray as xr

    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(demo["evil"] / "posterior.nc", dst / "posterior.nc")
    spec = load_spec(demo["spec"])
    right = fit(spec)
    idata = xr.open_datatree(dst / "posterior.nc", engine="h5netcdf")
    result = right
    if wrong:  # the first coefficient's posterior moved by 2 posterior sds
        m0 = right.posterior.marginals[0]
        moved = stats.norm(m0.dist.mean() + 2 * m0.dist.std(), m0.dist.std())
        result = replace(right, posterior=replace(
            right.posterior, marginals=[replace(m0, dist=moved), *right.posterior.marginals[1:]]))
    comparison = compare_idata(result.posterior.marginals, idata, thresholds=thresholds)
    check = CheckResult(result, SampleResult(idata, 1.0, 0.5, "nutpie"), comparison,
                        {"analytic fit": 0.01}, out=dst)
    write_report_data(dst, report_data(check, spec, spec.sampling, demo["spec"].read_text()))
    idata.close()
    render_run(dst)
    return dst


@pytest.fixture(scope="module")
def failing(demo, tmp_path_factory):
    return _rerender(demo, tmp_path_factory.mktemp("fail"), wrong=True)


@pytest.fixture(scope="module")
def inconclusive(demo, tmp_path_factory):
    return _rerender(demo, tmp_path_factory.mktemp("inconclusive"),
                     thresholds=Thresholds(ess_bulk_min=1e9))


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """25 scalar parameters from synthetic draws: the report summarises them."""
    import arviz_base as azb

    dst = tmp_path_factory.mktemp("large")
    rng = np.random.default_rng(2)
    k, chains, draws = 25, 4, 500
    w = rng.normal(size=(chains, draws, k))
    energy = rng.normal(size=(chains, draws))
    azb.from_dict({"posterior": {"w": w},
                   "sample_stats": {"energy": energy,
                                    "diverging": np.zeros((chains, draws), bool)}},
                  dims={"w": ["w_dim_0"]}).to_netcdf(dst / "posterior.nc", engine="h5netcdf")
    marginals = [ExactMarginal(name=f"w[{i}]", var="w", coords={"w_dim_0": i},
                               dist=stats.norm(0.0, 1.0)) for i in range(k)]
    marginals[3] = replace(marginals[3], dist=stats.norm(0.5, 1.0))  # one wrong
    import xarray as xr

    idata = xr.open_datatree(dst / "posterior.nc", engine="h5netcdf")
    fitted = AnalyticFit(Posterior(model="synthetic", parameters={}, marginals=marginals))
    comparison = compare_idata(marginals, idata)
    spec = load_spec(EXAMPLES / "beta_bernoulli" / "coin.toml")
    check = CheckResult(fitted, SampleResult(idata, 1.0, 0.5, "nutpie"), comparison, {},
                        out=dst)
    write_report_data(dst, report_data(check, spec, spec.sampling, "# synthetic"))
    idata.close()
    started = time.perf_counter()
    render_run(dst)
    return dst, time.perf_counter() - started


# ------------------------------------------------------------------------------ helpers


def _html(folder: Path) -> str:
    return (folder / "report.html").read_text(encoding="utf-8")


def _top(html: str) -> str:
    """The verdict banner: the first element after the title."""
    body = html.split("<body>", 1)[1]
    match = re.search(r'<div class="verdict (\w+)"[^>]*>(.*?)</div>', body, re.S)
    assert match and body.index(match.group(0)) < body.index("<h2"), "verdict not at the top"
    return match.group(0)


# -------------------------------------------------------------------------- the content


@pytest.mark.nuts
def test_demo_index_links_every_report_with_its_verdict(demo):
    assert demo["code"] == 0, (demo["out"] / "index.html").read_text()
    index = (demo["out"] / "index.html").read_text()
    links = re.findall(r'<a href="([^"]+)">', index)
    assert sorted(links) == ["coin/coin/report.html", "evil/evil/report.html"]
    for link in links:
        report = demo["out"] / link
        assert report.exists()
        verdict = json.loads((report.parent / "summary.json").read_text())["verdict"]
        row = next(r for r in index.split("<tr>") if f'href="{link}"' in r)
        assert f'class="tag {verdict}"' in row and f">{verdict}</span>" in row


@pytest.mark.nuts
def test_pass_fail_inconclusive_say_so_at_the_top(demo, failing, inconclusive):
    for folder, verdict in ((demo["evil"], "pass"), (demo["coin"], "pass"),
                            (failing, "fail"), (inconclusive, "inconclusive")):
        banner = _top(_html(folder))
        assert f'class="verdict {verdict}"' in banner
        assert f"<strong>{verdict.upper()}</strong>" in banner
        sentence = {"pass": "agree on every parameter", "fail": "disagrees",
                    "inconclusive": "no verdict"}[verdict]
        assert sentence in banner, banner
    failing_html = _html(failing)
    # failing rows first in the cross-check table
    table = failing_html.split('<table class="wide">', 1)[1]
    assert table.index('class="row-fail"') < table.index('class="row-pass"')


@pytest.mark.nuts
def test_report_has_every_section(demo):
    html = _html(demo["evil"])
    for title in ("Marginal posteriors", "Analytic against sampled intervals", "Rank plots",
                  "Traces", "Energy", "Pair plot", "Posterior predictive check", "Timings",
                  "Sampler health"):
        assert f">{title}</h" in html, title
    for limit in ("≤ 1.01", "≥ 400.0", "≥ 0.3", "divergences", "max tree depth"):
        assert limit in html
    assert "not drawn" not in html.lower()
    assert "Prior to posterior" in _html(demo["coin"]) or "prior (dashed)" in _html(demo["coin"])


@pytest.mark.nuts
def test_names_are_escaped(demo):
    html = _html(demo["evil"])
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html


@pytest.mark.nuts
def test_report_command_rerenders_identically_without_sampling(demo, tmp_path, monkeypatch):
    import pymc

    def no_sampling(*args, **kwargs):
        raise AssertionError("bayescheck report sampled")

    monkeypatch.setattr(pymc, "sample", no_sampling)
    monkeypatch.setattr(pymc, "sample_posterior_predictive", no_sampling)
    copy = tmp_path / "run"
    shutil.copytree(demo["evil"], copy)
    (copy / "report.html").unlink()
    # Drawn again from the files (check drew from the posterior in memory).
    started = time.perf_counter()
    assert main(["report", str(copy)]) == 0
    seconds = time.perf_counter() - started
    assert _html(copy) == _html(demo["evil"])
    assert seconds < 30, f"re-render took {seconds:.1f} s"


@pytest.mark.parametrize(("exact", "estimates", "verdict", "words"), [
    ("pass", None, "pass", ["agree on every parameter"]),
    (None, "pass", "pass", ["every analytic point estimate lies where"]),
    ("pass", "pass", "pass", ["agree on every parameter", "every analytic point estimate"]),
    ("pass", "fail", "fail", ["agree on every parameter", "at least one analytic point"]),
    ("fail", "inconclusive", "fail", ["disagrees", "cannot be judged"]),
    ("inconclusive", "pass", "inconclusive", ["cannot judge", "no verdict"]),
    (None, "inconclusive", "inconclusive", ["cannot be judged", "no verdict"]),
])
def test_verdict_sentence_for_every_mode(exact, estimates, verdict, words):
    from bayescheck.inference.checking.check import combine_verdicts
    from bayescheck.reports.report import _verdict_sentence

    assert combine_verdicts(v for v in (exact, estimates) if v) == verdict
    sentence = _verdict_sentence(verdict, exact, estimates)
    assert sentence[0].isupper() and sentence.endswith(".")
    for w in words:
        assert w in sentence.lower(), sentence


def test_report_command_on_a_folder_without_a_run(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "neither report.json nor calibration.json found" in capsys.readouterr().err


@pytest.mark.slow
def test_large_models_are_summarised(large):
    folder, seconds = large
    html = _html(folder)
    assert "25 parameters:</strong> the 20 worst are shown" in html
    table = html.split('<table class="wide">', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr class=") == MAX_ROWS
    assert ">All z scores</h3>" in html
    # rank and trace plots of the parameters that mix worst, whatever the model's size
    assert ">Rank plots</h3>" in html and ">Traces</h3>" in html
    assert html.count("<img ") <= 10
    assert seconds < 30, f"rendering took {seconds:.1f} s"


# ------------------------------------------------------------------------------- Chromium


class _Recorder(BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):  # noqa: N802 - the http.server API
        type(self).hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


def _chromium(page: Path, work: Path) -> tuple[str, list[dict]]:
    """Open ``page`` (with a probe script appended to a copy) in headless Chromium; return
    the DOM after load and the requests the page made (from Chromium's net log)."""
    probe = ("<script>window.addEventListener('load', () => {"
             "const imgs = [...document.images];"
             "document.body.dataset.images = imgs.length;"
             "document.body.dataset.broken = imgs.filter("
             "i => !(i.complete && i.naturalWidth > 0)).length;"
             "const v = document.getElementById('verdict');"
             "if (v) document.body.dataset.colour = getComputedStyle(v).backgroundColor;"
             "});</script>")
    work.mkdir(parents=True, exist_ok=True)
    copy = work / "page.html"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"),
                    encoding="utf-8")
    net = work / "net.json"
    done = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={work / 'profile'}", f"--log-net-log={net}",
         "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(net.read_text())
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    # Requests the page made; Chromium's own background requests have no origin.
    page_requests = [e["params"] for e in log["events"]
                     if names.get(e["type"]) == "URL_REQUEST_START_JOB"
                     and "url" in e.get("params", {})
                     and e["params"].get("initiator") != "not an origin"]
    return done.stdout, page_requests


def _body_data(dom: str) -> dict:
    body = re.search(r"<body([^>]*)>", dom).group(1)
    return dict(re.findall(r'data-(\w+)="([^"]*)"', body))


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(),
                    reason="headless Chromium (/usr/bin/chromium, Debian's chromium package) "
                           "is not installed; .ci/run installs it")
def test_chromium_probe_sees_a_page_fetch(tmp_path):
    """The detector itself: a page that loads an image over HTTP is caught."""
    _Recorder.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        page = tmp_path / "bad.html"
        page.write_text(f'<!DOCTYPE html><html><body><img src="http://127.0.0.1:'
                        f'{server.server_port}/x.png"></body></html>')
        dom, requests = _chromium(page, tmp_path / "chromium")
    finally:
        server.shutdown()
    assert _Recorder.hits == ["/x.png"]
    assert any("127.0.0.1" in r.get("url", "") for r in requests), requests
    assert _body_data(dom)["broken"] == "1"


@pytest.mark.nuts
@pytest.mark.skipif(not CHROMIUM.exists(),
                    reason="headless Chromium (/usr/bin/chromium, Debian's chromium package) "
                           "is not installed; .ci/run installs it")
def test_reports_load_every_image_and_fetch_nothing(demo, failing, inconclusive, tmp_path):
    pages = {"pass": demo["evil"] / "report.html", "coin": demo["coin"] / "report.html",
             "fail": failing / "report.html", "inconclusive": inconclusive / "report.html",
             "index": demo["out"] / "index.html"}
    for name, page in pages.items():
        html = page.read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I), name
        dom, requests = _chromium(page, tmp_path / name)
        assert requests == [], f"{name}: the page fetched {requests}"
        data = _body_data(dom)
        if name == "index":
            continue
        assert int(data["images"]) >= 5, (name, data)
        assert data["broken"] == "0", (name, data)
        verdict = "pass" if name == "coin" else name
        assert data["colour"] == VERDICT_COLOURS[verdict], (name, data)
