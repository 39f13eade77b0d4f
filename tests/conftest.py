import os

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


@pytest.fixture
def examples_dir():
    return EXAMPLES


def pytest_collection_modifyitems(session, config, items):
    """Test files that run NUTS first, each file's tests kept in order.

    `make test` hands whole files to two workers (``--dist loadfile``) in collection order. A
    few NUTS files hold most of the suite's time (their check fixtures compile a PyMC model
    for one to two minutes); collected last, as the alphabet puts ``tests/reports`` after
    the rest, one worker finished the light files and then waited while the other compiled.
    Heaviest first, the light files fill the gaps. Which tests run does not change.
    """
    nuts_files = {item.path for item in items if item.get_closest_marker("nuts")}
    items.sort(key=lambda item: item.path not in nuts_files)  # stable: order kept within
