"""The stopping rule keeps its promise on planted panels: a subset of
benchmarks/stopping_simulation.py (whose full table is in docs/performance.md), with fewer
replications. Collections are drawn with replacement from a simulated population, so the truth
is exact; a miss is a tested quantity outside its interval at some round up to the design's
last item. Pass/fail verdicts in an 8 x 6 panel, early looks, missing cells; the naive rule
beside it shows the simulation can see a miss."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import stopping_simulation as sim  # noqa: E402

PASS_FAIL = sim.Scenario("pass/fail")
TARGETS = sim.targets_for("pass/fail")
LEVEL_MISS = 0.05


def simulate(row, rule="asymptotic", reps=400, seed=11):
    return sim.simulate(row, rule, reps, seed, pool=20_000)


@pytest.mark.parametrize("name", ["beta", "calibrated", "raw"])
def test_pass_fail_verdicts_in_a_small_design_miss_at_most_five_percent(name):
    row = sim.Row(name, PASS_FAIL, 60, TARGETS[name])
    result = simulate(row)
    assert result["miss"] <= LEVEL_MISS and result["wrong_sign"] == 0
    naive = simulate(row, "fixed_n")
    assert naive["miss"] > 2 * LEVEL_MISS       # the simulation sees what a miss is


def test_early_looks_at_every_item_keep_the_promise():
    row = sim.Row("all", PASS_FAIL, 300, {**TARGETS["all"], "min_items": 1}, round_items=1)
    assert simulate(row, reps=300)["miss"] <= LEVEL_MISS


def test_item_dominated_pass_fail_panels_keep_the_promise():
    row = sim.Row("all", sim.Scenario("pass/fail", item_sd=3.0), 60, TARGETS["all"])
    assert simulate(row)["miss"] <= LEVEL_MISS


@pytest.mark.slow
@pytest.mark.parametrize("name", ["beta", "calibrated", "raw"])
def test_pass_fail_verdicts_in_the_full_design_miss_at_most_five_percent(name):
    row = sim.Row(name, PASS_FAIL, 1500, TARGETS[name])
    result = simulate(row, reps=300)
    assert result["miss"] <= LEVEL_MISS and result["wrong_sign"] == 0


@pytest.mark.slow
def test_missing_cells_still_stop_a_calibrated_target_early():
    row = sim.Row("calibrated", sim.Scenario("pass/fail", missing=0.05), 1500,
                  TARGETS["calibrated"])
    result = simulate(row, reps=300)
    assert result["miss"] <= LEVEL_MISS
    assert result["stopped_early"] > 0.5 and result["calls_median"] < 1.0


def test_the_betting_sequence_holds_where_the_asymptotic_one_starts():
    row = sim.Row("calibrated", PASS_FAIL, 60, TARGETS["calibrated"])
    assert simulate(row, "betting", reps=200)["miss"] <= LEVEL_MISS


def test_continuous_scores_in_a_small_design_keep_the_promise():
    """No score range, so no variance prior: the Student-t factor carries the small sample."""
    row = sim.Row("all", sim.Scenario("gaussian"), 30, sim.targets_for("gaussian")["all"])
    assert simulate(row)["miss"] <= LEVEL_MISS


def test_retiring_settled_judges_keeps_the_promise_and_calls_fewer_judges():
    spread = sim.Scenario("pass/fail", judge_gap=0.4)
    row = sim.Row("calibrated", spread, 1500, TARGETS["calibrated"], round_items=50)
    retired = simulate(sim.Row(**{**row.__dict__, "retire": True}), reps=100)
    everyone = simulate(row, reps=100)
    assert retired["miss"] <= LEVEL_MISS and retired["wrong_sign"] == 0
    # the same stop (or earlier), with the settled judges left out of the later rounds
    assert retired["calls_median"] < 0.8 * everyone["calls_median"]
