"""Stop targets (polyjudge.analyses.stopping.targets): the contrasts are the panel's beta and
backbone differences, missing blocks are left out, the decision follows the target, and the
sequences cover planted values at every round, also with cells missing at random."""
import numpy as np
import pandas as pd
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


def test_each_quantity_uses_every_item_that_has_its_cells():
    rng = np.random.default_rng(1)
    scores = panel(40, rng)
    holed = scores.copy()
    holed[[3, 17], [0, 2], [1, 3]] = np.nan          # en x b in item 3, zh x d in item 17
    status = stopping_status(holed, DECIDE, LANGS, BBS)
    assert (status.n_items, status.n_complete_items) == (40, 38)
    cells = status.cells.set_index("label")
    # a beta cell needs the whole block: the incomplete items are left out
    complete = stopping_status(np.delete(scores, [3, 17], axis=0), DECIDE, LANGS, BBS)
    beta = status.cells["kind"] == "beta"
    np.testing.assert_allclose(status.cells.loc[beta, ["estimate", "lower", "upper"]],
                               complete.cells.loc[beta, ["estimate", "lower", "upper"]])
    assert (status.cells.loc[beta, "n_items"] == 38).all()
    # a raw pair needs its two cells: en b-c loses item 3 only, de a-b loses none
    assert cells.loc["raw/en: b vs c", "n_items"] == 39
    assert cells.loc["raw/de: a vs b", "n_items"] == 40
    assert cells.loc["raw/de: a vs b", "estimate"] == pytest.approx(
        (scores[:, 1, 0] - scores[:, 1, 1]).mean(), abs=1e-10)
    # a calibrated pair averages its differences over the languages that have both cells
    diff = holed[:, :, 1] - holed[:, :, 3]
    per_item = np.nanmean(diff, axis=1)
    assert cells.loc["calibrated: b vs d", "n_items"] == 40
    assert cells.loc["calibrated: b vs d", "estimate"] == pytest.approx(per_item.mean(),
                                                                        abs=1e-10)


def test_rounded_off_zero_contrasts_do_not_pass_for_certainty():
    """Twenty pass/fail blocks whose contrasts are exactly 0 (all pass; one whole language
    failing; one whole judge failing) leave the float product's 1e-17 residue; they must not
    stop a beta_halfwidth target, and no finite half-width falls below the scores'
    resolution (here 1/(3 x 4) of a pass)."""
    blocks = np.ones((20, len(LANGS), len(BBS)))
    blocks[5:10, 1, :] = 0.0                         # a whole language fails
    blocks[10:15, :, 2] = 0.0                        # a whole judge fails
    for sequence, score_range in (("asymptotic", [0, 1]), ("asymptotic", None),
                                  ("betting", [0, 1])):
        target = {"beta_halfwidth": 0.05, "sequence": sequence, "score_range": score_range}
        status = stopping_status(blocks, target, LANGS, BBS)
        assert not status.stop, sequence
        half = status.cells["halfwidth"]
        assert (half[np.isfinite(half)] >= 1 / 12).all(), sequence
    _, _, x = targets.item_contrasts(blocks, check_target({"beta_halfwidth": 0.05}))
    assert (x == 0).all()


def test_an_exhausted_table_claims_no_interval_on_too_few_items():
    from polyjudge.judges.rounds import NOT_YET, intervals_table

    rng = np.random.default_rng(8)
    scores = panel(2, rng)
    status = stopping_status(scores, {"beta_halfwidth": 0.1, **DECIDE}, LANGS, BBS)
    assert not status.cells["valid"].any() and not status.stop
    assert np.isinf(status.cells["halfwidth"]).all()
    bands = status.cells.loc[status.cells["kind"] == "beta", ["language", "backbone"]].assign(
        band_low=-1.0, band_high=1.0)
    stopping = pd.DataFrame({"items": [2]})
    table = intervals_table(status.cells, bands, stopping)
    assert (table["sequence"] == NOT_YET).all()
    # with 20 informative items the intervals are finite and labelled as sequences
    status = stopping_status(panel(25, rng), {"beta_halfwidth": 0.1, **DECIDE}, LANGS, BBS)
    assert status.cells["valid"].all()
    table = intervals_table(status.cells, bands, pd.DataFrame({"items": [25]}))
    assert table["sequence"].str.startswith("confidence sequence").all()


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
    betting = stopping_status(scores.clip(-10, 10), {"beta_halfwidth": 0.5, "sequence": "betting",
                                                     "score_range": [-10, 10]}, LANGS, BBS)
    assert betting.max_beta_halfwidth > status.max_beta_halfwidth  # pays for the range


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
    ({"beta_halfwidth": 0.1, "sequence": "betting"}, "score_range"),
    ({"beta_halfwidth": 0.1, "sequence": "bounded"}, "sequence"),
])
def test_unusable_targets_name_the_key(bad, key):
    with pytest.raises(ValueError, match=key):
        check_target(bad)


@pytest.mark.slow
def test_simultaneous_coverage_at_every_round_with_cells_missing_at_random():
    """400 panels of 600 items with a planted beta and backbone effects; 5% of the cells are
    missing completely at random (about 45% of the items lose one). Every quantity of both
    decision kinds and every beta cell, on every item it uses from its 50th on."""
    rng = np.random.default_rng(4)
    beta = double_center(rng.normal(0, 0.5, (len(LANGS), len(BBS))))
    backbone = np.array([0.4, 0.2, 0.0, -0.3])
    target = check_target({"beta_halfwidth": 0.2, **DECIDE, "level": 0.9})
    plan, coefs = contrast_plan(LANGS, BBS, target)
    truth = coefs @ (backbone + beta).ravel()
    scores = panel(400 * 600, rng, backbone, beta).reshape(400, 600, len(LANGS), len(BBS))
    scores[rng.random(scores.shape) < 0.05] = np.nan
    x = np.stack([targets.item_contrasts(s, target, LANGS, BBS)[2] for s in scores])
    used = np.isfinite(x).sum(axis=1)
    # a pair loses only the items missing one of its own cells (about 10% for a raw pair), a
    # beta cell every incomplete block (about 45%)
    assert (used[:, plan["kind"] != "beta"] > 500).all() and (used[:, :12] < 400).all()
    _, lower, upper = targets.sequence_bounds(targets.used_first(x), plan, coefs, target)
    looked = ((np.arange(600)[None, :, None] >= 49)
              & (np.arange(600)[None, :, None] < used[:, None]))
    missed = (((lower > truth) | (upper < truth)) & looked).any(axis=(1, 2))
    assert missed.mean() <= 0.1 + 3 * np.sqrt(0.09 / 400)


@pytest.mark.slow
def test_the_replay_decides_exactly_as_stopping_status_on_the_items_drawn():
    from polyjudge.analyses.stopping.replay import drawn_bounds, replay
    from polyjudge.analyses.stopping.replay import replay_target, round_ends

    rng = np.random.default_rng(5)
    scores = panel(120, rng, backbone=(0.6, 0.3, 0.0, -0.1), sd=0.8)
    scores[[4, 50, 51], 1, 2] = np.nan
    for sequence in ("asymptotic", "betting"):
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
                assert (status.cells["n_items"] == t_used[o, r]).all()
                # the betting sequence's pairs are tested at their decision points only in a
                # replay (exact there); the bounds of the beta cells, and every decision, agree
                same = (plan["kind"] == "beta").to_numpy() | (sequence == "asymptotic")
                np.testing.assert_allclose(status.cells["lower"][same], lower[o, r][same],
                                           rtol=1e-9)
                np.testing.assert_allclose(status.cells["upper"][same], upper[o, r][same],
                                           rtol=1e-9)
                np.testing.assert_array_equal(
                    status.cells["settled"], targets.settled(plan, lower[o, r], upper[o, r],
                                                             checked))
                stops.append(status.stop)
            first = ends[stops.index(True)] if any(stops) else 120
            assert frame.loc[o, "stop_items"] == first
            assert frame.loc[o, "stopped"] == any(stops)


def test_retiring_settled_judges_replays_as_a_collection_that_stops_calling_them():
    from polyjudge.analyses.stopping.replay import replay, round_ends

    rng = np.random.default_rng(11)
    # a far ahead of everyone: its pairs settle first, then a retires; b, c, d stay close
    scores = panel(400, rng, backbone=(2.0, 0.3, 0.0, -0.3), sd=0.8)
    target = {"decisions": ["calibrated"], "epsilon": 0.05, "min_items": 20}
    frame = replay(scores, target, 3, 4, 20, LANGS, BBS, retire=True)
    orders = np.argsort(np.random.default_rng(4).random((3, 400)), axis=1)
    for o, order in enumerate(orders):
        drawn = scores[order].copy()
        active, start, called, stop_items = list(BBS), 0, 0, 400
        for end in round_ends(400, 20, 20):
            gone = [i for i, b in enumerate(BBS) if b not in active]
            drawn[start:end][:, :, gone] = np.nan           # not called on these items
            called += (end - start) * len(active)
            status = stopping_status(drawn[:end], target, LANGS, BBS)
            start = end
            if status.stop:
                stop_items = end
                break
            active = targets.needed_judges(status.cells, active)
        assert frame.loc[o, "stop_items"] == stop_items
        assert frame.loc[o, "calls_fraction"] == pytest.approx(called / (400 * len(BBS)))
        assert frame.loc[o, "retired"] == len(BBS) - len(active)
    assert (frame["retired"] >= 1).all() and (frame["calls_fraction"] < frame["fraction"]).all()
    # and it never stops later than the collection that calls every judge
    full = replay(scores, target, 3, 4, 20, LANGS, BBS)
    assert (frame["stop_items"] <= full["stop_items"]).all()
    with pytest.raises(ValueError, match="decisions` targets only"):
        replay(scores, {"beta_halfwidth": 0.5}, 2, 4, 20, retire=True)


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


def test_the_variance_prior_guards_small_samples_and_fades_after():
    # one pseudo-observation of the range's variance up to PRIOR_FADE items, then PRIOR_FADE / t
    weights = targets.prior_items(200)[:, 0]
    assert weights[:targets.PRIOR_FADE] == pytest.approx(targets.PRIOR_ITEMS)
    assert weights[199] == pytest.approx(targets.PRIOR_ITEMS * targets.PRIOR_FADE / 200)
    # a spread far below the range: early the prior dominates the width, late it does not
    rng = np.random.default_rng(4)
    scores = np.clip(np.round(3 + rng.normal(0, 0.5, (1500, 3, 4))), 1, 5)
    with_range = {"beta_halfwidth": 0.1, "score_range": [1, 5], "design_items": 1500}
    without = {"beta_halfwidth": 0.1, "design_items": 1500}
    early = [stopping_status(scores[:30], t, LANGS, BBS).max_beta_halfwidth
             for t in (with_range, without)]
    late = [stopping_status(scores, t, LANGS, BBS).max_beta_halfwidth
            for t in (with_range, without)]
    assert early[0] > 1.5 * early[1]
    assert late[0] == pytest.approx(late[1], rel=0.005)
