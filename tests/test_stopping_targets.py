"""Stop targets (polyjudge.analyses.stopping.targets): the contrasts are the panel's beta and
backbone differences, missing blocks are left out, the decision follows the target, and the
sequences cover planted values at every round, also with cells missing at random."""
import numpy as np
import pytest

from polyjudge.analyses.stopping import check_target, contrast_plan, stopping_status
from polyjudge.analyses.stopping import targets
from polyjudge.cbc.estimator import double_center

LANGS, BBS = ["en", "de", "zh"], ["a", "b", "c", "d"]
DECIDE = {"decisions": ["calibrated", "raw"], "epsilon": 0.1}


def panel(n, rng, backbone=(0.0, 0.0, 0.0, 0.0), beta=None, sd=1.0):
    """Items x languages x backbones: item effect + backbone effect + beta + noise."""
    beta = np.zeros((len(LANGS), len(BBS))) if beta is None else beta
    return (rng.normal(0, 2, (n, 1, 1)) + np.asarray(backbone) + beta
            + rng.normal(0, sd, (n, len(LANGS), len(BBS))))


def test_the_mean_contrasts_are_beta_and_the_backbone_differences():
    rng = np.random.default_rng(0)
    scores = panel(50, rng, backbone=(1.0, 0.5, 0.0, -1.0))
    status = stopping_status(scores, DECIDE, LANGS, BBS)
    cells = status.cells.set_index("label")
    means = scores.mean(axis=0)
    beta = double_center(means)
    assert cells.loc["beta: de x c", "estimate"] == pytest.approx(beta[1, 2], abs=1e-12)
    assert cells.loc["calibrated: a vs d", "estimate"] == pytest.approx(
        means[:, 0].mean() - means[:, 3].mean(), abs=1e-12)
    assert cells.loc["raw/zh: b vs c", "estimate"] == pytest.approx(means[2, 1] - means[2, 2],
                                                                      abs=1e-12)
    counts = status.cells["kind"].value_counts()
    assert counts.to_dict() == {"beta": 12, "raw": 18, "calibrated": 6}


def test_an_item_with_a_missing_cell_is_left_out_of_every_contrast_and_counted():
    rng = np.random.default_rng(1)
    scores = panel(40, rng)
    holed = scores.copy()
    holed[[3, 17], [0, 2], [1, 3]] = np.nan
    status = stopping_status(holed, DECIDE, LANGS, BBS)
    complete = stopping_status(np.delete(scores, [3, 17], axis=0), DECIDE, LANGS, BBS)
    assert (status.n_items, status.n_complete_items) == (40, 38)
    np.testing.assert_allclose(status.cells[["estimate", "lower", "upper"]],
                               complete.cells[["estimate", "lower", "upper"]])


def test_the_union_bound_splits_the_error_over_the_tested_quantities():
    plan, _ = contrast_plan(LANGS, BBS, {"decisions": ["calibrated"], "epsilon": 0.1,
                                         "level": 0.9})
    tested = plan[plan["tested"]]
    assert list(tested["kind"].unique()) == ["calibrated"]
    np.testing.assert_allclose(tested["alpha"], 0.1 / 6)
    np.testing.assert_allclose(plan.loc[plan["kind"] == "beta", "alpha"], 0.1 / 12)
    plan, _ = contrast_plan(LANGS, BBS, {"beta_halfwidth": 0.2, "decisions": ["raw"],
                                         "epsilon": 0.1, "level": 0.9})
    assert plan["tested"].all() and len(plan) == 30
    np.testing.assert_allclose(plan["alpha"], 0.1 / 30)


def test_the_contrast_range_is_reached_by_extreme_blocks():
    _, coefs = contrast_plan(LANGS, BBS, DECIDE)
    lo, hi = targets.contrast_range(coefs, (-4, 4))
    k, m = len(LANGS), len(BBS)
    assert hi[0] == pytest.approx(2 * (1 - 1 / k) * (1 - 1 / m) * 8)  # beta cell
    assert (lo[12:], hi[12:]) == (pytest.approx(-8), pytest.approx(8))  # pair differences
    extreme = np.where(coefs[0].reshape(k, m) > 0, 4.0, -4.0)
    assert double_center(extreme)[0, 0] == pytest.approx(hi[0])


def test_clear_pairs_and_near_ties_stop_only_after_min_items():
    rng = np.random.default_rng(2)
    # calibrated differences 1.0, 0.5 and an exact tie between c and d
    scores = panel(400, rng, backbone=(1.5, 0.5, 0.0, 0.0), sd=0.3)
    target = {"decisions": ["calibrated"], "epsilon": 0.1, "min_items": 30}
    early = stopping_status(scores[:20], target, LANGS, BBS)
    assert not early.stop and early.reason.startswith("min_items not reached")
    status = stopping_status(scores, target, LANGS, BBS)
    assert status.stop and status.reason == "all pairs settled"
    assert status.undecided_pairs == [] and status.tied_pairs == ["calibrated: c vs d"]
    cells = status.cells.set_index("label")
    assert cells.loc["calibrated: a vs b", "lower"] > 0
    # without a margin the tie never stops
    no_margin = stopping_status(scores, {**target, "epsilon": 1e-9}, LANGS, BBS)
    assert not no_margin.stop and no_margin.undecided_pairs == ["calibrated: c vs d"]


def test_a_beta_halfwidth_target_stops_when_every_cell_is_narrow_enough():
    rng = np.random.default_rng(3)
    scores = panel(300, rng, sd=0.5)
    status = stopping_status(scores, {"beta_halfwidth": 0.5}, LANGS, BBS)
    assert status.stop and status.max_beta_halfwidth <= 0.5
    tight = stopping_status(scores, {"beta_halfwidth": 0.05}, LANGS, BBS)
    assert not tight.stop and "12 beta cell(s) wider than 0.05" in tight.reason
    bounded = stopping_status(scores.clip(-10, 10), {"beta_halfwidth": 0.5, "sequence": "bounded",
                                                     "score_range": [-10, 10]}, LANGS, BBS)
    assert bounded.max_beta_halfwidth > status.max_beta_halfwidth  # pays for the range


def test_no_complete_item_gives_infinite_intervals():
    scores = np.full((3, len(LANGS), len(BBS)), np.nan)
    status = stopping_status(scores, DECIDE, LANGS, BBS)
    assert status.n_complete_items == 0 and not status.stop
    assert np.isinf(status.max_beta_halfwidth)


@pytest.mark.parametrize("bad, key", [
    ({}, "beta_halfwidth"), ({"decisions": ["calibrated"]}, "epsilon"),
    ({"decisions": ["calibrated"], "epsilon": 0}, "epsilon"),
    ({"decisions": ["ranked"], "epsilon": 0.1}, "decisions"),
    ({"beta_halfwidth": 0.1, "level": 1.0}, "level"),
    ({"beta_halfwidth": -1}, "beta_halfwidth"),
    ({"beta_halfwidth": 0.1, "sequence": "bounded"}, "score_range"),
    ({"beta_halfwidth": 0.1, "sequence": "betting"}, "sequence"),
])
def test_unusable_targets_name_the_key(bad, key):
    with pytest.raises(ValueError, match=key):
        check_target(bad)


def test_simultaneous_coverage_at_every_round_with_cells_missing_at_random():
    """400 panels of 600 items with a planted beta and backbone effects; 5% of the cells are
    missing completely at random (about 45% of the items lose one). Every quantity of both
    decision kinds and every beta cell, at every round of 25 items from 50 on."""
    rng = np.random.default_rng(4)
    beta = double_center(rng.normal(0, 0.5, (len(LANGS), len(BBS))))
    backbone = np.array([0.4, 0.2, 0.0, -0.3])
    target = check_target({"beta_halfwidth": 0.2, **DECIDE, "level": 0.9})
    plan, coefs = contrast_plan(LANGS, BBS, target)
    truth = coefs @ (backbone + beta).ravel()
    scores = panel(400 * 600, rng, backbone, beta).reshape(400, 600, len(LANGS), len(BBS))
    scores[rng.random(scores.shape) < 0.05] = np.nan
    flat = scores.reshape(400, 600, -1)
    complete = np.isfinite(flat).all(axis=-1)
    n_used = complete.sum(axis=1).min()
    x = np.stack([flat[i, complete[i]][:n_used] @ coefs.T for i in range(400)])
    _, lower, upper = targets.sequence_bounds(x, plan, coefs, target)
    rounds = np.arange(49, n_used, 25)
    missed = ((lower[:, rounds] > truth) | (upper[:, rounds] < truth)).any(axis=(1, 2))
    assert missed.mean() <= 0.1 + 3 * np.sqrt(0.09 / 400)


def test_the_replay_decides_exactly_as_stopping_status_on_the_items_drawn():
    from polyjudge.analyses.stopping.replay import drawn_bounds, replay
    from polyjudge.analyses.stopping.replay import replay_target, round_ends

    rng = np.random.default_rng(5)
    scores = panel(120, rng, backbone=(0.6, 0.3, 0.0, -0.1), sd=0.8)
    scores[[4, 50, 51], 1, 2] = np.nan
    for sequence in ("asymptotic", "bounded"):
        target = {"beta_halfwidth": 0.6, **DECIDE, "min_items": 20, "sequence": sequence,
                  "score_range": [-12, 12]}
        checked = replay_target(target)
        plan, coefs, x = targets.item_contrasts(scores, checked, LANGS, BBS)
        orders = np.argsort(np.random.default_rng(9).random((2, 120)), axis=1)
        ends = round_ends(120, 40, 20)
        t_used, est, lower, upper = drawn_bounds(x, orders, ends, plan, coefs, checked)
        frame = replay(scores, target, 2, 9, 40, LANGS, BBS)
        for o, order in enumerate(orders):
            stops = []
            for r, end in enumerate(ends):
                status = stopping_status(scores[order[:end]], target, LANGS, BBS)
                assert status.n_complete_items == t_used[o, r]
                np.testing.assert_allclose(status.cells["lower"], lower[o, r], rtol=1e-9)
                np.testing.assert_allclose(status.cells["upper"], upper[o, r], rtol=1e-9)
                stops.append(status.stop)
            first = ends[stops.index(True)] if any(stops) else 120
            assert frame.loc[o, "stop_items"] == first
            assert frame.loc[o, "stopped"] == any(stops)


def test_the_replay_counts_wrong_decisions_and_coverage_against_the_full_panel():
    from polyjudge.analyses.stopping.replay import replay

    rng = np.random.default_rng(6)
    # a clear calibrated difference (a, b: 1.0) and exact ties among b, c, d
    scores = panel(600, rng, backbone=(1.0, 0.0, 0.0, 0.0), sd=1.0)
    target = {"decisions": ["calibrated"], "epsilon": 0.15, "min_items": 10}
    sequence = replay(scores, target, 200, 1, 10)
    naive = replay(scores, {**target, "sequence": "fixed_n"}, 200, 1, 10)
    assert (sequence["missed_big"] == 0).all() and sequence["agree"].mean() >= 0.95
    assert sequence["covered_every_round"].mean() >= 0.95
    # the fixed-n interval rechecked after every round: 60 looks at the ties
    assert naive["covered_every_round"].mean() < 0.85
    assert naive["stop_items"].median() < sequence["stop_items"].median()


def test_the_forecast_of_a_pilot_matches_the_replay_of_the_population():
    from polyjudge.analyses.stopping.replay import forecast, replay

    rng = np.random.default_rng(7)
    population = panel(1200, rng, backbone=(0.8, 0.4, 0.2, 0.0), sd=1.0)
    target = {"decisions": ["calibrated"], "epsilon": 0.1, "min_items": 20, "round_items": 20,
              "design_items": 1200}
    replayed = replay(population, target, 60, 2, 20)["stop_items"].median()
    # an earlier panel as large as the design predicts the replay of that panel
    predicted = forecast(population, target, 1200, n_sims=60, seed=3)
    assert predicted["design_calls"] == 1200 * 12
    assert predicted["median_calls"] == predicted["median_items"] * 12
    assert predicted["median_items"] <= predicted["p90_items"]
    assert abs(predicted["median_items"] - replayed) <= 0.2 * replayed
    # a width target depends on the variances only: a pilot of 100 items predicts it
    width = {"beta_halfwidth": 0.25, "min_items": 20, "round_items": 20, "design_items": 1200}
    replayed = replay(population, width, 60, 2, 20)["stop_items"].median()
    pilot = forecast(population[:100], width, 1200, n_sims=60, seed=3)
    assert abs(pilot["median_items"] - replayed) <= 0.2 * replayed
    easy = forecast(population[:50], {**target, "epsilon": 10.0}, 1200, n_sims=20, seed=3)
    assert easy["p90_items"] == 20 and easy["share_not_met"] == 0
    hard = forecast(population[:50], {**width, "beta_halfwidth": 1e-3, "max_items": 400}, 1200,
                    n_sims=20, seed=3)
    assert hard["median_items"] == 400 and hard["share_not_met"] == 1


def test_rounds_end_every_round_items_with_the_first_at_min_items():
    from polyjudge.analyses.stopping import round_ends

    assert round_ends(100, 25).tolist() == [25, 50, 75, 100]
    assert round_ends(100, 25, 20).tolist() == [20, 25, 50, 75, 100]
    assert round_ends(90, 25, 30).tolist() == [30, 50, 75, 90]
    assert round_ends(10, 25, 30).tolist() == [10]
    with pytest.raises(ValueError, match="round_items"):
        round_ends(10, 0)
