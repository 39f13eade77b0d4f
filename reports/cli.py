"""The ``bayescheck`` command line (also ``python -m reports``).

Exit codes: 0 every parameter agrees; 1 a disagreement; 3 inconclusive (sampler diagnostics
failed); 2 bad spec, bad data or bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bayescheck.inference.checking.cost import DEFAULT_MAX_HOURS
from bayescheck.inference.engines.errors import NotIdentified
from bayescheck.models.errors import BayescheckError

from .outdir import output_folder, prepare_folder

__all__ = ["main"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: What a check writes: removed before a new check into the same folder, so that a check
#: that fails half-way leaves no older result that looks current.
CHECK_RESULTS = ("posterior.json", "summary.json", "report.json", "report.html",
                 "comparison.csv", "estimates.csv", "posterior.nc", "posterior_full.nc")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 2, like every other bad input
        self.print_usage(sys.stderr)
        print(f"bayescheck: error: {message}", file=sys.stderr)
        raise SystemExit(2)



def _seed(text: str) -> int:
    """``--seed``: a whole number from 0 to 2^64 - 1 (argparse exits 2 on anything else)."""
    import argparse

    from bayescheck.models.spec import MAX_SEED, seed_message

    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(seed_message(seed))
    return seed

def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bayescheck")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked.

    importlib.metadata, which finds the installed version, costs about a tenth of ``fit``'s
    start-up.
    """

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):  # noqa: A002 - argparse's keyword
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"bayescheck {_version()}")
        parser.exit()


def _path(text: str) -> Path:
    """A path option's value; an empty one (an unset shell variable) is refused.

    ``Path("")`` is the working folder: ``--out ''`` would make it the output folder.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("empty path (an unset shell variable?); name a "
                                         "folder, '.' for the working folder")
    return Path(text)


_SPEC_HELP = "the TOML spec file (model, [data], [prior], ...)"
_QUIET_HELP = "no progress lines on standard error"


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bayescheck", description="Closed-form Bayesian models cross-checked "
                                               "against NUTS.")
    p.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    f = sub.add_parser("fit", help="analytic / EM fit only: writes DIR/posterior.json")
    f.add_argument("spec", type=_path, help=_SPEC_HELP)
    f.add_argument("--out", type=_path, help="output folder (default: bayescheck-output/SPEC)")
    f.add_argument("--resume", action="store_true",
                   help="continue a stream, or a --scheduler fit, from the checkpoint "
                        "in --out")
    f.add_argument("--scheduler", metavar="ADDRESS",
                   help="fit on a Dask cluster: a dask.distributed scheduler address "
                        "(tcp://host:8786), or 'local' to start a local cluster "
                        "(needs bayescheck[dask])")
    f.add_argument("--workers", type=int, metavar="N",
                   help="workers of --scheduler local (default 2)")
    f.add_argument("--quiet", action="store_true", help=_QUIET_HELP)
    f.add_argument("--verbose", action="store_true",
                   help="print every parameter (default: a summary, the largest tables cut "
                        "short; every value is in posterior.json)")

    c = sub.add_parser("check", help="analytic fit + NUTS + comparison + report")
    c.add_argument("spec", type=_path, help=_SPEC_HELP)
    c.add_argument("--out", type=_path, help="output folder (default: bayescheck-output/SPEC)")
    c.add_argument("--draws", type=int, help="draws per chain (default: the spec's "
                                             "[sampling] draws, else 1000)")
    c.add_argument("--tune", type=int, help="tuning steps per chain (default: [sampling] "
                                            "tune, else 1000)")
    c.add_argument("--chains", type=int, help="number of chains (default: [sampling] "
                                              "chains, else 4)")
    c.add_argument("--seed", type=_seed,
                   help="random seed, 0 to 2^64 - 1 (default: [sampling] seed, else 0)")
    c.add_argument("--sampler", default="nutpie", choices=["nutpie", "pymc"],
                   help="NUTS implementation (default: nutpie)")
    # models.spec.ADAPTATIONS, spelled out: importing it would load numpy before main() runs
    c.add_argument("--adaptation", choices=("diag", "low_rank"),
                   help="the mass matrix NUTS adapts: diag, or low_rank (nutpie only) for "
                        "strongly correlated posteriors (default: [sampling] adaptation, "
                        "else diag)")
    c.add_argument("--no-retry", action="store_true",
                   help="when the sampler's health leaves a check without a verdict, stop "
                        "there (default: sample once more with twice the tuning steps and "
                        "draws and judge that run alone)")
    c.add_argument("--max-hours", type=float, default=DEFAULT_MAX_HOURS, dest="max_hours",
                   metavar="H", help="refuse a sampling whose estimated time (said on stderr "
                                     "before it starts) is above H hours (default "
                                     f"{DEFAULT_MAX_HOURS:g}; inf: no limit)")
    c.add_argument("--model", help="with a model.py instead of a spec: the name of the "
                                   "pm.Model it defines, when it defines several")
    c.add_argument("--quiet", action="store_true", help=_QUIET_HELP)

    r = sub.add_parser("predict", help="predictions for new rows from a saved fit: the "
                                       "posterior predictive (regression, ARD, counts), "
                                       "responsibilities (mixture), decisions (naive_bayes), "
                                       "P(node | observed cells) (bayesian_network)")
    r.add_argument("spec", type=_path, help=_SPEC_HELP)
    r.add_argument("--model-from", type=_path, required=True, dest="model_from",
                   help="folder holding posterior.json written by 'bayescheck fit SPEC'")
    r.add_argument("--data", type=_path, help="CSV or Parquet file (or glob) of new rows; "
                                             "not for beta_bernoulli / dirichlet_categorical, "
                                             "whose prediction is the next outcome")
    r.add_argument("--level", type=float, default=0.9,
                   help="mass of the central predictive interval (default 0.9)")
    r.add_argument("--loss", type=_path, help="naive and semi-naive Bayes: loss matrix CSV: header "
                                             "option,<class>,...; one row per option (default: "
                                             "the spec's [decision], else zero-one loss)")
    r.add_argument("--target", action="append", metavar="NODE",
                   help="bayesian_network: the node to predict from the other nodes' observed "
                        "cells (repeat for several; default: the targets of the spec's "
                        "[[query]] tables)")
    r.add_argument("--out", type=_path, help="output CSV (default: standard output)")

    k = sub.add_parser("calibrate", help="simulation-based calibration of the engine against "
                                         "the declared model")
    k.add_argument("spec", type=_path, help=_SPEC_HELP)
    k.add_argument("--simulations", type=int, default=1000,
                   help="number of simulated data sets (default: 1000)")
    k.add_argument("--engine", default="analytic", choices=["analytic", "nuts"],
                   help="what is calibrated: the closed form (default) or NUTS")
    k.add_argument("--seed", type=_seed, default=0, help="random seed (default: 0)")
    k.add_argument("--block", type=int,
                   help="bayesian_network with missing cells, --engine nuts: simulations per "
                        "compiled declaration (default: all in one; README, Calibration)")
    k.add_argument("--out", type=_path, help="output folder (default: bayescheck-output/SPEC)")
    k.add_argument("--quiet", action="store_true", help=_QUIET_HELP)

    o = sub.add_parser("report", help="re-draw DIR/report.html from a finished check's or "
                                      "calibration's files (no sampling)")
    o.add_argument("dir", type=_path, help="the --out folder of a finished 'bayescheck check' "
                                          "or 'bayescheck calibrate'")

    d = sub.add_parser("demo", help="check every example and write an index page")
    d.add_argument("--out", type=_path, default=Path("demo-output"),
                   help="output folder (default: demo-output)")
    d.add_argument("--examples", type=_path, default=EXAMPLES,
                   help="folder of examples, one sub-folder of specs per model (default: the "
                        "bundled examples)")
    d.add_argument("--simulations", type=int, default=1000,
                   help="simulation-based calibration of each example whose model supports "
                        "it, with this many simulations (0: none)")
    return p


def _default_out(spec: Path) -> Path:
    return Path("bayescheck-output") / spec.stem


def _positive(name, value):
    if value is not None and value < (0 if name == "tune" or name == "seed" else 1):
        raise BayescheckError(f"--{name} must be {'>= 0' if name in ('tune', 'seed') else '>= 1'}"
                              f", got {value}")


def _contract_numbers(content: dict) -> dict:
    """The numbers of posterior.json that the contract says are finite when they exist.

    Each parameter's mean, sd and cov, and the log evidence. Other fields may hold an
    infinity on purpose (the infinite precision of a weight ARD pruned).
    """
    return {"log_evidence": content.get("log_evidence"),
            "parameters": {name: {k: p[k] for k in ("mean", "sd", "cov") if k in p}
                           for name, p in content.get("parameters", {}).items()
                           if isinstance(p, dict)}}


def _cmd_fit(args) -> int:
    from bayescheck.models.spec import load_spec

    spec = load_spec(args.spec)
    out = args.out or _default_out(args.spec)
    with output_folder(out, results=("posterior.json",)):
        _fit_into(spec, out, args)
    return 0


def _fit_into(spec, out: Path, args) -> None:
    """``bayescheck fit``'s work, once the output folder is held."""
    from bayescheck.inference.families import fit

    from .fit_summary import (
        marginals_heading,
        missing_moments,
        parameter_lines,
        posterior_document,
        summary_lines,
    )
    from .posterior_file import sealed
    from .writers import first_non_finite, rows_and_batches, write_json

    result = fit(spec, out=out, resume=args.resume, progress=not args.quiet,
                 scheduler=args.scheduler, workers=args.workers)
    where = spec.data.label if spec.data else spec.path
    why = missing_moments(result, spec)
    if why is not None:
        raise BayescheckError(f"{where}: {why}")
    document = posterior_document(result, spec)
    # The last line of defence: exit 0 must never come with a number the arithmetic lost.
    bad = first_non_finite(_contract_numbers(document))
    if bad is not None:
        raise BayescheckError(f"{where}: the fit produced a non-finite value ({bad}); the data "
                              f"or the prior exceed the range of float64 arithmetic: rescale "
                              f"them")
    write_json(out / "posterior.json", sealed(document))
    print(f"{result.model}: {rows_and_batches(result.record.n_rows, len(result.record.batches))}, "
          f"{result.record.seconds:.3f} s")
    heading = marginals_heading(result, spec)
    if heading and result.posterior.marginals:
        print(f"  {heading}:")
    lines = [(m.var, f"  {m.name:<24} mean {m.mean: .6g}"
                     + (f"  sd {m.dist.std():.6g}" if m.dist is not None else ""))
             for m in result.posterior.marginals]
    lines += [(e.var, f"  {e.name:<24} estimate {e.value: .6g}")
              for e in result.posterior.estimates]
    for line in (parameter_lines(lines) if getattr(args, "verbose", True)
                 else summary_lines(lines, out / "posterior.json")):
        print(line)
    for note in document.get("notes", []):
        print(f"  {note}")
    if result.posterior.log_evidence is not None:
        print(f"  log evidence {result.posterior.log_evidence:.6f}")
    print(f"wrote {out / 'posterior.json'}")
    _warn_not_converged(args.spec, result)


def _warn_not_converged(spec, fit) -> None:
    """On stderr: an iterative fit that stopped at ``max_iter`` before converging."""
    info = fit.record.info or {}
    if info.get("converged") is False:
        print(f"bayescheck: warning: {spec}: the {fit.model} fit stopped at max_iter "
              f"({info.get('n_iter')} iterations) without converging; its estimates are "
              f"where it stopped (posterior.json: \"fit\": {{\"converged\": false}}); "
              f"raise [fit] max_iter to go on", file=sys.stderr)


def _cmd_check(args) -> int:
    from bayescheck.models.resources import check_sampler_setting
    from bayescheck.models.spec import load_spec

    from .check import EXIT_CODES, run_check

    for name in ("draws", "tune", "chains", "seed"):
        _positive(name, getattr(args, name))
    for name in ("draws", "tune", "chains"):
        if getattr(args, name) is not None:
            check_sampler_setting(name, getattr(args, name), key=f"--{name}")
    if not args.max_hours > 0:  # also NaN
        raise BayescheckError(f"--max-hours must be a positive number of hours (inf: no "
                              f"limit), got {args.max_hours}")
    if args.adaptation not in (None, "diag") and args.sampler != "nutpie":
        raise BayescheckError(f"--adaptation {args.adaptation} needs --sampler nutpie")
    out = args.out or _default_out(args.spec)
    if args.spec.suffix == ".py":  # the user's own PyMC model
        return _check_model_file(args, out)
    if args.model is not None:
        raise BayescheckError(f"--model names a pm.Model inside a model.py file; "
                              f"{args.spec} is a spec")
    spec = load_spec(args.spec)
    with output_folder(out, results=CHECK_RESULTS):
        result = run_check(spec, out, draws=args.draws, tune=args.tune, chains=args.chains,
                           seed=args.seed, sampler=args.sampler, progress=not args.quiet,
                           retry=not args.no_retry, max_hours=args.max_hours,
                           adaptation=args.adaptation)
    _print_check(result)
    _warn_not_converged(args.spec, result.fit)
    return EXIT_CODES[result.verdict]


def _check_model_file(args, out: Path) -> int:
    from .check import EXIT_CODES
    from .model_check import check_model_file

    with output_folder(out, results=CHECK_RESULTS):
        result = check_model_file(args.spec, name=args.model, out=out, draws=args.draws,
                                  tune=args.tune, chains=args.chains, seed=args.seed,
                                  sampler=args.sampler, progress=not args.quiet,
                                  max_hours=args.max_hours,
                                  adaptation=args.adaptation or "diag")
    print(f"{args.spec}: {result.exact.family}: {result.verdict}")
    for line in result.advice:
        print(f"  {line}")
    print(f"wrote {out}")
    return EXIT_CODES[result.verdict]


def _cmd_predict(args) -> int:
    from bayescheck.data.sources import DataSource
    from bayescheck.models.spec import load_spec

    from .posterior_file import read_posterior
    from .predict import prediction_table, require_predictions
    from .writers import write_text_atomic

    if args.out is not None and args.out.is_dir():
        raise BayescheckError(f"--out {args.out}: is a folder; --out names the CSV file to "
                              f"write (for example {args.out / 'predictions.csv'})")
    spec = load_spec(args.spec)
    require_predictions(spec)
    where = args.model_from / "posterior.json"
    posterior = read_posterior(args.model_from)
    source = None if args.data is None else DataSource(args.data.resolve(),
                                                           text=getattr(spec.data, "text", False))
    table = prediction_table(spec, posterior, source, level=args.level, loss=args.loss,
                             target=args.target, where=str(where))
    if args.out is None:
        table.to_csv(sys.stdout, index=False)
    else:
        prepare_folder(args.out.parent, option=f"--out {args.out}: its folder")
        write_text_atomic(args.out, table.to_csv(index=False), manifest=False)
        print(f"wrote {len(table)} row(s) to {args.out}", file=sys.stderr)
    return 0


def _print_check(result) -> None:
    comp = result.comparison
    print(f"{result.fit.model}: {result.verdict.upper()}")
    if comp is not None:
        skipped = comp.not_judged()
        print(f"  exact marginals: {comp.verdict} (|z| threshold {comp.z_threshold:.3f} over "
              f"{comp.n_comparisons} comparisons"
              + (f"; {len(skipped)} statistic(s) not judged" if skipped else "") + ")")
        for p in comp.parameters:
            print(f"  {p.name:<24} {p.verdict:<12} exact mean {p.analytic['mean']: .5g}  "
                  f"NUTS {p.sampled['mean']: .5g}  max|z| {p.max_abs_z:.2f}")
            for stat, why in p.not_judged.items():
                print(f"  {'':<24} {stat} not judged: {why}")
        for problem in comp.diagnostics.problems:
            print(f"  sampler: {problem}")
    est = result.estimates
    if est is not None:
        print(f"  point estimates against the full posterior: {est.verdict} "
              f"({100 * est.level:g} % intervals"
              + ("; information: fails the verdict only on a numerical inconsistency"
                 if est.informational else "") + ")")
        for p in est.parameters:
            print(f"  {p.name:<24} {p.verdict:<12} estimate {p.estimate: .5g}  "
                  f"NUTS mean {p.sampled['mean']: .5g}  ({p.distance_sd:+.2f} sd)"
                  + (f"  {'; '.join(p.reasons)}" if p.reasons else ""))
        for problem in est.diagnostics.problems:
            print(f"  sampler (full posterior): {problem}")
    for cert in result.fit.record.certificates:
        print(f"  {cert['name']}: {cert['verdict']}: {cert['reason']}")
    for first, again in zip(result.attempts, result.attempts[1:], strict=False):
        if first["check"] == again["check"]:
            print(f"  sampler ({first['check']}): {first['draws']} draws after {first['tune']} "
                  f"tuning steps (seed {first['seed']}) gave no verdict "
                  f"({'; '.join(first['problems'])}); judged on a second run of "
                  f"{again['draws']} draws after {again['tune']} (seed {again['seed']})")
    print(f"report: {result.out / 'report.html'}")


def _cmd_calibrate(args) -> int:
    from bayescheck.models.spec import load_spec

    from .calibrate import EXIT_CODES, check_arguments, run_calibration
    from .report import render_run

    _positive("seed", args.seed)
    _positive("block", args.block)
    spec = load_spec(args.spec)
    check_arguments(spec, args.simulations)  # before the output folder is created
    out = args.out or _default_out(args.spec)
    with output_folder(out, results=("calibration.json", "report.html")):
        result = run_calibration(spec, out, simulations=args.simulations, seed=args.seed,
                                 engine=args.engine, progress=not args.quiet, block=args.block)
        render_run(out)
    print(f"{spec.model.name}: calibration {result.verdict.upper()} ({result.simulations} "
          f"simulations, {args.engine} engine; a parameter fails below p = "
          f"{result.threshold:.3g})")
    for p in result.parameters:
        print(f"  {p.name:<24} {p.verdict:<5} chi-square p {p.p_value:.3g} (adjusted "
              f"{p.p_adjusted:.3g})  KS p {p.ks_p_value:.3g}")
    print(f"report: {out / 'report.html'}")
    return EXIT_CODES[result.verdict]


def _cmd_report(args) -> int:
    from .report import EXIT_CODES, REPORT_JSON, render_run
    from .writers import read_json

    started = time.perf_counter()
    render_run(args.dir)
    # The check's verdict when the folder holds one, else the calibration's.
    verdict = (read_json(args.dir / REPORT_JSON) or
               read_json(args.dir / "calibration.json"))["verdict"]
    print(f"{verdict.upper()}: wrote {args.dir / 'report.html'} in "
          f"{time.perf_counter() - started:.2f} s")
    return EXIT_CODES[verdict]


def _demo_calibration(spec, out: Path, simulations: int):
    """Calibrate an example whose model supports it (analytic engine); None otherwise."""
    from bayescheck.models.interface import Calibratable

    from .calibrate import run_calibration

    if simulations == 0 or not isinstance(spec.model, Calibratable):
        return None
    return run_calibration(spec, out, simulations=simulations)


def _demo_folder(out: Path):
    """An example's folder under ``demo --out``, held and emptied of every earlier result.

    Every file its manifest lists is removed (an earlier demo's, also those this run will not
    write again, such as a calibration a run with ``--simulations 0`` would otherwise leave
    beside the new check's report); a file bayescheck did not write there is refused, never
    removed.
    """
    from bayescheck.data.output_files import listed_files

    earlier = sorted(listed_files(out))
    return output_folder(out, results=(*CHECK_RESULTS, "calibration.json", *earlier))


def _cmd_demo(args) -> int:
    if args.simulations != 0 and args.simulations < 10:
        raise BayescheckError(f"--simulations must be 0 (no calibration) or at least 10, got "
                              f"{args.simulations}")
    specs = sorted(args.examples.glob("*/*.toml"))
    if not specs:
        raise BayescheckError(f"{args.examples}: no example specs (*/*.toml) found")
    with output_folder(args.out):
        return _demo_into(args, specs)


def _demo_into(args, specs: list[Path]) -> int:
    """``bayescheck demo``'s work, once the output folder is held."""
    from bayescheck.models.spec import load_spec

    from .check import EXIT_CODES, run_check
    from .html import render_index
    from .writers import write_text_atomic

    entries, codes = [], []
    for i, path in enumerate(specs, 1):
        name = f"{path.parent.name}/{path.stem}"
        print(f"[{i}/{len(specs)}] {name} ...", file=sys.stderr, flush=True)
        out = args.out / path.parent.name / path.stem
        started = time.perf_counter()
        try:
            spec = load_spec(path)
            with _demo_folder(out):
                # Calibrated first, so that the check's report holds the calibration section.
                calibration = _demo_calibration(spec, out, args.simulations)
                result = run_check(spec, out)
        except BayescheckError as exc:
            entries.append({"name": name, "model": "?", "verdict": "error", "message": str(exc),
                            "report": None, "seconds": time.perf_counter() - started})
            codes.append(2)
            continue
        checks = [f"exact marginals ({len(result.comparison.parameters)}): "
                  f"{result.comparison.verdict}"] if result.comparison else []
        if result.estimates is not None:
            checks.append(f"point estimates ({len(result.estimates.parameters)}): "
                          f"{result.estimates.verdict}")
        if calibration is not None:
            checks.append(f"calibration ({args.simulations} simulations): "
                          f"{calibration.verdict}")
        entries.append({"name": name, "model": result.fit.model, "verdict": result.verdict,
                        "report": f"{path.parent.name}/{path.stem}/report.html",
                        "checks": checks, "message": "",
                        "seconds": time.perf_counter() - started})
        codes.append(EXIT_CODES[result.verdict])
        if calibration is not None and calibration.verdict == "fail":
            codes.append(1)
        print(f"      {'; '.join(checks)}", file=sys.stderr)
    write_text_atomic(args.out / "index.html", render_index(entries))
    print(f"wrote {args.out / 'index.html'}")
    if 2 in codes:
        return 2
    if 1 in codes:
        return 1
    return 3 if 3 in codes else 0


#: OpenBLAS's idle threads spin for 2^28 CPU cycles (about 0.1 s) before they sleep; 2^4 (its
#: least) makes them sleep at once, a thread woken only when a BLAS call needs it.
BLAS_THREAD_TIMEOUT = "4"


def _idle_blas_threads_sleep() -> None:
    """Make OpenBLAS's idle threads sleep instead of spinning, unless the user chose otherwise.

    Loading numpy's OpenBLAS, and then scipy's (the stream's QR), each starts a thread that
    spins for about 0.1 s of CPU waiting for work that ``fit`` does not give it (its
    streams run BLAS on one thread): 0.2 s of a 1.0-1.2 s fit of 1e6 rows, on the core the
    reading threads need. The variable is read when a library loads, so this must run
    before numpy is imported; the number of threads is unchanged.
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Usage errors return 2 (after argparse printed the usage and the message); ``--help``
    and ``--version`` return 0.
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits; a caller in Python gets the code instead
        return exc.code if isinstance(exc.code, int) else 2
    if argv is None and args.command == "fit":
        _idle_blas_threads_sleep()
    commands = {"fit": _cmd_fit, "check": _cmd_check, "calibrate": _cmd_calibrate,
                "predict": _cmd_predict, "report": _cmd_report, "demo": _cmd_demo}
    try:
        code = commands[args.command](args)
        if argv is None:
            # Run as the command: the process ends next. The interpreter's last garbage
            # collection walks every object the imports made (numpy, scipy, pyarrow: about
            # 44,000), 0.05-0.1 s idle and 0.4-0.6 s on the shared machine after a fit;
            # frozen objects are skipped (and freed with the process). Not when called from
            # Python with arguments (tests): there the process goes on.
            import gc
            gc.freeze()
        return code
    except BayescheckError as exc:
        print(f"bayescheck: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except NotIdentified as exc:  # raised by an engine outside a family's translation
        print(f"bayescheck: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"bayescheck: error: out of memory during '{args.command}': the data, the model "
              f"or the sampler settings need more memory than this machine could give (its "
              f"estimates are in docs/errors.md, Resource limits); use fewer rows per batch, "
              f"fewer columns, states or parents, or lower draws and chains",
              file=sys.stderr)
        return 2
    except OSError as exc:  # a file or folder the system refuses: the user's to fix
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"bayescheck: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
