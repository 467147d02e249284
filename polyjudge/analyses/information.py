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
value is ``observed - null_r`` per replicate (see :func:`cmi_test`). The strata themselves are
arranged by :mod:`polyjudge.analyses.cmi_strata` (re-exported here).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma

from .cmi_strata import CMIStrata, cmi_strata, read_cmi_strata  # noqa: F401

CONVENTIONS = ("protocol", "sklearn")


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
        raise ValueError(f"scores {scores.shape} and labels {labels.shape} do not "
                         "broadcast") from None
    return scores, labels


_ROSS_BYTES = 64 << 20   # working memory of ross_mi: rows are estimated a block at a time


def ross_mi(scores, labels, k: int = 2, convention: str = "protocol") -> np.ndarray:
    """Ross (2014) MI between continuous ``scores`` and discrete ``labels`` along the last axis.

    ``scores (..., N)`` and ``labels (..., N)`` broadcast against each other, so a
    ``(strata, N)`` score array with ``(permutations, strata, N)`` labels gives one value per
    permutation and stratum. Tie conventions: see the module docstring. Returns ``(...)`` nats,
    NaN where no label has two points. Rows are estimated in blocks (each row on its own, so
    the values do not depend on the block), in about ``_ROSS_BYTES`` of working memory.
    """
    scores, labels = _check_mi_inputs(scores, labels, k, convention)
    scores, labels = np.broadcast_arrays(scores, labels)
    shape, n_points = scores.shape[:-1], scores.shape[-1]
    scores, labels = scores.reshape(-1, n_points), labels.reshape(-1, n_points)
    rows = max(1, _ROSS_BYTES // (40 * n_points * n_points))     # (rows, N, N) working arrays
    return np.concatenate([_ross_mi(scores[i:i + rows], labels[i:i + rows], k, convention)
                           for i in range(0, len(scores), rows)] or [np.empty(0)]).reshape(shape)


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


# Working memory of the null: a chunk of permutations x a block of strata is processed at a time,
# about ``_BLOCK_ELEMENTS`` (permutation, stratum, point) elements of ~80 bytes each, and the
# per-stratum values of a chunk, ``chunk x strata`` doubles, stay under ``_CHUNK_BYTES``.
_BLOCK_ELEMENTS = 1 << 19
_CHUNK_BYTES = 16 << 20


def _uniforms(state: dict, offset: int, shape: tuple) -> np.ndarray:
    """``rng.random(shape)`` of a generator that has already drawn ``offset`` doubles.

    ``state`` is a fresh PCG64 state; each double is one 64-bit draw, so ``advance`` jumps to
    any place of the stream and a block of strata of one permutation is drawn exactly as the
    whole ``(B, strata, N)`` array would give it.
    """
    bits = np.random.PCG64()
    bits.state = state
    bits.advance(offset)
    return np.random.Generator(bits).random(shape)


def _value_tables(xs: np.ndarray, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour counts of a block of sorted strata ``xs (Sb, N)`` over their distinct values.

    Returns ``value (Sb, N)``, the distinct-value index of each sorted point, and ``table (Sb,
    D, D)`` (int16): m_i of the convention for a point of value ``u_a`` if eps_i were
    ``|u_a - u_b|``. Distances are ``|u_a - u_c|`` as for the points themselves; the counts
    weigh each distinct value by its number of points, so the table is D x D however many ties.
    """
    n_strata, n_points = xs.shape
    new = np.ones(xs.shape, dtype=bool)
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]
    value = np.cumsum(new, axis=1) - 1
    width = int(value[:, -1].max()) + 1
    distinct = np.repeat(xs[:, -1:], width, axis=1)              # padding: weight 0
    np.put_along_axis(distinct, value, xs, axis=1)
    weight = np.bincount((value + width * np.arange(n_strata)[:, None]).ravel(),
                         minlength=n_strata * width).reshape(n_strata, width)
    dist = np.abs(distinct[:, :, None] - distinct[:, None, :])     # (Sb, D, D)
    order = np.argsort(dist, axis=-1, kind="stable")
    ranked = np.take_along_axis(dist, order, axis=-1)
    weights = np.take_along_axis(np.broadcast_to(weight[:, None, :], dist.shape), order, -1)
    cum = np.cumsum(weights, axis=-1)
    index = np.arange(width)
    end = np.ones(ranked.shape, dtype=bool)
    end[..., :-1] = ranked[..., 1:] != ranked[..., :-1]
    last = np.minimum.accumulate(np.where(end, index, width)[..., ::-1], axis=-1)[..., ::-1]
    upto = np.take_along_axis(cum, last, axis=-1)                  # #{points: d <= d_ab}
    if convention == "protocol":
        sorted_counts = np.maximum(upto - 1, 1)                    # the point itself left out
    else:
        start = np.ones(ranked.shape, dtype=bool)
        start[..., 1:] = ranked[..., 1:] != ranked[..., :-1]
        first = np.maximum.accumulate(np.where(start, index, 0), axis=-1)
        below = np.take_along_axis(cum - weights, first, axis=-1)  # #{points: d < d_ab}
        sorted_counts = np.where(ranked > 0, below, upto)          # <= nextafter(d, 0)
    table = np.empty(dist.shape, dtype=np.int16)
    np.put_along_axis(table, order, sorted_counts.astype(np.int16), axis=-1)
    return value, table


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


def _label_sizes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``n_label[s, p]`` (points of stratum s with the label of point p, itself included) and
    dense label codes. Strata that share one labelling (the workflow's) share one row of each:
    broadcast views, not per-run arrays."""
    if (labels == labels[:1]).all():
        n_label, codes = _label_sizes(labels[:1].copy()) if len(labels) > 1 else (None, None)
        if n_label is not None:
            return np.broadcast_to(n_label, labels.shape), np.broadcast_to(codes, labels.shape)
    codes = np.unique(labels, return_inverse=True)[1].reshape(labels.shape)
    n_codes = int(codes.max()) + 1
    offset = codes + n_codes * np.arange(len(codes))[:, None]
    return np.bincount(offset.ravel(), minlength=len(codes) * n_codes)[offset], codes


class _StrataBlock:
    """What a block of strata needs for every permutation: sorted scores, value tables and the
    label groups of the positions (fixed: the null permutes scores against fixed labels)."""

    def __init__(self, scores, codes, k_i, k, convention):
        n_strata, n_points = scores.shape
        order = np.argsort(scores, axis=1, kind="stable")
        self.rank = np.argsort(order, axis=1)                    # sorted place of each point
        self.value, self.table = _value_tables(np.take_along_axis(scores, order, 1), convention)
        self.width = self.table.shape[-1]
        self.group_key = codes.astype(np.int64) * n_points       # label of each position
        group = np.sort(codes, axis=1)                           # label of each sorted key
        self.k_sorted = np.take_along_axis(k_i, np.argsort(codes, axis=1, kind="stable"), 1)
        self.steps = [d for d in range(1, k + 1) if d < n_points]
        self.valid = {d: (group[:, d:] == group[:, :-d]) for d in self.steps}
        self.base = (np.arange(n_strata) * self.width * self.width)[:, None]

    def m(self, point: np.ndarray) -> np.ndarray:
        """m_i at every position ``(b, Sb, N)`` of the permutations ``point`` (point at
        position)."""
        n_points = point.shape[-1]
        rank = np.take_along_axis(np.broadcast_to(self.rank, point.shape), point, axis=-1)
        key = np.sort((self.group_key + rank) * n_points + np.arange(n_points), axis=-1)
        position, rank = key % n_points, (key // n_points) % n_points
        value = np.take_along_axis(np.broadcast_to(self.value, rank.shape), rank, axis=-1)
        row = self.base + value * self.width                     # (b, Sb, N)
        high = np.iinfo(np.int16).max
        candidates = np.full((2 * len(self.steps),) + key.shape, high, dtype=np.int16)
        flat = self.table.reshape(-1)
        for i, d in enumerate(self.steps):                       # d-th same-label neighbours
            valid = self.valid[d]
            right = flat[row[..., :-d] + value[..., d:]]
            candidates[2 * i][..., :-d] = np.where(valid, right, high)
            left = flat[row[..., d:] + value[..., :-d]]
            candidates[2 * i + 1][..., d:] = np.where(valid, left, high)
        m = np.empty(key.shape, dtype=np.int16)
        np.put_along_axis(m, position, _kth_smallest(candidates, self.k_sorted), axis=-1)
        return m


def cmi_null(scores, labels, k: int = 2, convention: str = "protocol",
             n_permutations: int = 500, seed: int | np.random.SeedSequence = 407,
             chunk: int | None = None, block: int | None = None) -> np.ndarray:
    """``(n_permutations,)`` null draws of the CMI: mean over strata of the Ross estimate with
    the score-label pairing shuffled independently within every stratum.

    ``scores``, ``labels``: ``(strata, N)``; every label must have at least 2 points in its
    stratum. Draw r is ``ross_mi(permute_within_strata(scores, B, rng)[r], labels).mean()``
    with ``rng = np.random.default_rng(seed)`` (shuffling the scores against fixed labels is
    the same null as shuffling the labels). For a shard pass one of :func:`shard_seeds`.

    Bounded memory: ``chunk`` permutations x ``block`` strata at a time (default: about
    ``_BLOCK_ELEMENTS`` elements, ``_CHUNK_BYTES`` of per-stratum values); each block of a
    permutation is drawn at its own place of the one random stream (:func:`_uniforms`), and a
    stratum's value does not depend on its neighbours, so the draws are bit-identical for any
    chunk and block. Per block, the scores are sorted once and the neighbour counts of every
    (value, candidate radius) pair are tabulated over the distinct values (:func:`_value_tables`);
    a permutation then needs, per point, only its k nearest same-label points on either side in
    score order (the k_i-th nearest same-label point is among them, and m_i is non-decreasing
    in eps_i): ``O(N log N)`` per stratum and permutation.
    """
    scores, labels = _check_mi_inputs(scores, labels, k, convention)
    if scores.ndim != 2:
        raise ValueError(f"scores must be (strata, points), got shape {scores.shape}")
    for name, value in (("n_permutations", n_permutations), ("chunk", chunk), ("block", block)):
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, (int, np.integer)) or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    labels = np.broadcast_to(labels, scores.shape)
    n_strata, n_points = scores.shape
    n_label, codes = _label_sizes(labels)
    if (n_label < 2).any():
        raise ValueError("cmi_null: every label needs at least 2 points in each stratum")
    if n_label.strides[0] == 0:                      # one labelling: one row, broadcast
        k_i = np.broadcast_to(np.minimum(k, n_label[:1] - 1), scores.shape)
        fixed = np.broadcast_to(digamma(n_points) + (digamma(k_i[:1]) - digamma(n_label[:1]))
                                .mean(axis=-1), (n_strata,))
    else:
        k_i = np.minimum(k, n_label - 1)
        fixed = (digamma(n_points) + (digamma(k_i) - digamma(n_label)).mean(axis=-1))   # (S,)
    psi = digamma(np.maximum(np.arange(n_points + 1), 1))                 # psi[m] for m >= 1

    chunk = chunk or int(np.clip(_CHUNK_BYTES // (8 * n_strata), 1, n_permutations))
    block = block or max(1, _BLOCK_ELEMENTS // (chunk * n_points))
    state = np.random.default_rng(seed).bit_generator.state
    null = np.empty(n_permutations)
    blocks = range(0, n_strata, block)
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        values = np.empty((size, n_strata))
        for low in blocks:
            high = min(low + block, n_strata)
            strata = _StrataBlock(scores[low:high], codes[low:high], k_i[low:high], k,
                                  convention)
            draws = np.stack([_uniforms(state, ((start + r) * n_strata + low) * n_points,
                                        (high - low, n_points)) for r in range(size)])
            m = strata.m(draws.argsort(axis=-1))
            values[:, low:high] = fixed[low:high] - psi[m].mean(axis=-1)
        null[start:start + size] = values.mean(axis=-1)
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
