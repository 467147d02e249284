"""Conditional mutual information I(Score; Language | Backbone, Task) and its permutation test.

CBC paper, section 6 (docs/methods.md section 6). The conditioning variables are discrete, so the
CMI is the mean over strata s = (task, backbone) of the mutual information between the
continuous run score and the discrete language inside the stratum, estimated by Ross (2014),
"Mutual information between discrete and continuous data sets", PLoS ONE 9(2):

    I = psi(N) - <psi(N_y)> + <psi(k_i)> - <psi(m_i)>          (nats)

N points; N_y the size of point i's label; k_i = min(k, N_y - 1); eps_i the distance to the
k_i-th nearest neighbour among the other points with the same label; m_i the number of points
within eps_i (all labels). Points whose label occurs once are left out (N counts the rest), as
scikit-learn does (the published protocol never meets them: devai has 3 points per label).
Judge scores are multiples of 100/R, so ties are everywhere and the count m_i decides the
value; two conventions, both reported, labelled:

* ``"protocol"`` (the published analysis): m_i = #{j != i : |x_j - x_i| <= eps_i}, floored at 1.
  Devai: debiased 0.178 nats.
* ``"sklearn"`` (``sklearn.feature_selection._mutual_info._compute_mi_cd``):
  m_i = #{j : |x_j - x_i| <= nextafter(eps_i, 0)}, the point itself included, i.e. strictly
  inside the radius, except that eps_i = 0 counts the points tied with i. Unlike scikit-learn
  the estimate is not clipped at 0 (a clipped statistic biases a permutation null).
  Devai: debiased 0.137 nats.

Distances are ``|x_i - x_j|``, one floating-point operation, for the radius and the counts
alike. scikit-learn takes the radius from another routine (an expanded-square formula) than
the counts; where ``x_i - x_j`` is inexact (scores like 100/3 or 100/6) that radius can round
up past a tied boundary point and count it. So ``max(0, ross_mi(..., "sklearn"))`` equals
``_compute_mi_cd`` on exactly representable scores (e.g. multiples of 100/R for R = 2, 4, 5,
10, 20), but not always on devai's scores (93 of 330 strata differ there).

The null shuffles the score-language pairing independently within every stratum; the debiased
value is ``observed - null_r`` per replicate (see :func:`cmi_test`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import digamma

CONVENTIONS = ("protocol", "sklearn")


# --- strata ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CMIStrata:
    """Run scores arranged by stratum: ``scores[s, p]`` and ``labels[s, p]``.

    Axis 0, strata: s = task_index * n_backbones + backbone_index (task-major).
    Axis 1, points: p = language_index * n_frameworks + framework_index (language-major).
    ``labels[s, p]`` is the language index of point p.
    """

    scores: np.ndarray
    labels: np.ndarray
    tasks: tuple[str, ...]
    backbones: tuple[str, ...]
    languages: tuple[str, ...]
    frameworks: tuple[str, ...]

    def strata_frame(self) -> pd.DataFrame:
        """task, backbone of every stratum, in axis-0 order."""
        return pd.DataFrame({"task": np.repeat(self.tasks, len(self.backbones)),
                             "backbone": np.tile(self.backbones, len(self.tasks))})


def cmi_strata(runs: pd.DataFrame, tasks=None, languages=None, backbones=None,
               frameworks=None) -> CMIStrata:
    """Arrange a run table (task, language, backbone, framework, score) into CMI strata.

    Orders: as given (e.g. a Panel's ``tasks``, ``languages``, ``backbones``), else the order of
    first appearance. Every stratum must have exactly one run per language x framework.
    """
    missing = [c for c in ("task", "language", "backbone", "framework", "score")
               if c not in runs.columns]
    if missing:
        raise ValueError(f"cmi_strata: run table lacks column(s) {missing}")
    order = {}
    for axis, wanted in (("task", tasks), ("language", languages), ("backbone", backbones),
                         ("framework", frameworks)):
        present = pd.unique(runs[axis].astype(str))
        order[axis] = tuple(str(w) for w in wanted) if wanted is not None else tuple(present)
        unknown = sorted(set(present) - set(order[axis]))
        if unknown:
            raise ValueError(f"cmi_strata: {axis}(s) {unknown[:5]} are not in the given order")
    keys = ["task", "backbone", "language", "framework"]
    codes = [pd.Categorical(runs[axis].astype(str), categories=order[axis]).codes for axis in keys]
    shape = tuple(len(order[axis]) for axis in keys)
    flat = np.ravel_multi_index(codes, shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape)))
    if (counts != 1).any():
        raise ValueError(f"cmi_strata: each (task, backbone) stratum needs exactly one run per "
                         f"language x framework; {int((counts == 0).sum())} are missing and "
                         f"{int((counts > 1).sum())} duplicated")
    scores = np.empty(flat.size)
    scores[flat] = runs["score"].to_numpy(float)
    if not np.isfinite(scores).all():
        raise ValueError("cmi_strata: scores must be finite")
    n_strata, n_points = shape[0] * shape[1], shape[2] * shape[3]
    labels = np.repeat(np.arange(shape[2]), shape[3])
    return CMIStrata(scores=scores.reshape(n_strata, n_points),
                     labels=np.broadcast_to(labels, (n_strata, n_points)).copy(),
                     tasks=order["task"], backbones=order["backbone"],
                     languages=order["language"], frameworks=order["framework"])


# --- the estimator -----------------------------------------------------------------------------

def _check_mi_inputs(scores, labels, k, convention) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels)
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if scores.ndim < 1 or scores.shape[-1] < 2:
        raise ValueError("scores need a last axis of at least 2 points")
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError("labels must be integers (e.g. language indices)")
    try:
        np.broadcast_shapes(scores.shape, labels.shape)
    except ValueError:
        raise ValueError(f"scores {scores.shape} and labels {labels.shape} do not broadcast") from None
    return scores, labels


def ross_mi(scores, labels, k: int = 2, convention: str = "protocol") -> np.ndarray:
    """Ross (2014) MI between continuous ``scores`` and discrete ``labels`` along the last axis.

    ``scores (..., N)`` and ``labels (..., N)`` broadcast against each other, so a
    ``(strata, N)`` score array with ``(permutations, strata, N)`` labels gives one value per
    permutation and stratum. Tie conventions: see the module docstring. Returns ``(...)`` nats,
    NaN where no label has two points.
    """
    scores, labels = _check_mi_inputs(scores, labels, k, convention)
    return _ross_mi(scores, labels, k, convention)


def _ross_mi(scores, labels, k, convention):
    scores, labels = np.broadcast_arrays(scores, labels)
    n_points = scores.shape[-1]
    dist = np.abs(scores[..., :, None] - scores[..., None, :])          # (..., N, N)
    same = labels[..., :, None] == labels[..., None, :]
    n_label = same.sum(axis=-1)                                           # N_y, self included
    kept = n_label > 1
    k_i = np.minimum(k, n_label - 1)
    other = ~np.eye(n_points, dtype=bool)
    within = np.where(same & other, dist, np.inf)
    k_max = min(k, n_points - 1)
    nearest = np.partition(within, np.arange(k_max), axis=-1)[..., :k_max]
    eps = np.take_along_axis(nearest, np.maximum(k_i - 1, 0)[..., None], axis=-1)
    counted = kept[..., None, :]                                          # neighbours: kept points
    if convention == "protocol":
        m = np.maximum(((dist <= eps) & counted & other).sum(axis=-1), 1)
    else:
        m = ((dist <= np.nextafter(eps, 0)) & counted).sum(axis=-1)
    n = kept.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = digamma(np.maximum(k_i, 1)) - digamma(n_label) - digamma(np.maximum(m, 1))
        return np.where(n > 0, digamma(np.maximum(n, 1)) + (terms * kept).sum(axis=-1) / n, np.nan)


# --- permutation null -----------------------------------------------------------------------

def permute_within_strata(values: np.ndarray, n_permutations: int,
                          rng: np.random.Generator) -> np.ndarray:
    """``(n_permutations, ..., N)``: ``values`` shuffled independently along the last axis.

    Each permutation is the argsort of ``rng.random`` draws, so consecutive calls continue one
    stream: drawing B permutations in chunks gives the same permutations as drawing them at once.
    """
    values = np.asarray(values)
    order = rng.random((n_permutations,) + values.shape).argsort(axis=-1)
    return np.take_along_axis(np.broadcast_to(values, order.shape), order, axis=-1)


def shard_seeds(seed: int, n_shards: int) -> list[np.random.SeedSequence]:
    """Independent seeds of ``n_shards`` null shards: ``SeedSequence(seed).spawn(n_shards)``.

    Shard s draws ``shard_sizes(B, n_shards)[s]`` permutations with ``cmi_null(...,
    seed=shard_seeds(seed, n_shards)[s])``; the merged null (shards concatenated in index order)
    is a pure function of the seed, B and the shard count, whatever runs the shards.
    """
    if isinstance(n_shards, bool) or not isinstance(n_shards, (int, np.integer)) or n_shards < 1:
        raise ValueError(f"n_shards must be a positive integer, got {n_shards!r}")
    return np.random.SeedSequence(seed).spawn(int(n_shards))


def shard_sizes(n_permutations: int, n_shards: int) -> list[int]:
    """Permutations per shard: as equal as possible, the first shards one larger."""
    if not 1 <= n_shards <= n_permutations:
        raise ValueError(f"need 1 <= n_shards <= n_permutations, got {n_shards} shards for "
                         f"{n_permutations} permutations")
    base, extra = divmod(int(n_permutations), int(n_shards))
    return [base + (s < extra) for s in range(n_shards)]


def _neighbour_counts(scores: np.ndarray, convention: str) -> np.ndarray:
    """``count[s, i, j]``: m_i of the convention if eps_i were ``|x_j - x_i|`` (int16).

    m_i is non-decreasing in eps_i, so the m_i of a labelling is the k_i-th smallest
    ``count[s, i, j]`` over the other points j with i's label.
    """
    dist = np.abs(scores[..., :, None] - scores[..., None, :])          # (S, N, N)
    if convention == "protocol":
        inside = dist[..., None, :] <= dist[..., :, None]                 # (S, i, j, j')
        return np.maximum(inside.sum(axis=-1) - 1, 1).astype(np.int16)  # j' = i left out
    inside = dist[..., None, :] <= np.nextafter(dist, 0)[..., :, None]
    return inside.sum(axis=-1).astype(np.int16)


def _kth_smallest(values: np.ndarray, kth: np.ndarray) -> np.ndarray:
    """The ``kth``-th smallest (1-based) along the short leading axis, by counting (no sort).

    v is the k-th smallest iff #{< v} < k <= #{<= v}: width^2 elementwise passes over the
    trailing axes, much faster than sorting millions of rows of a few values.
    """
    result = np.zeros(values.shape[1:], dtype=values.dtype)
    for v in values:
        below = sum((other < v).astype(np.int8) for other in values)
        upto = sum((other <= v).astype(np.int8) for other in values)
        np.copyto(result, v, where=(below < kth) & (upto >= kth))
    return result


def cmi_null(scores, labels, k: int = 2, convention: str = "protocol",
             n_permutations: int = 500, seed: int | np.random.SeedSequence = 407,
             chunk: int = 100) -> np.ndarray:
    """``(n_permutations,)`` null draws of the CMI: mean over strata of the Ross estimate with
    the score-label pairing shuffled independently within every stratum.

    ``scores``, ``labels``: ``(strata, N)``; every label must have at least 2 points in its
    stratum. Draw r is ``ross_mi(permute_within_strata(scores, B, rng)[r], labels).mean()``
    with ``rng = np.random.default_rng(seed)`` (shuffling the scores against fixed labels is
    the same null as shuffling the labels). For a shard pass one of :func:`shard_seeds`.

    Fast path: the neighbour counts of every (point, candidate radius) are computed once per
    stratum (:func:`_neighbour_counts`); a permutation then only gathers, for each position, the
    counts towards its same-label positions, ``strata x N x (N_y - 1)`` values. Permutations
    are drawn ``chunk`` at a time; the draws do not depend on ``chunk``.
    """
    scores, labels = _check_mi_inputs(scores, labels, k, convention)
    if scores.ndim != 2:
        raise ValueError(f"scores must be (strata, points), got shape {scores.shape}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) \
            or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    labels = np.broadcast_to(labels, scores.shape)
    n_strata, n_points = scores.shape
    same = labels[:, :, None] == labels[:, None, :]
    n_label = same.sum(axis=-1)                                           # (S, N)
    if (n_label < 2).any():
        raise ValueError("cmi_null: every label needs at least 2 points in each stratum")
    k_i = np.minimum(k, n_label - 1)
    fixed = (digamma(n_points) + (digamma(k_i) - digamma(n_label)).mean(axis=-1))   # (S,)

    # same-label partner positions of each position, padded with the position itself
    width = int(n_label.max()) - 1
    position = np.arange(n_points)
    candidates = np.where(same & (position[:, None] != position), position, n_points)
    partners = np.moveaxis(np.sort(candidates, axis=-1)[..., :width], -1, 0)[:, None]
    padded = partners == n_points                                         # (width, 1, S, N)
    partners = np.where(padded, position, partners)

    counts = _neighbour_counts(scores, convention).reshape(-1)            # (S * N * N,)
    stratum = (np.arange(n_strata) * n_points * n_points)[:, None]
    psi = digamma(np.maximum(np.arange(n_points + 1), 1))                 # psi[m] for m >= 1
    rng = np.random.default_rng(seed)
    null = np.empty(n_permutations)
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        point = permute_within_strata(np.broadcast_to(position, scores.shape), size, rng)
        partner = np.take_along_axis(point[None], partners, axis=-1)      # (width, b, S, N)
        key = counts[stratum + point * n_points + partner]
        key[np.broadcast_to(padded, key.shape)] = np.iinfo(key.dtype).max
        m = _kth_smallest(key, k_i)                                       # (b, S, N)
        null[start:start + size] = (fixed - psi[m].mean(axis=-1)).mean(axis=-1)
    return null


@dataclass(frozen=True)
class CMITest:
    """The CMI statistic against its permutation null (CBC paper, section 6).

    observed: mean over strata of the estimate; debiased: mean over replicates of
    ``observed - null_r``; band_low / band_high: 2.5 / 97.5 percentiles of those debiased values
    (a null-spread band, not a sampling CI); ``p_value = (1 + #{null >= observed}) / (1 + B)``.
    ``dataclasses.asdict`` gives a JSON-ready dict.
    """

    n_strata: int
    n_permutations: int
    observed: float
    null_mean: float
    debiased: float
    band_low: float
    band_high: float
    p_value: float


def cmi_test(observed_strata, null) -> CMITest:
    """Summarise per-stratum observed estimates ``(strata,)`` against null draws ``(B,)``."""
    observed_strata = np.asarray(observed_strata, dtype=float)
    null = np.asarray(null, dtype=float)
    if observed_strata.ndim != 1 or null.ndim != 1 or not len(null):
        raise ValueError("cmi_test needs per-stratum estimates (strata,) and null draws (B,)")
    if not (np.isfinite(observed_strata).all() and np.isfinite(null).all()):
        raise ValueError("cmi_test: observed estimates and null draws must be finite")
    observed = float(observed_strata.mean())
    debiased = observed - null
    low, high = np.percentile(debiased, [2.5, 97.5])
    return CMITest(n_strata=len(observed_strata), n_permutations=len(null), observed=observed,
                   null_mean=float(null.mean()), debiased=float(debiased.mean()),
                   band_low=float(low), band_high=float(high),
                   p_value=(1 + int((null >= observed).sum())) / (1 + len(null)))


# --- KSG conditional MI for continuous conditioning variables -------------------------------

def ksg_cmi(x, y, z, k: int = 3) -> float:
    """Frenzel-Pompe (2007) KSG estimate of I(X; Y | Z) in nats, for continuous Z.

    ``I = psi(k) - < psi(n_xz + 1) + psi(n_yz + 1) - psi(n_z + 1) >``, with eps_i the max-norm
    distance to the k-th neighbour in the joint (x, y, z) space and n_* the number of other
    points strictly within eps_i in each marginal space (Frenzel & Pompe, Phys. Rev. Lett. 99,
    204101). Inputs are ``(n,)`` or ``(n, d)``; assumes no exact ties (add noise to tied data).
    A labelled alternative to the stratum-wise Ross estimate when the conditioning variables
    are not discrete.
    """
    import scipy.spatial  # here, not at the top: the workflow's CMI steps never need it

    x, y, z = (np.asarray(v, dtype=float).reshape(len(v), -1) for v in (x, y, z))
    n = len(x)
    if not len(y) == len(z) == n:
        raise ValueError("x, y and z need the same number of samples")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < n:
        raise ValueError(f"k must be an integer in [1, n), got {k!r}")
    if not all(np.isfinite(v).all() for v in (x, y, z)):
        raise ValueError("x, y and z must be finite")
    joint = np.hstack([x, y, z])
    eps = scipy.spatial.cKDTree(joint).query(joint, k=k + 1, p=np.inf)[0][:, -1]
    radius = np.nextafter(eps, 0)

    def count(space):
        tree = scipy.spatial.cKDTree(space)
        return tree.query_ball_point(space, radius, p=np.inf, return_length=True) - 1

    n_xz, n_yz, n_z = count(np.hstack([x, z])), count(np.hstack([y, z])), count(z)
    return float(digamma(k) - np.mean(digamma(n_xz + 1) + digamma(n_yz + 1) - digamma(n_z + 1)))
