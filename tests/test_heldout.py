"""Held-out evaluation on the real devai panel against the published Table 2 and decisions."""
import itertools
import logging

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from conftest import DEVAI_DIR

from polyjudge.analyses.baselines import METHODS
from polyjudge.analyses.heldout import (
    decision_agreement,
    full_fit_tau,
    heldout_replicates,
    paired_comparison,
    summarise_tau,
)
from polyjudge.cbc.bootstrap import task_bootstrap, weighted_cell_means
from polyjudge.cbc.estimator import double_center

# docs/methods.md section 2: mean [2.5%, 97.5%] (tol: mean 0.01, interval ends 0.02)
PUBLISHED = {
    "Raw": (0.650, 0.610, 0.714), "CBC": (0.902, 0.795, 0.968),
    "CBC-Weighted": (0.902, None, None),
    "Oracle": (1.000, None, None), "Per-language norm": (0.650, None, None),
    "ComBat-EB": (0.650, None, None), "Z-score": (0.220, -0.038, 0.586),
    "Quantile": (-0.097, -0.119, -0.068), "Ensemble": (0.013, -0.086, 0.186),
    "Backbone-only": (0.060, -0.081, 0.295), "Random": (0.002, -0.095, 0.148),
    "Dawid-Skene": (0.446, -0.042, 1.000),
}


@pytest.fixture(scope="module")
def devai_requirements():
    return pd.read_parquet(DEVAI_DIR / "requirement_judgments.parquet")


@pytest.fixture(scope="module")
def replicates(devai_panel, devai_runs, devai_requirements):
    return heldout_replicates(devai_panel, n_replicates=1000, seed=7, runs=devai_runs,
                              requirements=devai_requirements)


@pytest.fixture(scope="module")
def table(replicates, devai_panel, devai_runs, devai_requirements):
    full = full_fit_tau(devai_panel, runs=devai_runs, requirements=devai_requirements)
    return summarise_tau(replicates, full).set_index("method")


def test_table2_reproduces_the_published_values(table):
    assert list(table.index) == list(METHODS)
    for method, (mean, low, high) in PUBLISHED.items():
        row = table.loc[method]
        assert row["mean"] == pytest.approx(mean, abs=0.01), method
        if low is not None:
            assert row["spread_low"] == pytest.approx(low, abs=0.02), method
            assert row["spread_high"] == pytest.approx(high, abs=0.02), method


def test_identical_random_stream_gives_the_printed_digits(table):
    """The protocol stream reproduces Raw, CBC and the random control to the printed digits."""
    for method in ("Raw", "CBC", "Random"):
        mean, low, high = PUBLISHED[method]
        shown = table.loc[method, ["mean", "spread_low", "spread_high"]].astype(float)
        np.testing.assert_allclose(shown, [mean, low, high], atol=5e-4, err_msg=method)


def test_full_fit_and_replicate_counts(table):
    assert table.loc["Raw", "full_fit"] == pytest.approx(0.629, abs=5e-4)
    assert table.loc["CBC", "full_fit"] == pytest.approx(1.0)
    assert table.loc["Oracle", "full_fit"] == pytest.approx(1.0)
    assert table.loc["Raw", "n_replicates"] == 1000
    # Dawid-Skene: in 40 replicates every language row is constant (no defined pair)
    assert table.loc["Dawid-Skene", "n_replicates"] == 960


def test_standard_combat_is_a_shrunken_cbc(table):
    assert table.loc["Raw", "mean"] < table.loc["ComBat", "mean"] < table.loc["CBC", "mean"]


def test_cbc_beats_combat_eb_in_every_paired_replicate(replicates):
    paired = paired_comparison(replicates, reference="CBC").set_index("method")
    assert paired.loc["ComBat-EB", "share_reference_higher"] == 1.0
    assert paired.loc["ComBat-EB", "n_replicates"] == 1000
    assert paired.loc["ComBat-EB", "spread_low"] > 0
    assert paired.loc["CBC-Weighted", "mean_difference"] == pytest.approx(0, abs=1e-3)
    assert "CBC" not in paired.index


def test_order_preserving_methods_equal_raw_in_every_replicate(replicates):
    wide = replicates.pivot(index="replicate", columns="method", values="tau")
    for method in ("Per-language norm", "ComBat-EB"):
        np.testing.assert_array_equal(wide[method], wide["Raw"], err_msg=method)
    np.testing.assert_allclose(wide["CBC-Weighted"], wide["CBC"], atol=1e-12)


def test_replicate_taus_equal_a_scipy_loop(replicates, devai_panel):
    """First replicates recomputed the straightforward way: scipy tau for every language pair."""
    boot = task_bootstrap(55, 20, np.random.default_rng(7), row_permutations=(8, 6))
    values = devai_panel.values
    wide = replicates.pivot(index="replicate", columns="method", values="tau")
    for r in range(20):
        m_ev = values[boot.oob[r]].mean(axis=0)
        m_tr = np.repeat(values, boot.counts[r], axis=0).mean(axis=0)
        for method, x in (("Raw", m_ev), ("CBC", m_ev - double_center(m_tr))):
            taus = [scipy.stats.kendalltau(x[i], x[j]).statistic
                    for i, j in itertools.combinations(range(8), 2)]
            assert wide.loc[r, method] == pytest.approx(np.mean(taus), abs=1e-12)


def test_methods_without_data_are_skipped_with_a_reason(devai_panel, caplog):
    with caplog.at_level(logging.WARNING, logger="polyjudge.analyses.heldout"):
        out = heldout_replicates(devai_panel, ["Raw", "Dawid-Skene"], n_replicates=20)
    assert set(out["method"]) == {"Raw"} and len(out) == 20
    assert "skipping method Dawid-Skene: no run table" in caplog.text


def test_user_method_and_selection(devai_panel):
    def negated(ctx):
        return -ctx.M_ev

    out = heldout_replicates(devai_panel, {"Raw": METHODS["Raw"], "Negated": negated},
                             n_replicates=30)
    wide = out.pivot(index="replicate", columns="method", values="tau")
    np.testing.assert_allclose(wide["Negated"], wide["Raw"])  # same order reversed in every row
    with pytest.raises(ValueError, match="unknown method"):
        heldout_replicates(devai_panel, ["Raw", "Magic"], n_replicates=5)


def test_replicates_do_not_depend_on_the_methods_requested(devai_panel, replicates):
    alone = heldout_replicates(devai_panel, ["CBC"], n_replicates=1000, seed=7)
    np.testing.assert_array_equal(alone["tau"], replicates.query("method == 'CBC'")["tau"])


def test_decisions_reproduce_the_published_values(devai_panel):
    result = decision_agreement(devai_panel, n_replicates=1000, seed=307)
    raw, cbc = result["methods"]["Raw"]["overall"], result["methods"]["CBC"]["overall"]
    assert raw["n_decisions"] == 8000
    assert raw["accuracy"] == pytest.approx(0.685, abs=5e-4)
    assert raw["ci_low"] == pytest.approx(0.6744, abs=1e-4)
    assert raw["ci_high"] == pytest.approx(0.6949, abs=1e-4)
    assert raw["regret_mean"] == pytest.approx(3.23, abs=5e-3)
    assert raw["regret_ci_low"] == pytest.approx(0.90, abs=5e-3)
    assert raw["regret_ci_high"] == pytest.approx(5.82, abs=5e-3)
    assert cbc["accuracy"] == 1.0 and cbc["regret_mean"] == 0.0
    assert cbc["ci_low"] == pytest.approx(0.99954, abs=1e-5)
    assert "structural" in result["note"]
    per_language = result["methods"]["Raw"]["per_language"]
    assert list(per_language) == list(devai_panel.languages)
    assert np.mean([v["accuracy"] for v in per_language.values()]) == pytest.approx(
        raw["accuracy"])


def test_cbc_decision_is_the_top_column_mean(devai_panel):
    """Why CBC agrees: its pick is the backbone with the highest in-bag column mean."""
    boot = task_bootstrap(55, 50, 11)
    m_tr = weighted_cell_means(devai_panel.values, boot.counts)
    pick = (m_tr - double_center(m_tr)).argmax(axis=-1)
    assert np.array_equal(pick, np.broadcast_to(m_tr.mean(axis=-2).argmax(axis=-1)[:, None],
                                                pick.shape))
