"""Grouping chains by mode (inference.modes.chain_modes) on draws of known distributions."""

import numpy as np
import pytest
from bayescheck.inference.checking.modes import chain_modes, slow_parameters

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


def _two_state_chain(n, switch, start, rng, low=-1.0, high=1.0, sd=0.1):
    """A chain that jumps between N(low, sd) and N(high, sd), switching with probability
    ``switch`` per draw; returns the draws and the number of switches."""
    state, out, moves = start, np.empty(n), 0
    for i in range(n):
        if i and rng.random() < switch:
            state, moves = 1 - state, moves + 1
        out[i] = rng.normal(high if state else low, sd)
    return out, moves


def test_two_rare_states_are_found_with_their_crossings():
    rng = np.random.default_rng(11)
    chains, moves = zip(*[_two_state_chain(1000, p, s, rng)
                          for p, s in ((0.01, 0), (0.0, 1), (0.01, 1), (0.01, 0))],
                        strict=True)
    x = np.stack(chains)
    (slow,) = slow_parameters({"a": x, "b": rng.normal(size=(4, 1000))},
                              {"a": 1.3, "b": 1.001})
    assert slow.name == "a" and slow.bimodal
    assert slow.low == pytest.approx(-1.0, abs=0.05) and slow.high == pytest.approx(1.0,
                                                                                    abs=0.05)
    assert slow.crossings == list(moves)  # states 20 sds apart: every switch is one crossing
    assert slow.crossings[1] == 0 and slow.share_high[1] == 1.0
    # a move counts once the chain reaches the other state's centre: a few draws late
    assert slow.share_high == pytest.approx([np.mean(c > 0) for c in x], abs=0.01)
    assert slow.far_chain == 1
    assert slow.suggested_draws >= 10 * 1000 / max(np.mean(moves), 0.5) - 1


def test_a_slow_drift_is_not_called_two_states_and_good_mixing_is_not_slow():
    rng = np.random.default_rng(5)
    drift = np.empty((4, 2000))
    for c in range(4):  # AR(1) with phi 0.995: one wide mode explored slowly
        v = rng.normal()
        for i in range(2000):
            v = 0.995 * v + rng.normal(scale=0.1)
            drift[c, i] = v
    (slow,) = slow_parameters({"a": drift}, {"a": 1.2})
    assert not slow.bimodal
    assert slow_parameters({"a": rng.normal(size=(4, 1000))}, {"a": 1.002}) == []
    # only the chains asked for are examined
    (some,) = slow_parameters({"a": drift}, {"a": 1.2}, chains=[0, 2])
    assert some.chains == [0, 2] and len(some.crossings) == 2 and some.far_chain in (0, 2)
