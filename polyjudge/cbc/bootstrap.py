"""The task bootstrap shared by every held-out analysis, and the vectorised rank-consistency score.

CBC paper, section 5 (held-out cross-task rank consistency; docs/methods.md section 2). A replicate
draws ``n`` tasks with replacement: the in-bag multiplicities ``w[r, t]`` weight the training
cell means ``M_tr[r] = sum_t w T / sum_t w`` and the tasks never drawn (out-of-bag, OOB) give
the evaluation means ``M_ev[r]``. The score of a ``(language, backbone)`` matrix is the mean
Kendall tau-b over all language pairs of the backbone orderings (its rows).

Everything is stacked over replicates: the bootstrap is an ``(R, n)`` weight matrix, cell means
are one matrix product, and tau is computed from sign arrays over backbone pairs with one einsum.
Scores that differ only by rounding (relative 1e-10) count as tied, so a replicate's tau does not
depend on the summation order of its cell means.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TaskBootstrap:
    """``R`` task-bootstrap replicates over ``n`` tasks.

    ``counts[r, t]``: in-bag multiplicity of task t (each row sums to n);
    ``oob[r, t]``: task t was never drawn (``counts == 0``);
    ``row_permutations[r, l]``: a permutation of the backbone axis per language, drawn from the
    same stream right after the replicate's tasks (the random control of Table 2), or None.
    """

    counts: np.ndarray
    oob: np.ndarray
    row_permutations: np.ndarray | None = None

    @property
    def n_replicates(self) -> int:
        return self.counts.shape[0]

    @property
    def n_tasks(self) -> int:
        return self.counts.shape[1]

    @classmethod
    def full_fit(cls, n_tasks: int) -> "TaskBootstrap":
        """One pseudo-replicate where every task is both in-bag (weight 1) and evaluated.

        Used for the in-sample "full-fit" column: ``M_tr = M_ev =`` the all-task cell means.
        """
        return cls(counts=np.ones((1, n_tasks), dtype=np.int64),
                   oob=np.ones((1, n_tasks), dtype=bool))


def task_bootstrap(n_tasks: int, n_replicates: int, rng,
                   row_permutations: tuple[int, int] | None = None) -> TaskBootstrap:
    """Draw ``n_replicates`` bootstraps of ``n_tasks`` tasks with replacement.

    Stream (the published protocol, ``numpy.random.Generator``; an int seeds
    ``np.random.default_rng``): for each replicate ``rng.choice(n, n, replace=True)``, and, if
    ``row_permutations=(k, m)`` is given, immediately after it ``k`` permutations of ``m``
    (``rng.permuted`` along the backbone axis) for the random-control method. With
    ``default_rng(7)`` and ``(8, 6)`` this is the identical stream of the published DevAI
    Table 2: Raw 0.650 [0.610, 0.714], CBC 0.902 [0.795, 0.968], Random 0.002 [-0.095, 0.148]
    are reproduced to the printed digits (without the interleaved permutations the draws differ
    and, e.g., the CBC upper end becomes 1.000). The legacy ``RandomState`` stream reproduces
    neither, so it is not offered. Without permutations the draws are one ``rng.integers(0, n,
    (R, n))`` call, which is the same stream as the per-replicate ``choice``.
    """
    if n_tasks < 2 or n_replicates < 1:
        raise ValueError(f"need at least 2 tasks and 1 replicate, got {n_tasks} and "
                         f"{n_replicates}")
    rng = np.random.default_rng(rng)
    perms = None
    if row_permutations is None:
        draws = rng.integers(0, n_tasks, size=(n_replicates, n_tasks))
    else:
        k, m = row_permutations
        identity = np.broadcast_to(np.arange(m), (k, m))
        draws = np.empty((n_replicates, n_tasks), dtype=np.int64)
        perms = np.empty((n_replicates, k, m), dtype=np.int64)
        for r in range(n_replicates):  # the protocol interleaves both draws in one stream
            draws[r] = rng.choice(n_tasks, n_tasks, replace=True)
            perms[r] = rng.permuted(identity, axis=1)
    offsets = draws + n_tasks * np.arange(n_replicates)[:, None]
    counts = np.bincount(offsets.ravel(), minlength=n_replicates * n_tasks)
    counts = counts.reshape(n_replicates, n_tasks)
    return TaskBootstrap(counts=counts, oob=counts == 0, row_permutations=perms)


MEMORY_BUDGET = 64 * 2 ** 20
"""Bytes of working arrays per chunk of replicates that the chunked analyses aim for."""

ROW_BLOCK = 64
"""Replicates per matrix product in :func:`weighted_cell_means`. A BLAS product's rounding can
depend on the number of rows it is given, so the cell means are always computed in blocks of
this many replicates: chunks of a multiple of it then give bit-identical cell means."""


def replicate_chunk(n_replicates: int, per_replicate: int, budget: int = MEMORY_BUDGET) -> int:
    """How many replicates to process at once so that ``per_replicate`` float64 values each
    stay within ``budget`` bytes: a multiple of :data:`ROW_BLOCK` (at least one block), or
    all ``n_replicates`` if they fit."""
    fit = budget // (8 * max(per_replicate, 1))
    if fit >= n_replicates:
        return n_replicates
    return int(max(ROW_BLOCK, fit // ROW_BLOCK * ROW_BLOCK))


def task_bootstrap_chunks(n_tasks: int, n_replicates: int, rng, chunk_size: int,
                          row_permutations: tuple[int, int] | None = None):
    """:func:`task_bootstrap` in consecutive chunks of at most ``chunk_size`` replicates.

    Every chunk is drawn from the same generator in order, so the chunks together are exactly
    ``task_bootstrap(n_tasks, n_replicates, rng, row_permutations)`` (the generator's stream
    is continuous across calls) while only one chunk is in memory: memory is bounded whatever
    the number of replicates. With ``chunk_size`` a multiple of :data:`ROW_BLOCK` the cell
    means, and so every result, are bit-identical to one chunk's.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    rng = np.random.default_rng(rng)
    for start in range(0, n_replicates, chunk_size):
        yield task_bootstrap(n_tasks, min(chunk_size, n_replicates - start), rng,
                             row_permutations)


def weighted_cell_means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(R, k, m)`` cell means ``sum_t w[r,t] T[t,l,b] / sum_t w[r,t]`` over finite ``T`` only.

    ``values`` is ``(n, k, m)`` with NaN for missing scores; ``weights`` is ``(R, n)``
    (bootstrap multiplicities, or the boolean OOB mask for the plain OOB means). A cell with
    no weighted finite score is NaN.
    """
    n = values.shape[0]
    finite = np.isfinite(values).reshape(n, -1)
    w = np.asarray(weights, dtype=float)
    total = _blocked_product(w, np.where(finite, values.reshape(n, -1), 0.0))
    mass = _blocked_product(w, finite) if not finite.all() else w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(mass > 0, total / np.where(mass > 0, mass, 1.0), np.nan)
    return means.reshape(w.shape[0], *values.shape[1:])


def _blocked_product(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``w @ x`` computed :data:`ROW_BLOCK` rows of ``w`` at a time (see there for why)."""
    if len(w) <= ROW_BLOCK:
        return w @ x
    out = np.empty((len(w), x.shape[1]))
    for start in range(0, len(w), ROW_BLOCK):
        np.matmul(w[start:start + ROW_BLOCK], x, out=out[start:start + ROW_BLOCK])
    return out


def pairwise_tau(matrix: np.ndarray, tie_rtol: float = 1e-10) -> np.ndarray:
    """Kendall tau-b between every pair of rows of ``(..., k, m)``: a ``(..., k, k)`` array.

    With ``s[i, p] = sign(x[i, a] - x[i, b])`` over the backbone pairs ``p = (a, b)``,
    ``tau_b(i, j) = sum_p s_i s_j / sqrt(n_i n_j)`` where ``n_i = sum_p s_i^2`` counts the pairs
    untied in row i; this is scipy's tau-b including ties. Rows with a NaN or no untied pair
    give NaN (as scipy). Two scores closer than ``tie_rtol`` times the row's largest absolute
    score are tied: cell means of different task sets that are equal in exact arithmetic
    otherwise tie or not depending on summation order (BLAS, threads); ``tie_rtol=0`` is
    scipy's exact comparison.
    """
    a, b = np.triu_indices(matrix.shape[-1], 1)
    diff = matrix[..., a] - matrix[..., b]
    scale = tie_rtol * np.fmax.reduce(np.abs(matrix), axis=-1, keepdims=True)
    signs = np.where(np.abs(diff) <= scale, 0.0, np.sign(diff))
    bad = np.isnan(diff).any(axis=-1, keepdims=True)
    signs = np.where(bad, 0.0, signs)
    gram = np.einsum("...ip,...jp->...ij", signs, signs)
    untied = np.diagonal(gram, axis1=-2, axis2=-1)
    scale = np.sqrt(untied[..., :, None] * untied[..., None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(scale > 0, gram / np.where(scale > 0, scale, 1.0), np.nan)


def mean_pairwise_tau(matrix: np.ndarray, tie_rtol: float = 1e-10) -> np.ndarray:
    """Mean Kendall tau-b over all language pairs (rows) of ``(..., k, m)``; shape ``(...)``.

    NaN pairs (a constant or NaN row) are skipped; NaN if no pair is defined. Ties: see
    :func:`pairwise_tau`.
    """
    i, j = np.triu_indices(matrix.shape[-2], 1)
    taus = pairwise_tau(matrix, tie_rtol)[..., i, j]
    defined = np.isfinite(taus)
    count = defined.sum(axis=-1)
    total = np.where(defined, taus, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
