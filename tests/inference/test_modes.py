"""Grouping chains by mode (inference.modes.chain_modes) on draws of known distributions."""

import numpy as np
import pytest
from bayescheck.inference.checking.modes import chain_modes

RNG = np.random.default_rng(7)


def _chains(centres, n=1000, sd=1.0):
    return np.stack([RNG.normal(c, sd, n) for c in centres])


def test_one_mode_is_one_group_and_every_chain_judges():
    draws = {"a": _chains([0, 0, 0, 0]), "b": _chains([5, 5, 5, 5], sd=0.1)}
    modes = chain_modes(draws, {"a": 0.1, "b": 5.0})
    assert modes.groups == [[0, 1, 2, 3]] and modes.clean and not modes.split
    assert modes.judged_chains == [0, 1, 2, 3]
    assert modes.estimate_distance_sd[0] < 0.5


def test_two_modes_separate_and_the_estimate_claims_the_nearest():
    # chains 1 and 3 sit 10 sds away in "a"; "b" agrees everywhere
    draws = {"a": _chains([0, 10, 0, 10]), "b": _chains([1, 1, 1, 1])}
    modes = chain_modes(draws, {"a": 0.2, "b": 1.0})
    assert modes.split and modes.groups == [[0, 2], [1, 3]]
    assert modes.judged_chains == [0, 2]
    assert modes.estimate_distance_sd[1] > 8 and modes.worst_parameter[1] == "a"
    # an estimate in the other mode claims the other chains
    other = chain_modes(draws, {"a": 9.9, "b": 1.0})
    assert other.judged_chains == [1, 3]
    # a wrong estimate still claims the nearest mode (and is then judged there, and fails)
    wrong = chain_modes(draws, {"a": 3.5, "b": 1.0})
    assert wrong.judged_chains == [0, 2] and wrong.estimate_distance_sd[0] > 3


def test_a_chain_between_modes_joins_them_and_nothing_is_split():
    wander = np.concatenate([RNG.normal(0, 1, 500), RNG.normal(10, 1, 500)])
    draws = {"a": np.stack([RNG.normal(0, 1, 1000), RNG.normal(10, 1, 1000), wander,
                            RNG.normal(0, 1, 1000)])}
    modes = chain_modes(draws, {"a": 0.0})
    assert not modes.split
    assert modes.judged_chains == [0, 1, 2, 3]


def test_groups_closer_than_apart_sd_are_not_clean():
    draws = {"a": _chains([0, 0, 3, 3])}  # 3 sds: not the same mode, not cleanly apart
    modes = chain_modes(draws, {"a": 0.0})
    assert len(modes.groups) == 2 and not modes.clean and not modes.split
    assert modes.judged_chains == [0, 1, 2, 3]


def test_bad_input():
    with pytest.raises(ValueError, match="no parameters"):
        chain_modes({}, {})
    with pytest.raises(ValueError, match=r"\(chain, draw\)"):
        chain_modes({"a": np.zeros(5)}, {"a": 0.0})
