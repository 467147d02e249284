"""Conditional mutual information: hand-computed ties, scikit-learn's estimator, the fast null,
shards, the published devai values, KSG on Gaussians."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import digamma
from sklearn.feature_selection._mutual_info import _compute_mi_cd
from threadpoolctl import threadpool_limits

from polyjudge.analyses import information as info

# --- the estimator: known answers and the peer -------------------------------------------------

# label 0 at x = 0, 0, 1; label 1 at x = 1, 1, 2; k = 2 (every eps_i is 1)
TIES_X = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 2.0])
TIES_Y = np.array([0, 0, 0, 1, 1, 1])


def test_protocol_convention_hand_computed_with_ties():
    # m_i = others within 1 inclusive: (4, 4, 5, 5, 5, 3)
    # I = psi(6) - psi(3) + psi(2) - mean psi(m) = 47/60 + 1 - 137/72 = -43/360
    expected = digamma(6) - digamma(3) + digamma(2) - np.mean(digamma([4, 4, 5, 5, 5, 3]))
    assert expected == pytest.approx(-43 / 360)
    assert info.ross_mi(TIES_X, TIES_Y, k=2, convention="protocol") == pytest.approx(-43 / 360)


def test_sklearn_convention_hand_computed_with_ties():
    # m_i = points strictly within 1, self included: (2, 2, 3, 3, 3, 1); I = 47/60 + 1 - 13/12
    assert info.ross_mi(TIES_X, TIES_Y, k=2, convention="sklearn") == pytest.approx(0.7)
    assert _compute_mi_cd(TIES_X, TIES_Y, 2) == pytest.approx(0.7)


@pytest.mark.parametrize("n_requirements", [2, 4, 5, 10, 20])
def test_sklearn_convention_equals_compute_mi_cd_on_judge_like_scores(n_requirements):
    # scores 100 s / R with 100 / R exact, so both distance routines agree; small label counts
    # exercise singleton labels (left out) and labels with fewer than k + 1 points
    rng = np.random.default_rng(n_requirements)
    with threadpool_limits(1):
        for n, n_labels, k in [(24, 8, 2), (24, 3, 3), (10, 5, 2), (12, 4, 1)] * 5:
            x = 100.0 * rng.integers(0, n_requirements + 1, n) / n_requirements
            y = rng.integers(0, n_labels, n)
            if np.bincount(y).max() < 2:
                continue
            ours = max(0.0, float(info.ross_mi(x, y, k=k, convention="sklearn")))
            assert ours == pytest.approx(_compute_mi_cd(x, y, k), abs=1e-12)


def test_ross_mi_broadcasts_over_permutations_and_strata():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(4, 12))
    labels = rng.permuted(np.broadcast_to(np.repeat(np.arange(4), 3), (5, 4, 12)), axis=-1)
    stacked = info.ross_mi(scores, labels, k=2, convention="protocol")
    assert stacked.shape == (5, 4)
    loop = [[info.ross_mi(scores[s], labels[b, s]) for s in range(4)] for b in range(5)]
    np.testing.assert_allclose(stacked, loop)


def test_continuous_data_gives_the_same_value_in_both_conventions():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=40), rng.integers(0, 3, 40)
    assert info.ross_mi(x, y, convention="protocol") == pytest.approx(
        info.ross_mi(x, y, convention="sklearn"))


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="convention"):
        info.ross_mi(TIES_X, TIES_Y, convention="jitter")
    with pytest.raises(ValueError, match="k must"):
        info.ross_mi(TIES_X, TIES_Y, k=0)
    with pytest.raises(ValueError, match="integers"):
        info.ross_mi(TIES_X, TIES_Y.astype(float))
    with pytest.raises(ValueError, match="at least 2 points"):
        info.cmi_null(TIES_X[None], np.arange(6)[None], n_permutations=2)


# --- strata, the fast null and its shards -----------------------------------------------------

def test_cmi_strata_axis_order():
    runs = pd.DataFrame([(t, l, b, f, 100 * t_ + 10 * b_ + 3 * l_ + f_)
                         for t_, t in enumerate("uv") for l_, l in enumerate("LM")
                         for b_, b in enumerate("BCD") for f_, f in enumerate("FG")],
                        columns=["task", "language", "backbone", "framework", "score"])
    strata = info.cmi_strata(runs.sample(frac=1, random_state=0), tasks="uv", languages="LM",
                             backbones="BCD", frameworks="FG")
    assert strata.scores.shape == (6, 4)
    # stratum (task v, backbone C) = row 1 * 3 + 1; points (L,F), (L,G), (M,F), (M,G)
    np.testing.assert_array_equal(strata.scores[4], [110, 111, 113, 114])
    np.testing.assert_array_equal(strata.labels[4], [0, 0, 1, 1])
    assert strata.strata_frame().iloc[4].tolist() == ["v", "C"]
    with pytest.raises(ValueError, match="1 are missing"):
        info.cmi_strata(runs.iloc[1:])
    with pytest.raises(ValueError, match="1 duplicated"):
        info.cmi_strata(pd.concat([runs, runs.iloc[:1]]))


@pytest.mark.parametrize("convention", info.CONVENTIONS)
def test_fast_null_equals_the_estimator_on_permuted_scores(convention):
    rng = np.random.default_rng(3)
    # unbalanced labels (sizes 2, 3, 4) and k = 3, so that k_i varies; tied scores
    labels = np.repeat([0, 1, 2], [2, 3, 4])
    scores = rng.integers(0, 5, (7, 9)) * 12.5
    null = info.cmi_null(scores, labels, k=3, convention=convention, n_permutations=30, seed=5)
    permuted = info.permute_within_strata(scores, 30, np.random.default_rng(5))
    direct = info.ross_mi(permuted, labels, k=3, convention=convention).mean(axis=-1)
    np.testing.assert_allclose(null, direct, atol=1e-12)


def test_null_is_a_pure_function_of_seed_and_shard_layout():
    rng = np.random.default_rng(4)
    scores, labels = rng.normal(size=(6, 12)), np.repeat(np.arange(4), 3)
    whole = info.cmi_null(scores, labels, n_permutations=40, seed=9, chunk=40)
    np.testing.assert_array_equal(whole, info.cmi_null(scores, labels, n_permutations=40, seed=9,
                                                       chunk=7))
    sizes = info.shard_sizes(40, 3)
    assert sizes == [14, 13, 13]

    def merged():
        return np.concatenate([info.cmi_null(scores, labels, n_permutations=n, seed=s)
                               for n, s in zip(sizes, info.shard_seeds(9, 3))])

    np.testing.assert_array_equal(merged(), merged())
    shards = [info.cmi_null(scores, labels, n_permutations=13, seed=s)
              for s in info.shard_seeds(9, 3)]
    assert not np.array_equal(shards[1], shards[2])
    with pytest.raises(ValueError):
        info.shard_sizes(2, 3)


def test_cmi_test_known_answer():
    result = info.cmi_test([0.5, 0.7], [0.1, 0.2, 0.6, 0.7])
    assert result.observed == pytest.approx(0.6)
    assert result.debiased == pytest.approx(0.6 - 0.4)
    assert result.p_value == pytest.approx((1 + 2) / 5)           # 0.6 and 0.7 are >= 0.6
    assert (result.band_low, result.band_high) == pytest.approx(
        tuple(np.percentile(0.6 - np.array([0.1, 0.2, 0.6, 0.7]), [2.5, 97.5])))
    assert json.loads(json.dumps(dataclasses.asdict(result))) == dataclasses.asdict(result)


def test_planted_language_effect_is_detected_and_absent_one_is_not():
    rng = np.random.default_rng(6)
    labels = np.repeat(np.arange(8), 3)
    noise = rng.normal(size=(60, 24))
    for shift, detected in ((1.5, True), (0.0, False)):
        scores = noise + shift * rng.normal(size=(60, 8)).repeat(3, axis=1)
        result = info.cmi_test(info.ross_mi(scores, labels),
                               info.cmi_null(scores, labels, n_permutations=200, seed=1))
        assert (result.p_value <= 0.01) is detected
        if not detected:
            assert result.band_low <= 0 <= result.band_high


# --- published devai values ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def devai_strata(devai_runs, devai_panel):
    return info.cmi_strata(devai_runs, devai_panel.tasks, devai_panel.languages,
                           devai_panel.backbones)


def test_devai_protocol_cmi_matches_the_paper(devai_strata):
    observed = info.ross_mi(devai_strata.scores, devai_strata.labels, k=2, convention="protocol")
    null = info.cmi_null(devai_strata.scores, devai_strata.labels, k=2, convention="protocol",
                         n_permutations=500, seed=407)
    result = info.cmi_test(observed, null)
    assert result.n_strata == 330
    assert result.debiased == pytest.approx(0.178, abs=0.005)
    assert result.band_low == pytest.approx(0.169, abs=0.01)
    assert result.band_high == pytest.approx(0.187, abs=0.01)
    assert result.p_value == pytest.approx(1 / 501)


def test_devai_sklearn_convention_is_lower(devai_strata):
    observed = info.ross_mi(devai_strata.scores, devai_strata.labels, convention="sklearn")
    null = info.cmi_null(devai_strata.scores, devai_strata.labels, convention="sklearn",
                         n_permutations=500, seed=407)
    result = info.cmi_test(observed, null)
    assert result.debiased == pytest.approx(0.136, abs=0.005)
    assert result.p_value == pytest.approx(1 / 501)


def test_devai_published_stream_is_reproduced_exactly(devai_runs):
    """Where 0.178 [0.169, 0.187] comes from, to the third decimal: strata in
    ``groupby(["task", "backbone"])`` order with rows in file order, labels shuffled by
    ``np.random.RandomState(407).permutation``, 500 shuffles per stratum, stratum by stratum.
    (The package's own stream is the vectorised, shardable one above.)"""
    groups = [group for _, group in devai_runs.groupby(["task", "backbone"], sort=True)]
    scores = np.stack([g["score"].to_numpy(float) for g in groups])
    labels = np.stack([pd.factorize(g["language"])[0] for g in groups])
    stream = np.random.RandomState(407)
    permuted = np.stack([[stream.permutation(row) for _ in range(500)] for row in labels], axis=1)
    null = np.concatenate([info.ross_mi(scores, permuted[i:i + 50]).mean(axis=-1)
                           for i in range(0, 500, 50)])
    result = info.cmi_test(info.ross_mi(scores, labels), null)
    assert round(result.debiased, 3) == 0.178
    assert (round(result.band_low, 3), round(result.band_high, 3)) == (0.169, 0.187)
    assert result.p_value == pytest.approx(1 / 501)


# --- Frenzel-Pompe KSG CMI -----------------------------------------------------------------------

@pytest.mark.parametrize("coupling", [0.0, 0.6])
def test_ksg_cmi_gaussian_known_answer(coupling):
    # z ~ N(0,1), x = 0.7 z + e1, y = coupling x + 0.5 z + e2: given z,
    # corr(x, y) = c / sqrt(c^2+1)
    rng = np.random.default_rng(7)
    z = rng.normal(size=3000)
    x = 0.7 * z + rng.normal(size=3000)
    y = coupling * x + 0.5 * z + rng.normal(size=3000)
    rho = coupling / np.sqrt(coupling ** 2 + 1)
    assert info.ksg_cmi(x, y, z, k=4) == pytest.approx(-0.5 * np.log(1 - rho ** 2), abs=0.03)


def test_ksg_cmi_refuses_mismatched_samples():
    with pytest.raises(ValueError, match="same number"):
        info.ksg_cmi(np.zeros(5), np.zeros(4), np.zeros(5))


def test_null_is_bit_identical_whatever_the_chunk_and_block():
    """Memory is bounded by processing chunks of permutations x blocks of strata; each block of
    a permutation is drawn at its own place of the one stream, so the draws never change."""
    rng = np.random.default_rng(8)
    labels = np.repeat(np.arange(3), [3, 4, 5])                 # unbalanced: k_i varies
    scores = rng.integers(0, 6, (11, 12)) * (100 / 7)          # ties, inexact differences
    for convention in info.CONVENTIONS:
        whole = info.cmi_null(scores, labels, k=3, convention=convention, n_permutations=7,
                              seed=3, chunk=7, block=11)
        for chunk, block in ((1, 1), (3, 4), (7, 2), (2, 11), (None, None)):
            np.testing.assert_array_equal(
                whole, info.cmi_null(scores, labels, k=3, convention=convention,
                                     n_permutations=7, seed=3, chunk=chunk, block=block))


# draws of the null engine before the bounded one (all strata and permutations as one array,
# neighbour counts of every point pair), same data and seed: the new engine reproduces them
PREVIOUS_DRAWS = {
    "protocol": ["-0x1.1be2aabd028a0p-2", "-0x1.4e2ab1491c57dp-3", "-0x1.be34d84836874p-3",
                 "-0x1.8513211efbfd2p-3", "-0x1.7703a56d7f623p-3", "-0x1.9d7d33fed5410p-3"],
    "sklearn": ["0x1.c6548ff3de627p-4", "0x1.bca93b733c7e9p-3", "0x1.9622d941d9cbdp-3",
                "0x1.93b04dc45102fp-3", "0x1.29cff71d8b0cbp-3", "0x1.a7b3236819ec6p-3"],
}


@pytest.mark.parametrize("convention", info.CONVENTIONS)
def test_null_equals_the_previous_engine(convention):
    rng = np.random.default_rng(12)
    labels = np.repeat(np.arange(4), 5)
    scores = rng.integers(0, 7, (9, 20)) * (100 / 6)
    null = info.cmi_null(scores, labels, 2, convention, 6, seed=21, block=2, chunk=4)
    expected = [float.fromhex(v) for v in PREVIOUS_DRAWS[convention]]
    np.testing.assert_allclose(null, expected, rtol=1e-13, atol=0)   # bytes on one machine


def test_read_cmi_strata_equals_cmi_strata(tmp_path):
    rng = np.random.default_rng(2)
    grid = pd.MultiIndex.from_product([["t2", "t1", "t3"], ["en", "de"], ["b1", "b2"],
                                       ["f2", "f1", "f3"]],
                                      names=["task", "language", "backbone", "framework"])
    runs = grid.to_frame(index=False).sample(frac=1, random_state=1, ignore_index=True)
    runs["score"] = rng.integers(0, 5, len(runs)) * 25.0
    path = tmp_path / "runs.parquet"
    runs.to_parquet(path, row_group_size=7)
    orders = (["t1", "t2", "t3"], ["de", "en"], ["b2", "b1"])
    expected = info.cmi_strata(runs, *orders[:2], backbones=orders[2])
    got = info.read_cmi_strata(path, *orders)
    assert got.frameworks == expected.frameworks and got.tasks == expected.tasks
    np.testing.assert_array_equal(got.scores, expected.scores)
    np.testing.assert_array_equal(got.labels, expected.labels)
    pd.concat([runs, runs.iloc[:1]]).to_parquet(path)
    with pytest.raises(ValueError, match="0 are missing and 1 duplicated"):
        info.read_cmi_strata(path, *orders)
    runs.iloc[1:].to_parquet(path)
    with pytest.raises(ValueError, match="1 are missing and 0 duplicated"):
        info.read_cmi_strata(path, *orders)
    with pytest.raises(ValueError, match=r"task\(s\) \['t3'\] are not in the given order"):
        info.read_cmi_strata(path, ["t1", "t2"], *orders[1:])
