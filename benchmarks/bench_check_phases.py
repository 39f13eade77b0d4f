"""CPU seconds of each phase of one ``check``: analytic fit, NUTS, predictive, comparison, report.

    PYTENSOR_FLAGS=base_compiledir=/tmp/cold MPLBACKEND=Agg PYTHONPATH=. \
        .venv/bin/python benchmarks/bench_check_phases.py SPEC OUT [report|no-report]

CPU time (``time.process_time``: every thread of the process), not wall time, so that a
shared machine still gives comparable numbers. An empty ``base_compiledir`` is a cold run
(what CI has); run it again on the same directory for a warm one. ``NUTS`` includes nutpie's
compilation of the model; benchmarks/SUITE.md splits it from sampling. Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time

STARTED = time.process_time()

import bayescheck.reports.check as rc  # noqa: E402
from bayescheck.models import load_spec  # noqa: E402

PHASES = {"fit": "analytic fit", "sample_nuts": "NUTS (compile + sample)",
          "add_posterior_predictive": "posterior predictive", "compare_idata": "comparison",
          "render_run": "report figures"}


def timed(cpu: dict, label: str, f):
    def wrapper(*args, **kwargs):
        t = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            cpu[label] = cpu.get(label, 0.0) + time.process_time() - t
    return wrapper


def main(argv: list[str]) -> None:
    spec_path, out = argv[0], argv[1]
    kwargs = {} if len(argv) < 3 else {"report": argv[2] == "report"}
    cpu: dict[str, float] = {}
    for name, label in PHASES.items():
        setattr(rc, name, timed(cpu, label, getattr(rc, name)))
    t = time.process_time()
    result = rc.run_check(load_spec(spec_path), out, **kwargs)
    cpu["check"] = time.process_time() - t
    cpu["process (imports included)"] = time.process_time() - STARTED
    print(json.dumps({"spec": spec_path, "verdict": result.verdict,
                      "cpu_seconds": {k: round(v, 1) for k, v in cpu.items()}}))


if __name__ == "__main__":
    main(sys.argv[1:])
