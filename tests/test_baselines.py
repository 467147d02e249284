"""The held-out methods: known answers, identities, peer implementations, planted truth."""
import contextlib
import io

import numpy as np
import pandas as pd
import pytest

from polyjudge.analyses.baselines import (
    METHODS,
    BinaryItems,
    HeldoutContext,
    MethodUnavailable,
    combat_fit,
    dawid_skene,
    dawid_skene_scores,
    ensemble,
    quantile,
    requirement_items,
    _pattern_counts,
    _rank_bounds,
    run_items,
)
from polyjudge.analyses.binary_verdicts import streamed_run_items
from polyjudge.cbc.bootstrap import TaskBootstrap, mean_pairwise_tau, task_bootstrap
from polyjudge.cbc.estimator import rank_within_language
from polyjudge.data.panel import Panel


def random_panel(seed=0, n=40, k=5, m=4) -> Panel:
    """Continuous scores with a language x backbone interaction (no ties)."""
    rng = np.random.default_rng(seed)
    values = 50 + rng.normal(0, 8, (1, k, m)) + rng.normal(0, 5, (1, 1, m)) \
        + rng.normal(0, 10, (n, k, m))
    return Panel(values, tuple(f"t{i}" for i in range(n)), tuple(f"L{i}" for i in range(k)),
                 tuple(f"B{i}" for i in range(m)))


@pytest.fixture(scope="module")
def ctx():
    panel = random_panel()
    boot = task_bootstrap(panel.shape[0], 200, 1, row_permutations=panel.shape[1:])
    return HeldoutContext.build(panel, boot, 1)


def test_every_method_returns_the_replicate_stack(ctx):
    for name, method in METHODS.items():
        if name.startswith("Dawid-Skene"):
            with pytest.raises(MethodUnavailable):
                method(ctx)
            continue
        assert method(ctx).shape == ctx.M_ev.shape, name


def test_oracle_is_perfectly_consistent(ctx):
    np.testing.assert_allclose(mean_pairwise_tau(METHODS["Oracle"](ctx)), 1.0)


def test_cbc_weighted_ranks_equal_cbc(ctx):
    assert np.array_equal(rank_within_language(METHODS["CBC"](ctx)),
                          rank_within_language(METHODS["CBC-Weighted"](ctx)))


def test_per_language_norm_and_combat_eb_keep_raw_order(ctx):
    raw = mean_pairwise_tau(ctx.M_ev)
    for name in ("Per-language norm", "ComBat-EB"):
        x = METHODS[name](ctx)
        assert np.array_equal(rank_within_language(x), rank_within_language(ctx.M_ev)), name
        np.testing.assert_allclose(mean_pairwise_tau(x), raw, err_msg=name)
    # ComBat-EB is one increasing affine map per language row
    x, m = METHODS["ComBat-EB"](ctx), ctx.M_ev
    slope = (x[..., 1:] - x[..., :1]) / (m[..., 1:] - m[..., :1])
    np.testing.assert_allclose(slope, np.broadcast_to(slope[..., :1], slope.shape), rtol=1e-9)
    assert (slope > 0).all()


def test_random_control_permutes_each_row(ctx):
    x = METHODS["Random"](ctx)
    np.testing.assert_array_equal(np.sort(x, axis=-1), np.sort(ctx.M_ev, axis=-1))
    assert abs(np.nanmean(mean_pairwise_tau(x))) < 0.1


def test_location_baselines_known_answers(ctx):
    col = ctx.M_tr.mean(axis=-2, keepdims=True)
    np.testing.assert_allclose(METHODS["Backbone-only"](ctx), ctx.M_ev - col)
    np.testing.assert_allclose(METHODS["Z-score"](ctx),
                               (ctx.M_ev - col) / ctx.M_tr.std(axis=-2, keepdims=True))


def test_quantile_known_answer_with_ties():
    m_tr = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]])  # columns sorted: (1,2,3), (10,20,30)
    m_ev = np.array([[5.0, 7.0], [5.0, 6.0], [9.0, 8.0]])  # column 0 has a tie at the bottom
    target = np.array([5.5, 11.0, 16.5])
    fake = HeldoutContext(panel=None, bootstrap=None, M_ev=m_ev[None], M_tr=m_tr[None], rng=None)
    expected = [[(target[0] + target[1]) / 2, target[1]],
                [(target[0] + target[1]) / 2, target[0]],
                [target[2], target[2]]]
    np.testing.assert_allclose(quantile(fake)[0], expected)
    rounded = HeldoutContext(panel=None, bootstrap=None, M_tr=m_tr[None], rng=None,
                             M_ev=(m_ev + [[0, 0], [1e-14, 0], [0, 0]])[None])
    np.testing.assert_allclose(quantile(rounded)[0], expected)  # a rounding-level tie is a tie


def test_ensemble_is_mean_percentile_rank(ctx):
    x = METHODS["Ensemble"](ctx)
    assert x.min() > 0 and x.max() <= 1
    m = ctx.M_ev.shape[-1]
    np.testing.assert_allclose(x.sum(axis=-1), (m + 1) / 2)  # ranks 1..m average to (m+1)/2



def test_infinite_z_scores_rank_beyond_the_finite_ones_without_a_warning():
    import warnings

    import scipy.stats
    x = np.array([[1.0, np.inf, 3.0, np.inf, -np.inf, 1.0], [2.0, 2.0, -np.inf, 0.5, 9.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = _rank_bounds(x, axis=-1)
    np.testing.assert_array_equal((lo + hi + 1) / 2, scipy.stats.rankdata(x, axis=-1))
    # backbone 1 is the same in both in-bag languages: its Z-score is +-inf out of bag
    m_tr = np.array([[1.0, 5.0, 3.0], [2.0, 5.0, 7.0]])
    m_ev = np.array([[1.5, 6.0, 2.0], [2.5, 4.0, 6.0]])
    fake = HeldoutContext(panel=None, bootstrap=None, M_ev=m_ev[None], M_tr=m_tr[None], rng=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ranks = ensemble(fake)[0] * 3 * 3  # summed ranks of the three parts
    # Z-score ranks backbone 1 first in language 0 (+inf) and last in language 1 (-inf)
    np.testing.assert_allclose(ranks.sum(axis=-1), 3 * 6)
    assert ranks[0, 1] > ranks[1, 1]

# --- standard ComBat against neuroCombat -------------------------------------------------------

def neurocombat_cells(values):
    """neuroCombat on samples = (task, language), features = backbones, batch = language."""
    neuro = pytest.importorskip("neuroCombat")
    n, k, m = values.shape
    covars = pd.DataFrame({"language": np.tile(np.arange(k), n)})
    with contextlib.redirect_stdout(io.StringIO()):
        out = neuro.neuroCombat(values.reshape(n * k, m).T, covars, "language")
    return out["data"].T.reshape(n, k, m), out["estimates"]


def test_standard_combat_equals_neurocombat(devai_panel):
    values = devai_panel.values
    reference, estimates = neurocombat_cells(values)
    fit = combat_fit(values, np.ones((1, len(values))))
    np.testing.assert_allclose(fit.gamma[0], estimates["gamma.star"], atol=1e-10)
    np.testing.assert_allclose(fit.delta[0], estimates["delta.star"], atol=1e-10)
    np.testing.assert_allclose(fit.adjust(values), reference, atol=1e-9)


def test_weighted_combat_equals_neurocombat_on_the_resampled_tasks():
    values = random_panel(seed=4, n=30).values
    counts = task_bootstrap(30, 1, 9).counts
    reference, estimates = neurocombat_cells(np.repeat(values, counts[0], axis=0))
    fit = combat_fit(values, counts)
    np.testing.assert_allclose(fit.gamma[0], estimates["gamma.star"], atol=1e-10)
    np.testing.assert_allclose(fit.delta[0], estimates["delta.star"], atol=1e-10)


# --- Dawid-Skene -------------------------------------------------------------------------------

def planted_labels(seed=0, n_items=3000, prior=0.3):
    rng = np.random.default_rng(seed)
    sens = np.array([0.95, 0.9, 0.8, 0.7, 0.85, 0.6, 0.75, 0.9])
    spec = np.array([0.9, 0.7, 0.95, 0.8, 0.6, 0.85, 0.9, 0.75])
    z = rng.random(n_items) < prior
    p_one = np.where(z[:, None], sens, 1 - spec)
    return (rng.random((n_items, len(sens))) < p_one).astype(float), z, sens, spec


def test_dawid_skene_recovers_planted_annotators():
    labels, z, sens, spec = planted_labels()
    fit = dawid_skene(labels, np.ones((1, len(labels)), bool), max_iter=200)
    np.testing.assert_allclose(fit.sensitivity[0], sens, atol=0.04)
    np.testing.assert_allclose(fit.specificity[0], spec, atol=0.04)
    assert fit.prior[0] == pytest.approx(z.mean(), abs=0.02)
    assert ((fit.posterior[0] > 0.5) == z).mean() > 0.95


@pytest.mark.filterwarnings("ignore")  # crowd-kit's own pandas deprecation warnings
def test_dawid_skene_matches_crowdkit_at_its_fixed_point():
    aggregation = pytest.importorskip("crowdkit.aggregation")
    labels, _, _, _ = planted_labels(seed=1, n_items=400)
    long = pd.DataFrame([(i, a, int(labels[i, a])) for i in range(len(labels))
                         for a in range(labels.shape[1])], columns=["task", "worker", "label"])
    peer = aggregation.DawidSkene(n_iter=500, tol=1e-12).fit(long)
    # crowd-kit: no smoothing, starts from majority-vote proportions (unclipped)
    fit = dawid_skene(labels, np.ones((1, len(labels)), bool), max_iter=500, tol=1e-12,
                      smoothing=0.0, clip=1e-12, init_clip=0.0)
    np.testing.assert_allclose(fit.posterior[0], peer.probas_[1].sort_index(), atol=1e-6)
    errors = peer.errors_  # P(observed label | true label), indexed by (worker, observed label)
    sens = errors[1].xs(1, level="label").sort_index()
    spec = errors[0].xs(0, level="label").sort_index()
    np.testing.assert_allclose(fit.sensitivity[0], sens, atol=1e-6)
    np.testing.assert_allclose(fit.specificity[0], spec, atol=1e-6)


def test_dawid_skene_stacked_replicates_equal_separate_fits():
    labels, _, _, _ = planted_labels(seed=2, n_items=300)
    labels[::17, 3] = np.nan  # some missing verdicts
    fit_mask = np.random.default_rng(3).random((6, 300)) < 0.6
    stacked = dawid_skene(labels, fit_mask)
    for r in range(6):
        alone = dawid_skene(labels, fit_mask[r:r + 1])
        np.testing.assert_allclose(stacked.posterior[r], alone.posterior[0], atol=1e-12)
        np.testing.assert_allclose(stacked.sensitivity[r], alone.sensitivity[0], atol=1e-12)
        assert stacked.n_iter[r] == alone.n_iter[0]
    assert (stacked.n_iter <= 25).all()


def test_dawid_skene_scores_known_case():
    """One annotator pattern per item; scores = 100 x mean agreement with the posterior."""
    labels = np.array([[1, 1], [1, 0], [0, 0], [0, 0]], float).reshape(4, 1, 2)
    items = BinaryItems(labels=labels, task=np.array([0, 1, 2, 3]))
    boot = TaskBootstrap(counts=np.array([[2, 1, 1, 0]]),
                         oob=np.array([[False, False, False, True]]))
    post = dawid_skene(labels.reshape(4, 2), boot.counts > 0).posterior[0, 3]
    scores = dawid_skene_scores(items, boot)
    np.testing.assert_allclose(scores[0, 0], [100 * (1 - post)] * 2)


def test_binary_items_from_the_standard_tables(devai_panel, devai_runs):
    items = run_items(devai_runs, devai_panel)
    assert items.labels.shape == (165, 8, 6) and np.isfinite(items.labels).all()
    assert items.labels.sum() == (devai_runs["score"] == 100).sum()
    assert np.array_equal(np.bincount(items.task), np.full(55, 3))
    requirements = pd.DataFrame({
        "task": devai_panel.tasks[0], "language": "Arabic", "backbone": "gpt-4o",
        "framework": ["F1", "F1", "F2"], "requirement_id": [0, 1, 0], "category": "x",
        "satisfied": [1, 0, 1]})
    req = requirement_items(requirements, devai_panel)
    assert req.labels.shape == (3, 8, 6) and np.isfinite(req.labels).sum() == 3
    assert np.nansum(req.labels[:, 1, 0]) == 2 and (req.task == 0).all()
    with pytest.raises(ValueError, match="not in the panel"):
        run_items(devai_runs.assign(language="Klingon"), devai_panel)


def test_streamed_run_items_equal_run_items(devai_panel, devai_runs, tmp_path):
    """The held-out step's batched reader builds the items of the in-memory builder: same
    items in the same order, across batch boundaries, frameworks first seen out of order and
    missing verdicts."""
    rng = np.random.default_rng(3)
    runs = devai_runs.iloc[rng.permutation(len(devai_runs))[:-40]].reset_index(drop=True)
    runs["framework"] = runs["framework"].astype(str).map(lambda f: f"z{f}" if f < "M" else f)
    path = tmp_path / "runs.parquet"
    runs.astype({c: str for c in ("task", "language", "backbone", "framework")}).to_parquet(path)
    simple = run_items(runs, devai_panel, 50.0)
    streamed = streamed_run_items(path, devai_panel, 50.0, batch_rows=999)
    assert np.isnan(simple.labels).sum() == 40
    np.testing.assert_array_equal(streamed.labels, simple.labels)
    np.testing.assert_array_equal(streamed.task, simple.task)
    assert streamed.threshold == simple.threshold == 50.0
    with pytest.raises(ValueError, match="more than one verdict"):
        pd.concat([runs, runs.iloc[:1]]).astype(str).assign(score=1.0).to_parquet(path)
        streamed_run_items(path, devai_panel)


def test_pattern_counts_equal_the_one_hot_product():
    rng = np.random.default_rng(5)
    inverse = rng.integers(0, 7, 50)
    mask = rng.random((4, 50)) < 0.6
    onehot = np.eye(7)[inverse]
    np.testing.assert_array_equal(_pattern_counts(mask, inverse, 7), mask.astype(float) @ onehot)
