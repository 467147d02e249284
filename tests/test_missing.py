"""Incomplete-panel estimators of beta and parse failures as missing (docs/methods.md
10.1-10.2)."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from conftest import DEVAI_BACKBONES, DEVAI_DIR, DEVAI_LANGUAGES

from polyjudge.analyses import missing
from polyjudge.cbc.estimator import double_center


def _panel(seed=0, shape=(12, 4, 3), task_language=True, drop=0):
    """Scores a(t,b) + c(l,b) [+ g(t,l)] + noise with ``drop`` cells deleted at random."""
    rng = np.random.default_rng(seed)
    n, k, m = shape
    values = (rng.normal(0, 10, (n, 1, m)) + rng.normal(0, 5, (1, k, m))
              + (rng.normal(0, 3, (n, k, 1)) if task_language else 0) + rng.normal(0, 1, shape))
    values.ravel()[rng.choice(values.size, drop, replace=False)] = np.nan
    return values


def _lsqr_beta(values, task_language=False, lam=0.0):
    """Peer: sparse least squares on one-hot blocks (ridge rows sqrt(lam) I for g),
    beta = DC(c)."""
    n, k, m = values.shape
    t, l, b = np.nonzero(np.isfinite(values))
    rows = np.arange(len(t))
    blocks = [sp.csr_matrix((np.ones(len(t)), (rows, t * m + b)), shape=(len(t), n * m)),
              sp.csr_matrix((np.ones(len(t)), (rows, l * m + b)), shape=(len(t), k * m))]
    y = values[t, l, b]
    if task_language:
        blocks.append(sp.csr_matrix((np.ones(len(t)), (rows, t * k + l)), shape=(len(t), n * k)))
    design = sp.hstack(blocks).tocsr()
    if task_language and lam > 0:
        penalty = sp.hstack([sp.csr_matrix((n * k, n * m + k * m)), np.sqrt(lam) * sp.eye(n * k)])
        design = sp.vstack([design, penalty]).tocsr()
        y = np.concatenate([y, np.zeros(n * k)])
    solution = sla.lsqr(design, y, atol=1e-15, btol=1e-15, iter_lim=100_000)[0]
    return double_center(solution[n * m:n * m + k * m].reshape(k, m))


def test_simple_estimators_hand_computed():
    # 2 tasks x 2 languages x 2 backbones, task 1 missing at (L2, B2)
    values = np.array([[[1.0, 2.0], [3.0, 4.0]],
                       [[5.0, 6.0], [7.0, np.nan]]])
    # available means [[3, 4], [5, 4]]: column means (4, 4), row means (3.5, 4.5), grand 4
    np.testing.assert_allclose(missing.available_means_beta(values), [[-0.5, 0.5], [0.5, -0.5]])
    # task means 2.5 and 6 -> adjusted [[-1.5,-.5],[.5,1.5]] and [[-1,0],[1,.]]: means
    # [[-1.25, -0.25], [0.75, 1.5]]; margins col (-0.25, 0.625), row (-0.75, 1.125), grand 0.1875
    np.testing.assert_allclose(missing.task_adjusted_beta(values),
                               [[-0.0625, 0.0625], [0.0625, -0.0625]])


@pytest.mark.parametrize("task_language", [False, "fixed", "ridge"])
def test_every_estimator_is_plain_double_centring_on_a_complete_panel(task_language):
    values = _panel(1)
    plain = double_center(values.mean(axis=0))
    np.testing.assert_allclose(missing.least_squares_beta(values, task_language), plain, atol=1e-9)
    np.testing.assert_allclose(missing.available_means_beta(values), plain, atol=1e-12)
    np.testing.assert_allclose(missing.task_adjusted_beta(values), plain, atol=1e-12)


@pytest.mark.parametrize("task_language, lam", [(False, 0.0), ("fixed", 0.0), ("ridge", 2.5)])
def test_least_squares_matches_sparse_lsqr_peer(task_language, lam):
    values = _panel(2, drop=20)
    beta = missing.least_squares_beta(values, task_language, ridge_lambda=lam if lam else None,
                                      tol=1e-13)
    np.testing.assert_allclose(beta, _lsqr_beta(values, bool(task_language), lam), atol=1e-8)


def test_ridge_limits_are_plain_and_fixed():
    values = _panel(3, drop=15)
    np.testing.assert_allclose(missing.least_squares_beta(values, "ridge", ridge_lambda=0.0),
                               missing.least_squares_beta(values, "fixed"), atol=1e-9)
    np.testing.assert_allclose(missing.least_squares_beta(values, "ridge", ridge_lambda=1e12),
                               missing.least_squares_beta(values), atol=1e-6)


def test_ridge_lambda_is_the_anova_moment_estimate_on_a_complete_panel():
    values = _panel(4, shape=(30, 5, 4))
    n, k, m = values.shape
    g = values.mean()
    t = values.mean(axis=(1, 2), keepdims=True) - g
    l = values.mean(axis=(0, 2), keepdims=True) - g
    tl = values.mean(axis=2, keepdims=True) - t - l - g
    three_way = values - values.mean(axis=2, keepdims=True) - values.mean(axis=1, keepdims=True) \
        - values.mean(axis=0, keepdims=True) + t + l + g + values.mean(axis=(0, 1), keepdims=True)
    ms_tl = m * (tl ** 2).sum() / ((n - 1) * (k - 1))
    ms_e = (three_way ** 2).sum() / ((n - 1) * (k - 1) * (m - 1))
    fit = missing.least_squares_fit(values, "ridge")
    assert fit.ridge_lambda == pytest.approx(ms_e / ((ms_tl - ms_e) / m), rel=1e-8)


def test_planted_truth_recovered_exactly_without_noise():
    rng = np.random.default_rng(5)
    n, k, m = 15, 4, 3
    c = rng.normal(0, 5, (k, m))
    truth = double_center(c)
    base = rng.normal(0, 10, (n, 1, m)) + c
    drop = rng.choice(n * k * m, 25, replace=False)
    plain = base.copy()
    plain.ravel()[drop] = np.nan
    np.testing.assert_allclose(missing.least_squares_beta(plain), truth, atol=1e-8)
    assert np.abs(missing.available_means_beta(plain) - truth).max() > 0.1
    with_tl = base + rng.normal(0, 5, (n, k, 1))
    with_tl.ravel()[drop] = np.nan
    np.testing.assert_allclose(missing.least_squares_beta(with_tl, "fixed"), truth, atol=1e-8)


def test_completed_cell_means_double_centre_to_beta_and_keep_observed():
    values = _panel(6, drop=20)
    fit = missing.least_squares_fit(values, "fixed")
    np.testing.assert_allclose(double_center(fit.cell_means), fit.beta, atol=1e-9)
    np.testing.assert_allclose(fit.beta.sum(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(fit.beta.sum(axis=1), 0, atol=1e-9)


def test_estimators_broadcast_over_a_stack():
    stack = np.stack([_panel(s, drop=10) for s in range(4)])
    for estimate in (missing.available_means_beta, missing.task_adjusted_beta,
                     missing.least_squares_beta):
        np.testing.assert_allclose(estimate(stack), np.stack([estimate(p) for p in stack]),
                                   atol=1e-9)
    ridge = missing.least_squares_fit(stack, "ridge")
    assert ridge.ridge_lambda.shape == (4,)
    np.testing.assert_allclose(
        ridge.beta, np.stack([missing.least_squares_beta(p, "ridge") for p in stack]), atol=1e-9)


def test_estimate_beta_states_its_estimator():
    complete = _panel(7)
    result = missing.estimate_beta(complete)
    assert result.method == "plain" and result.n_missing == 0
    assert "default for a complete panel" in result.note
    incomplete = _panel(7, drop=5)
    result = missing.estimate_beta(incomplete)
    assert result.method == missing.DEFAULT_INCOMPLETE_METHOD == "least_squares"
    assert result.n_missing == 5 and "default for an incomplete panel" in result.note
    np.testing.assert_allclose(result.beta, missing.least_squares_beta(incomplete), atol=1e-9)
    chosen = missing.estimate_beta(incomplete, "task_adjusted")
    assert "chosen by the panel setting" in chosen.note
    np.testing.assert_allclose(chosen.beta, missing.task_adjusted_beta(incomplete))
    with pytest.raises(ValueError, match="complete panel"):
        missing.estimate_beta(incomplete, "plain")
    with pytest.raises(ValueError, match="unknown beta estimator"):
        missing.estimate_beta(incomplete, "median")


def test_validation_names_unidentified_cells():
    values = _panel(8)
    values[:, 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"\(1, 2\)"):
        missing.least_squares_beta(values)
    with pytest.raises(ValueError, match="task_language"):
        missing.least_squares_beta(_panel(8), task_language="random")
    with pytest.raises(ValueError, match="complete"):
        missing.deletion_experiment(_panel(8, drop=1))


# --- devai ---------------------------------------------------------------------------------------

def test_least_squares_is_plain_cbc_on_devai(devai_panel):
    plain = double_center(devai_panel.cell_means())
    for task_language in (False, "fixed", "ridge"):
        np.testing.assert_allclose(missing.least_squares_beta(devai_panel.values, task_language),
                                   plain, atol=1e-9)


def test_devai_deletion_experiment_reproduces_and_beats_published(devai_panel):
    result = missing.deletion_experiment(devai_panel.values, n_replicates=200, seed=0)
    mae = result.set_index(["method", "rate"])["mae_mean"]
    published = {("available_means", 0.05): 0.34, ("available_means", 0.10): 0.51,
                 ("task_adjusted", 0.05): 0.23, ("task_adjusted", 0.10): 0.33}
    for key, value in published.items():
        assert mae[key] == pytest.approx(value, abs=0.02), key
    for rate in (0.05, 0.10):  # target: at least 25% below task-adjusted means
        assert mae["least_squares", rate] <= 0.75 * mae["task_adjusted", rate]
    assert list(result.columns) == ["rate", "method", "n_deleted", "mae_mean", "mae_sd",
                                    "n_replicates"]
    assert (result["n_deleted"] == np.repeat([132, 264], 3)).all()


def test_runs_treating_empty_as_missing_hand_computed():
    rows = [("t1", "L", "B", "F1", 0, 1, "sat_tag"), ("t1", "L", "B", "F1", 1, 0, "empty"),
            ("t1", "L", "B", "F1", 2, 0, "unsat_tag"), ("t1", "L", "B", "F2", 0, 0, "empty"),
            ("t1", "L", "B", "F2", 1, 0, "empty"), ("t1", "L", "B", "F2", 2, 0, "empty")]
    frame = pd.DataFrame(rows, columns=["task", "language", "backbone", "framework",
                                        "requirement_id", "satisfied", "response_status"])
    frame["category"] = "c"
    runs = missing.runs_treating_empty_as_missing(frame)
    assert len(runs) == 1  # F2 has no answered requirement: dropped
    row = runs.iloc[0]
    assert (row["framework"], row["n_requirements"], row["n_answered"]) == ("F1", 3, 2)
    assert row["score"] == pytest.approx(50.0)
    with pytest.raises(ValueError, match="response_status"):
        missing.runs_treating_empty_as_missing(frame.drop(columns="response_status"))


@pytest.fixture(scope="module")
def devai_parse_failures():
    requirements = pd.read_parquet(DEVAI_DIR / "requirement_judgments.parquet")
    return missing.parse_failure_effect(requirements, DEVAI_LANGUAGES, DEVAI_BACKBONES)


def test_devai_parse_failure_effect(devai_parse_failures):
    frame = devai_parse_failures.set_index(["language", "backbone"])
    # stored view is the published CBC
    assert frame.loc[("Spanish", "gpt-4o"), "beta_stored"] == pytest.approx(-20.606, abs=1e-3)
    qwen_es, qwen_sw = frame.loc[("Spanish", "qwen3.5-9b")], frame.loc[("Swahili", "qwen3.5-9b")]
    assert qwen_es["share_empty"] == pytest.approx(680 / 1095)
    assert qwen_sw["share_empty"] == pytest.approx(736 / 1095)
    # 16 qwen runs lose every answer, but no task cell loses all three frameworks
    assert frame["n_missing_tasks"].sum() == 0
    assert (frame["method_missing"] == "plain").all()
    # answered-only scores are higher where qwen's answers were empty, and beta rises there
    for cell in (qwen_es, qwen_sw):
        assert cell["mean_missing"] > cell["mean_stored"] + 2
        assert cell["beta_missing"] > cell["beta_stored"]
    np.testing.assert_allclose(frame["difference"], frame["beta_stored"] - frame["beta_missing"])
    np.testing.assert_allclose(frame.groupby("backbone")["beta_missing"].sum(), 0, atol=1e-9)
    # backbones with no empty responses change only through the shared margins
    assert frame.loc[frame["share_empty"] == 0, "difference"].abs().max() < 1.0


def test_deletion_experiment_does_not_depend_on_the_block_size():
    """Replicates drawn in blocks from the one stream: the same table, to the bit, whatever
    the block (the default fits the whole stack of this small panel in one)."""
    values = _panel(1)
    tables = [missing.deletion_experiment(values, (0.1, 0.2), 7, 3, missing.METHODS[1:],
                                          block_size=size) for size in (1, 3, None)]
    for table in tables[1:]:
        pd.testing.assert_frame_equal(table, tables[0], check_exact=True)


def test_least_squares_fit_of_a_panel_does_not_depend_on_its_stack():
    stack = np.stack([_panel(s, drop=10 + 5 * s) for s in range(3)])
    for variant in (False, "fixed", "ridge"):
        together = missing.least_squares_fit(stack, variant)
        for i, panel in enumerate(stack):
            alone = missing.least_squares_fit(panel, variant)
            np.testing.assert_array_equal(together.beta[i], alone.beta)
            np.testing.assert_array_equal(together.cell_means[i], alone.cell_means)
