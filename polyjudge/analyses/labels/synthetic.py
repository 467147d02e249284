"""Planted panels of judges and human labels, for the labels' benchmarks and tests.

:func:`planted_items` draws one language's ``N`` items: the human label of each (binary or
ordinal 1-5) and the scores of ``J`` judges, whose errors are either spread evenly over the
items or concentrated on a known part of them. The target of every estimator is the mean of
the ``N`` labels, known exactly.
"""
from __future__ import annotations

import numpy as np

KINDS = ("binary", "ordinal")
QUALITIES = {"good": (0.9, 0.3), "medium": (0.7, 0.8), "useless": (0.5, None)}
"""Quality -> (a binary judge's accuracy, an ordinal panel's shared error sd; None: scores
unrelated to the label)."""
ERRORS = ("even", "concentrated")
HARD_SHARE = 0.2
"""Share of the items where errors concentrate (``errors="concentrated"``)."""


def planted_items(rng: np.random.Generator, n_items: int, n_judges: int = 6,
                  kind: str = "binary", quality: str = "medium", errors: str = "even"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Labels (``N``) and judge scores (``N x J``) of one planted language.

    Binary: labels ``Bernoulli(0.4)``; each judge is right with the quality's accuracy
    (``even``), or with 0.55 on a hard fifth of the items and 0.97 elsewhere
    (``concentrated``). Ordinal 1-5: a latent ``z ~ N(3, 1)``; the label rounds
    ``z + N(0, 0.3)``; a judge rounds ``z + e_i + n_ij`` with an error ``e_i`` the judges
    share and their own noise ``n_ij``: ``sd(e)`` is the quality's and ``sd(n)`` is drawn per
    item from U(0.1, 1), unrelated to ``e`` (``even``: the judges' spread says nothing of the
    error). ``concentrated``: each judge gives the label, but for a one-point slip in 3% of
    its scores, except on the hard fifth, where it adds ``N(0, 1.5)`` rounded (the judges
    disagree where they err).
    ``quality="useless"``: scores drawn without regard to the label."""
    if kind not in KINDS or quality not in QUALITIES or errors not in ERRORS:
        raise ValueError(f"unknown setting: {kind}, {quality}, {errors}")
    hard = rng.random(n_items) < HARD_SHARE
    if kind == "binary":
        labels = (rng.random(n_items) < 0.4).astype(float)
        accuracy = np.full(n_items, QUALITIES[quality][0])
        if errors == "concentrated":
            accuracy = np.where(hard, 0.55, 0.97)
        right = rng.random((n_items, n_judges)) < accuracy[:, None]
        scores = np.where(right, labels[:, None], 1.0 - labels[:, None])
        if quality == "useless":
            scores = (rng.random((n_items, n_judges)) < 0.4).astype(float)
        return labels, scores
    z = rng.normal(3.0, 1.0, n_items)
    labels = np.clip(np.round(z + rng.normal(0.0, 0.3, n_items)), 1, 5)
    shared_sd = QUALITIES[quality][1]
    if quality == "useless":
        return labels, np.clip(np.round(rng.normal(3.0, 1.0, (n_items, n_judges))), 1, 5)
    if errors == "concentrated":
        # judges give the label itself, but for a slip of one point in 3% of the scores, on
        # most items, and the label plus N(0, 1.5) rounded on the hard fifth
        slip = np.where(rng.random((n_items, n_judges)) < 0.03,
                        rng.choice([-1.0, 1.0], (n_items, n_judges)), 0.0)
        off = np.round(rng.normal(0.0, 1.5, (n_items, n_judges)))
        return labels, np.clip(labels[:, None] + np.where(hard[:, None], off, slip), 1, 5)
    own_sd = rng.uniform(0.1, 1.0, n_items)
    latent = z + rng.normal(0.0, 1.0, n_items) * shared_sd
    scores = latent[:, None] + rng.normal(0.0, 1.0, (n_items, n_judges)) * np.reshape(
        own_sd, (-1, 1))
    return labels, np.clip(np.round(scores), 1, 5)


def simulate_labelling(rng: np.random.Generator, labels, scores, n_sequences: int,
                       n_labels: int, batch: int = 10, method: str = "active",
                       replace: bool = True, chunk: int = 250
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Sequences of labelling in batches, as the label plan runs them: before each batch the
    error model is refitted on the sequence's labels so far and the batch is drawn with
    replacement from :func:`.active.sampling_probabilities` (``replace=False``: distinct items
    never drawn before, as :func:`.active.draw_items` proposes them). Returns the drawn items
    and the probability each draw had (sequences x labels)."""
    from .active import error_model, judge_spread, sampling_probabilities

    labels = np.asarray(labels, dtype=float)
    f, spread = np.asarray(scores, dtype=float).mean(axis=1), judge_spread(scores)
    n_items = len(labels)
    items = np.empty((n_sequences, n_labels), dtype=np.int64)
    probs = np.empty((n_sequences, n_labels))
    for start in range(0, n_sequences, chunk):
        rows = slice(start, min(start + chunk, n_sequences))
        s = rows.stop - rows.start
        for b0 in range(0, n_labels, batch):
            b1 = min(b0 + batch, n_labels)
            if method == "uniform" and replace:          # no probabilities to follow
                items[rows, b0:b1] = rng.integers(0, n_items, size=(s, b1 - b0))
                probs[rows, b0:b1] = 1.0 / n_items
                continue
            if method == "uniform":
                p = np.full((s, n_items), 1.0 / n_items)
            else:
                seen = items[rows, :b0]
                shared, scale = error_model(labels[seen], f[seen], spread[seen],
                                            1.0 / (n_items * probs[rows, :b0]))
                p = sampling_probabilities(spread[None, :], shared=shared, scale=scale)
            if not replace:
                with np.errstate(divide="ignore"):
                    keys = np.log(rng.random(p.shape)) / p
                np.put_along_axis(keys, items[rows, :b0], -np.inf, axis=1)
                pos = np.argpartition(-keys, b1 - b0 - 1, axis=1)[:, :b1 - b0]
                items[rows, b0:b1] = pos
                probs[rows, b0:b1] = np.take_along_axis(p, pos, axis=1)
                continue
            cdf = np.cumsum(p, axis=1)
            u = rng.random((s, b1 - b0)) * cdf[:, -1:]
            # one searchsorted for all sequences: shift each row's cdf by its row number
            flat = (cdf + np.arange(s)[:, None] * cdf[:, -1:].max() * 2).ravel()
            pos = np.searchsorted(flat, (u + np.arange(s)[:, None] * cdf[:, -1:].max() * 2)
                                  .ravel()).reshape(s, -1) - np.arange(s)[:, None] * n_items
            pos = np.clip(pos, 0, n_items - 1)
            items[rows, b0:b1] = pos
            probs[rows, b0:b1] = np.take_along_axis(p, pos, axis=1)
    return items, probs
