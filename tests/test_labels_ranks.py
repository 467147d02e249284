"""Rank sets of the judged systems per language (polyjudge.analyses.labels.ranks): a planted
known answer, and joint coverage of the true ranks in planted draws."""
import numpy as np
import pandas as pd

from polyjudge.analyses.labels import RANK_COLUMNS, differences, rank_sets


def _estimates(means, se, language="a"):
    return pd.DataFrame({"language": language, "system": [f"s{k}" for k in range(len(means))],
                         "estimator": "ppi", "predictor": "panel", "estimate": means,
                         "se": se})


def test_separated_systems_get_singletons_and_close_ones_share_a_set():
    # s0 and s1 are far apart from s2 and s3 and from each other; s2 and s3 are 0.01 apart
    est = pd.concat([_estimates([0.9, 0.6, 0.31, 0.30], 0.01),
                     _estimates([0.5], 0.01, language="b")], ignore_index=True)
    ranks = rank_sets(est, differences(est)).set_index(["language", "system"])
    got = {k: (r["rank"], r["rank_low"], r["rank_high"]) for k, r in ranks.iterrows()}
    assert got == {("a", "s0"): (1, 1, 1), ("a", "s1"): (2, 2, 2), ("a", "s2"): (3, 3, 4),
                   ("a", "s3"): (4, 3, 4), ("b", "s0"): (1, 1, 1)}
    assert set(ranks["systems"]) == {4, 1}


def test_ties_share_the_best_rank_and_the_labels_alone_are_ranked_apart():
    est = pd.concat([_estimates([0.5, 0.5, 0.2], 0.05),
                     _estimates([0.2, 0.5, 0.5], 0.05).assign(estimator="human_only",
                                                              predictor=np.nan)])
    ranks = rank_sets(est, differences(est))
    assert list(ranks.columns) == RANK_COLUMNS
    ppi = ranks[ranks["estimator"] == "ppi"].set_index("system")
    alone = ranks[ranks["estimator"] == "human_only"].set_index("system")
    assert list(ppi["rank"]) == [1, 1, 3] and list(alone["rank"]) == [3, 1, 1]
    assert list(ppi["rank_low"]) == [1, 1, 3] and list(ppi["rank_high"]) == [2, 2, 3]


def test_rank_sets_hold_jointly_at_the_nominal_rate():
    # 600 draws of 5 systems (each draw a 'language'), two pairs close together: the true
    # ranks lie in every system's set at once in at least 95% of the draws, up to Monte Carlo
    rng = np.random.default_rng(3)
    truth, se, draws = np.array([0.70, 0.66, 0.50, 0.47, 0.20]), 0.02, 600
    est = pd.DataFrame({
        "language": np.repeat(np.arange(draws).astype(str), len(truth)),
        "system": np.tile([f"s{k}" for k in range(len(truth))], draws),
        "estimator": "ppi", "predictor": "panel",
        "estimate": np.tile(truth, draws) + se * rng.standard_normal(draws * len(truth)),
        "se": se})
    ranks = rank_sets(est, differences(est))
    true_rank = pd.Series(np.arange(1, 6), index=[f"s{k}" for k in range(5)])
    inside = ranks["system"].map(true_rank).between(ranks["rank_low"], ranks["rank_high"])
    joint = inside.groupby(ranks["language"]).all().mean()
    assert joint >= 0.95 - 2 * np.sqrt(0.05 * 0.95 / draws)
    # and they are informative: the far system is ranked last alone in nearly every draw
    last = ranks[ranks["system"] == "s4"]
    assert (last["rank_low"] == 5).mean() > 0.99
    # the point ranks alone miss the truth often where two systems are close
    assert (ranks["rank"] != ranks["system"].map(true_rank)).groupby(
        ranks["language"]).any().mean() > 0.1
