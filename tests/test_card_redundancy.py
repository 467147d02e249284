"""The judge card's redundancy and ranking (polyjudge.analyses.card.redundancy, .ranking):
known answers (identical judges are one judge, independent ones n; a tie split evenly), numpy's
correlation on pairwise-complete units, the two-way residuals without a reference, planted
accuracy ranked in order with the leaderboard's rank sets on the same draws."""
import numpy as np
import pandas as pd
import pytest

from polyjudge.analyses.card import judge_card, reference_agreement
from polyjudge.analyses.card.ranking import rank_by_agreement
from polyjudge.analyses.card.redundancy import effective_judges, redundancy
from polyjudge.analyses.leaderboard import rank_sets


def panel(rng, errors, n=2000, clusters=100, shared=None, languages=("en",)):
    """Binary verdicts: judge j errs with probability errors[j]; ``shared`` judges copy the
    first judge's errors."""
    truth = (rng.random(n) < 0.4).astype(float)
    rows = []
    for language in languages:
        first = rng.random(n) < errors[0]
        for j, rate in enumerate(errors):
            wrong = first if (j == 0 or (shared and j in shared)) else rng.random(n) < rate
            rows.append(pd.DataFrame({"item": np.arange(n).astype(str),
                                      "cluster": np.arange(n) % clusters, "language": language,
                                      "judge": f"j{j}",
                                      "verdict": np.where(wrong, 1 - truth, truth)}))
    return pd.concat(rows, ignore_index=True), pd.Series(truth, index=np.arange(n).astype(str))


def row(table, measure, judge="panel"):
    return table[(table["measure"] == measure) & (table["judge"] == judge)].iloc[0]


def test_identical_judges_are_one_judge_and_independent_ones_are_n():
    rng = np.random.default_rng(0)
    same, reference = panel(rng, [0.2] * 5, shared={1, 2, 3, 4})
    table = redundancy(same, reference, replicates=100)
    assert row(table, "error_correlation")["estimate"] == pytest.approx(1.0)
    assert row(table, "effective_judges")["estimate"] == pytest.approx(1.0)
    # the majority of five copies is the copy: no gain, on every replicate
    gain = row(table, "majority_gain_percent_agreement", "majority")
    assert gain["estimate"] == 0 and gain["ci_low"] == gain["ci_high"] == 0
    independent, reference = panel(rng, [0.2] * 5, n=10000, clusters=500)
    table = redundancy(independent, reference, replicates=100)
    n_eff = row(table, "effective_judges")
    assert abs(n_eff["estimate"] - 5) < 0.4 and n_eff["ci_high"] - n_eff["ci_low"] < 1.5
    # five independent judges right 80% of the time: the majority is right when 3+ are
    majority = row(table, "percent_agreement", "majority")["estimate"]
    exact = sum(__import__("math").comb(5, k) * 0.8 ** k * 0.2 ** (5 - k) for k in (3, 4, 5))
    assert majority == pytest.approx(exact, abs=0.01)
    # two of four share every error: rho = 1/6, n_eff = 4 / (1 + 3/6) = 8/3
    shared, reference = panel(rng, [0.2] * 4, n=10000, clusters=500, shared={1})
    table = redundancy(shared, reference, replicates=0)
    assert row(table, "effective_judges")["estimate"] == pytest.approx(8 / 3, abs=0.1)
    assert np.isnan(row(table, "effective_judges")["ci_low"])  # no replicates, no interval


def test_kish_formula_and_the_pairwise_correlation_equal_numpy():
    R = np.full((4, 4), 0.5) + 0.5 * np.eye(4)
    rho, n_eff = effective_judges(R)
    assert rho == 0.5 and n_eff == pytest.approx(4 / (1 + 3 * 0.5))
    assert n_eff == pytest.approx(16 / R.sum())  # n^2 / 1'R1
    rng = np.random.default_rng(3)
    verdicts, reference = panel(rng, [0.1, 0.3, 0.25], n=400, clusters=40)
    verdicts = verdicts.drop(index=rng.choice(len(verdicts), 150, replace=False))
    table = redundancy(verdicts, reference, replicates=0)
    wrong = verdicts.assign(e=(verdicts["verdict"] != reference.reindex(verdicts["item"])
                               .to_numpy()).astype(float)).pivot(index="item", columns="judge",
                                                                 values="e")
    for a, b in (("j0", "j1"), ("j0", "j2"), ("j1", "j2")):
        both = wrong[[a, b]].dropna()
        mine = table[(table["judge"] == a) & (table["versus"] == b)].iloc[0]
        assert mine["estimate"] == pytest.approx(np.corrcoef(both[a], both[b])[0, 1],
                                                 abs=1e-12)
        assert mine["n_items"] == len(both)


def test_a_tie_is_split_between_the_tied_verdicts():
    verdicts = pd.DataFrame({"item": ["1", "1", "2", "2", "3", "3"], "language": "en",
                             "judge": ["a", "b"] * 3, "verdict": [1, 0, 1, 1, 0, 0]})
    reference = pd.Series([1.0, 1.0, 1.0], index=["1", "2", "3"])
    table = redundancy(verdicts, reference, replicates=0)
    # item 1 tied (half right), item 2 right, item 3 wrong: 1.5 / 3
    assert row(table, "percent_agreement", "majority")["estimate"] == pytest.approx(0.5)


def test_without_a_reference_the_residual_correlation_is_the_two_way_models():
    rng = np.random.default_rng(4)
    verdicts, _ = panel(rng, [0.2, 0.3, 0.1, 0.25], n=300, clusters=30, shared={1})
    table = redundancy(verdicts, None, replicates=50)
    assert set(table["measure"]) == {"residual_correlation"}  # n_eff is not identified
    wide = verdicts.pivot(index="item", columns="judge", values="verdict")
    residual = wide.sub(wide.mean(axis=1), axis=0)
    for a, b in (("j0", "j1"), ("j2", "j3")):
        mine = table[(table["judge"] == a) & (table["versus"] == b)].iloc[0]
        assert mine["estimate"] == pytest.approx(np.corrcoef(residual[a], residual[b])[0, 1],
                                                 abs=1e-12)
    # the pair sharing its errors stands out above -1/(n - 1)
    shared = table[(table["judge"] == "j0") & (table["versus"] == "j1")].iloc[0]
    assert shared["estimate"] > -1 / 3 and shared["ci_low"] > -1 / 3
    assert judge_card(verdicts, None, replicates=0).ranking.empty


def test_planted_accuracy_is_ranked_in_order_with_the_leaderboards_rank_sets():
    rng = np.random.default_rng(5)
    verdicts, reference = panel(rng, [0.05, 0.2, 0.35, 0.36], n=3000, clusters=150,
                                languages=("en", "de"))
    card = judge_card(verdicts, reference, replicates=300, seed=1, languages=["en", "de"])
    ranked = card.ranking.set_index(["language", "judge"])
    for language in ("en", "de"):
        part = ranked.loc[language]
        assert part.loc["j0", "rank"] == 1 and part.loc["j1", "rank"] == 2
        assert (part.loc["j0", ["rank_low", "rank_high"]] == [1, 1]).all()
        assert (part.loc["j1", ["rank_low", "rank_high"]] == [2, 2]).all()
        # 0.35 against 0.36: told apart from the others, not from each other
        for judge in ("j2", "j3"):
            assert (part.loc[judge, ["rank_low", "rank_high"]] == [3, 4]).all()
    # the same sets as the leaderboard's rank_sets on the card's own replicates
    table, per_language = reference_agreement(verdicts, reference, replicates=300, seed=1,
                                              languages=["en", "de"])
    judges = ["j0", "j1", "j2", "j3"]
    draws = np.stack([per_language[j, "cohen_kappa"] for j in judges], axis=-1)
    point = (table[table["measure"] == "cohen_kappa"].pivot(index="language", columns="judge",
                                                            values="estimate")
             .loc[["en", "de"], judges].to_numpy())
    low, high = rank_sets(point, draws, 0.95)
    mine = card.ranking.set_index(["language", "judge"])
    for l, language in enumerate(["en", "de"]):
        assert mine.loc[language].loc[judges, "rank_low"].tolist() == low[l].tolist()
        assert mine.loc[language].loc[judges, "rank_high"].tolist() == high[l].tolist()
    assert rank_by_agreement(table, {}, ["en", "de"])["rank_low"].isna().all()


def test_the_page_shows_the_effective_judges_and_the_ranking(tmp_path):
    from polyjudge.report.page.card import card_section
    from polyjudge.report.page.results_folder import Results
    rng = np.random.default_rng(6)
    verdicts, reference = panel(rng, [0.1, 0.2, 0.3], n=400, clusters=40, shared={1},
                                languages=("en", "de"))
    card = judge_card(verdicts, reference, replicates=50, languages=["en", "de"])
    folder = tmp_path / "p" / "card"
    folder.mkdir(parents=True)
    for name in ("agreement", "language_tests", "redundancy", "ranking"):
        getattr(card, name).to_csv(folder / f"{name}.csv", index=False)
    tables = {t["id"]: t for t in card_section(Results(tmp_path), "p")["tables"]}
    summary = tables["p.card_redundancy"]
    n_eff = [row[summary["keys"].index("effective_judges")] for row in summary["data"]]
    expected = card.redundancy.query("measure == 'effective_judges'")["estimate"]
    assert n_eff == pytest.approx(expected.tolist())
    assert [row[summary["keys"].index("n_judges")] for row in summary["data"]] == [3, 3]
    ranking = tables["p.card_ranking"]
    assert len(ranking["data"]) == 6 and ranking["data"][0][:3] == ["en", 1, "j0"]


def test_one_language_at_a_time_gives_the_all_languages_numbers(monkeypatch):
    """Above the dense budget the sums are taken and resampled one language at a time (a job
    of single-item clusters): the same draws, so the same numbers up to rounding."""
    from polyjudge.analyses.card import redundancy as module
    rng = np.random.default_rng(4)
    verdicts, reference = panel(rng, [0.1, 0.2, 0.3], n=400, clusters=400,
                                languages=("en", "fr"))
    together = [redundancy(verdicts, ref, level="interval", replicates=50)
                for ref in (reference, None)]
    monkeypatch.setattr(module, "DENSE_BUDGET", 0)
    apart = [redundancy(verdicts, ref, level="interval", replicates=50)
             for ref in (reference, None)]
    for a, b in zip(together, apart):
        assert len(a) >= 6  # every pair in both languages (and the panel, with a reference)
        pd.testing.assert_frame_equal(a, b, rtol=1e-12)
