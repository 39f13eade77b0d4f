import os

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")

#: CPU seconds of the heaviest test files (benchmarks/suite_cpu.py, warm PyTensor cache,
#: round 7: benchmarks/SUITE.md). Only their order matters; a file not listed counts as
#: :data:`NUTS_FILE_CPU` if it runs NUTS, else 0.
FILE_CPU = {
    "tests/reports/test_semi_naive_bayes_check.py": 63,
    "tests/reports/test_bayesian_network_missing_check.py": 57,
    "tests/reports/test_bayesian_network_check.py": 55,
    "tests/reports/test_calibrate.py": 53,
    "tests/reports/test_gaussian_mixture_check.py": 49,
    "tests/reports/test_naive_bayes_check.py": 44,
    "tests/reports/test_report_html.py": 37,
    "tests/reports/test_check_nuts.py": 24,
    "tests/reports/test_ard_check.py": 22,
    "tests/reports/test_check_retry.py": 17,
    "tests/reports/test_counts_check.py": 16,
    "tests/inference/test_distributed.py": 14,
    "tests/reports/test_figure_cache.py": 12,
    "tests/estimators/test_categorical_estimators.py": 10,
    "tests/inference/engines/test_lapack.py": 9,  # round 8, 60 bit-for-bit comparisons
    "tests/inference/engines/test_quantiles.py": 9,  # round 8, grids against scipy
}
NUTS_FILE_CPU = 15  # one small check: compile and sample a few-parameter model


@pytest.fixture
def examples_dir():
    return EXAMPLES


def pytest_configure(config):
    """Hand files to the xdist workers in collection order (see below), not by test count.

    pytest-xdist 3 sorts ``--dist loadfile``'s files by their number of tests, largest first
    (``--loadscope-reorder``, on by default), which undid the order set below: the heaviest
    NUTS files (3-7 tests each) went out last and one worker finished minutes after the other.
    """
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(session, config, items):
    """The heaviest test files first, heaviest first, each file's tests kept in order.

    `make test` hands whole files to two workers (``--dist loadfile``) in this order, the next
    file to whichever worker runs out first: longest first, the light files fill the gaps at
    the end and the two finish within seconds of each other. A few NUTS files hold most of
    the suite's time (their check fixtures compile a PyMC model for up to a minute). Which
    tests run does not change.
    """
    nuts_files = {item.path for item in items if item.get_closest_marker("nuts")}

    def cpu(item):
        name = os.path.relpath(item.path, ROOT).replace(os.sep, "/")
        return FILE_CPU.get(name, NUTS_FILE_CPU if item.path in nuts_files else 0)

    items.sort(key=lambda item: -cpu(item))  # stable: order kept within a file and a tie
