"""The missingness check (polyjudge.analyses.missingness): known answers, peers (statsmodels'
Holm, scipy's ranks and Mann-Whitney test), planted truth (cells missing at random are flagged in
at most about alpha of panels; a judge whose low scores go missing is flagged), and its use by
the stopping rule of a collection (polyjudge.judges.rounds) and the results page."""
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from statsmodels.stats.multitest import multipletests

from polyjudge.analyses.missingness import (CHECK_COLUMNS, _draws, centred_ranks, flagged_judges,
                                            holm, informative_missing_check)
from polyjudge.analyses.stopping import stopping_status
from polyjudge.judges import rounds
from polyjudge.report.page.results_folder import Results
from polyjudge.report.page.sections import informative_missing_warning


def panel(rng, n=80, k=4, m=4, item_sd=1.0):
    """Scores that agree across judges through an item effect (a 1-5 rubric)."""
    z = (rng.normal(0, item_sd, (n, 1, 1)) + rng.normal(0, 0.3, (n, k, 1))
         + rng.normal(0, 0.6, (n, k, m)))
    return np.clip(np.round(3 + z), 1, 5)


def test_holm_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan, 0.005])
    finite = np.isfinite(p)
    expected = multipletests(p[finite], method="holm")[1]
    got = holm(p)
    assert np.isnan(got[4])
    np.testing.assert_allclose(got[finite], expected)


def test_centred_ranks_are_scipy_midranks():
    z = np.array([3.0, 1.0, 2.0, 2.0, 5.0, 1.0])
    n = len(z)
    np.testing.assert_allclose(centred_ranks(z),
                               (scipy.stats.rankdata(z) - (n + 1) / 2) / n)


def test_known_answer_one_language():
    # judge 0 misses items 0 and 1, where the others score 1 and 2 (the lowest of 5 items)
    others = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    scores = np.stack([others, others, others], axis=1)[:, None, :]
    scores[:2, 0, 0] = np.nan
    check = informative_missing_check(scores, ["en"], ["a", "b", "c"], n_permutations=999)
    assert list(check.columns) == CHECK_COLUMNS
    row = check[(check["judge"] == "a") & (check["language"] == "all")].iloc[0]
    assert (row["n_cells"], row["n_missing"]) == (5, 2)
    assert row["other_mean_missing"] == 1.5 and row["other_mean_observed"] == 4.0
    # centred ranks (r - 3) / 5 of ranks 1 and 2: (-0.4 - 0.2) / 2
    assert row["rank_effect"] == pytest.approx(-0.3)
    # exact two-sided p: of the 10 subsets of 2 of 5, {1, 2} and {4, 5} have |sum| >= 0.6
    assert row["p_value"] == pytest.approx(0.2, abs=0.04)
    assert check.loc[check["language"] == "all", "flagged"].tolist() == [False] * 3
    assert check["flagged"].isna().sum() == 1        # the language row of judge a


def test_permutation_p_matches_mann_whitney():
    rng = np.random.default_rng(3)
    n = 400
    scores = panel(rng, n, 1, 3)
    low = scores[:, 0, 1:].mean(axis=1) < 3
    scores[:, 0, 0] = np.where(low & (rng.random(n) < 0.15), np.nan, scores[:, 0, 0])
    check = informative_missing_check(scores, n_permutations=4999, seed=1)
    p = check.loc[(check["judge"] == "b0") & (check["language"] == "all"), "p_value"].item()
    others = scores[:, 0, 1:].mean(axis=1)
    missing = np.isnan(scores[:, 0, 0])
    peer = scipy.stats.mannwhitneyu(others[missing], others[~missing], method="asymptotic").pvalue
    assert p == pytest.approx(peer, abs=0.01 + 0.2 * peer)


def test_cells_missing_at_random_are_rarely_flagged():
    rng = np.random.default_rng(11)
    flagged = 0
    for r in range(150):
        scores = panel(rng, 60)
        scores[rng.random(scores.shape) < 0.08] = np.nan
        flagged += bool(flagged_judges(informative_missing_check(scores, n_permutations=199,
                                                                 seed=r)))
    # at most alpha = 0.05 by construction; 14 of 150 is beyond 3 binomial SEs of 0.05
    assert flagged <= 13


def test_a_judge_missing_its_low_scores_is_flagged():
    rng = np.random.default_rng(12)
    hits, wrong = 0, 0
    for r in range(30):
        scores = panel(rng, 150)
        low = scores[:, :, 2] <= 2
        scores[:, :, 2] = np.where(low & (rng.random(low.shape) < 0.5), np.nan, scores[:, :, 2])
        flagged = flagged_judges(informative_missing_check(scores, n_permutations=199, seed=r))
        hits += flagged == ["b2"]
        wrong += bool(set(flagged) - {"b2"})
    assert hits >= 27 and wrong <= 2
    check = informative_missing_check(scores, n_permutations=199)
    row = check[(check["judge"] == "b2") & (check["language"] == "all")].iloc[0]
    assert row["rank_effect"] < 0 and row["other_mean_missing"] < row["other_mean_observed"]


def test_complete_and_fully_missing_strata_test_nothing():
    scores = panel(np.random.default_rng(1), 20, 2, 3)
    check = informative_missing_check(scores)
    assert (check["n_missing"] == 0).all() and check["p_value"].isna().all()
    assert not check["flagged"].any() and len(check) == 3
    scores[:, 1, 0] = np.nan                          # judge b0 gives nothing in language l1
    check = informative_missing_check(scores)
    judge = check[(check["judge"] == "b0") & (check["language"] == "all")].iloc[0]
    assert judge["n_missing"] == 20 and np.isnan(judge["p_value"]) and not judge["flagged"]
    with pytest.raises(ValueError, match="items, languages, judges"):
        informative_missing_check(scores[0])


def test_the_stop_is_refused_for_a_flagged_judge_unless_accepted():
    scores = panel(np.random.default_rng(2), 60, 2, 3)
    status = stopping_status(scores, {"beta_halfwidth": 100.0})
    assert status.stop
    assert rounds.guard_informative_missing(status, [], False) is status
    refused = rounds.guard_informative_missing(status, ["b1"], False)
    assert not refused.stop and "b1" in refused.reason
    assert "accept_informative_missing" in refused.reason
    accepted = rounds.guard_informative_missing(status, ["b1"], True)
    assert accepted.stop and "accepted" in accepted.reason
    going_on = stopping_status(scores, {"beta_halfwidth": 1e-6})
    assert rounds.guard_informative_missing(going_on, ["b1"], False) is going_on


def test_results_page_warns_of_a_flagged_judge(tmp_path):
    folder = tmp_path / "p" / "missing"
    folder.mkdir(parents=True)
    check = pd.DataFrame({"judge": ["a", "b", "a"], "language": ["all", "all", "en"],
                          "flagged": [True, False, None]})
    check.to_csv(folder / "mnar_check.csv", index=False)
    text = informative_missing_warning(Results(tmp_path), "p")
    assert "missing cells of a depend" in text and ", b" not in text
    check.assign(flagged=[False, False, None]).to_csv(folder / "mnar_check.csv", index=False)
    assert informative_missing_warning(Results(tmp_path), "p") == ""
    assert informative_missing_warning(Results(tmp_path), "other") == ""


@pytest.mark.parametrize("n, k", [(9, 3), (6, 3), (7, 5)])
def test_permutation_subsets_are_uniform(n, k):
    # both samplers (few missing among many: rejection; else the k smallest uniforms) give
    # every k-subset the same chance; powers of 2 make each subset's sum its own
    u = 2.0 ** np.arange(n)
    sums = _draws(u, k, 20_000, np.random.default_rng(0))
    subsets = [sum(u[list(c)]) for c in combinations(range(n), k)]
    counts = pd.Series(sums).value_counts().reindex(subsets, fill_value=0)
    assert counts.sum() == 20_000
    assert scipy.stats.chisquare(counts.to_numpy()).pvalue > 0.001
