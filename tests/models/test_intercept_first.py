"""``intercept=True`` from Python with features that leave out "intercept": refused at
construction, naming ``features``, instead of a numpy shape error deep in the stream."""

import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.models import ARD, LinearRegression
from bayescheck.models.validation import InvalidArgument


@pytest.mark.parametrize("build", [
    lambda f: LinearRegression(features=f, target="y", intercept=True, prior_mean=[0.0] * len(f),
                               prior_cov=1.0),
    lambda f: ARD(features=f, target="y", intercept=True),
])
def test_intercept_without_its_feature_is_refused_at_construction(build):
    with pytest.raises(InvalidArgument, match=r"features: with intercept=True the first "
                                              r"feature must be 'intercept'") as info:
        build(("x1", "x2"))
    assert info.value.argument == "features"
    with pytest.raises(InvalidArgument, match="first feature must be 'intercept'"):
        build(("x1", "intercept"))  # anywhere but first is not the design's order
    assert build(("intercept", "x1")).features == ("intercept", "x1")


def test_the_model_with_its_intercept_fits_in_the_stream():
    from bayescheck.inference.families.linear_regression import batch_statistic
    frame = pd.DataFrame({"x1": [1.0, 2.0, 3.0], "y": [1.0, 0.0, 2.0]})
    model = LinearRegression(features=("intercept", "x1"), target="y", intercept=True,
                             prior_mean=[0.0, 0.0], prior_cov=1.0)
    batch = next(DataSource.from_frame(frame).batches())
    assert batch_statistic(model, batch).root.shape == (3, 3)
