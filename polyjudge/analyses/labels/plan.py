"""The label plan: where each language's labels stand, and the next batch to label
(docs/methods.md, "The label-plan loop"; ``polyjudge label-plan`` and the workflow's rule
``label_plan``).

Inputs are tidy tables. ``predictions``: one row per item and language with the judges'
``prediction`` (their mean score) and ``spread`` (their standard deviation), from
:func:`item_predictions`. ``labels``: the human labels so far, one row per item and language
in the order they were labelled (column ``label``; ``probability``, the chance that one draw
picked the item, or none for labels drawn uniformly). :func:`label_progress` gives each
language's anytime-valid interval and the forecast of the labels it still needs;
:func:`next_batch` draws the next items, never one already labelled.
"""
from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from . import active, anytime

PROGRESS_COLUMNS = ["language", "n_items", "n_labels", "estimate", "lower", "upper",
                    "halfwidth", "target_halfwidth", "met", "labels_needed", "next_batch",
                    "sampling"]
BATCH_COLUMNS = ["item", "language", "probability", "label"]


CHUNK_ROWS = 4_000_000
"""Rows of the run table summed at a time by :func:`item_predictions` (memory ~ 50 bytes
each)."""


def _codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and the values they stand for: a categorical's own codes (int8 for up to
    127 values: a 6 x 10^7-row table's codes stay small), small non-negative integers as
    themselves, anything else factorised (int32)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories.to_numpy()
    if pd.api.types.is_integer_dtype(column.dtype) and len(column):
        low, high = column.min(), column.max()
        if low >= 0 and high < max(4 * len(column), 1024) and high < 2 ** 31 - 1:
            return column.to_numpy().astype(np.int32, copy=False), np.arange(high + 1)
    codes, uniques = pd.factorize(column, sort=False)
    return codes.astype(np.int32), np.asarray(uniques)


def item_predictions(runs: pd.DataFrame, item: str = "task", language: str = "language",
                     judge: str = "backbone", score: str = "score") -> pd.DataFrame:
    """Each item's prediction and the judges' spread, per language, from a run table (one
    row per score; several runs of one judge are averaged first): ``prediction`` the mean
    over the judges, ``spread`` their standard deviation (ddof 0). Sums by integer codes
    (``np.bincount``) over chunks of rows, so 10^7 item-language pairs take seconds."""
    (items, item_values), (langs, lang_values), (judges, judge_values) = (
        _codes(runs[c]) for c in (item, language, judge))
    n_lang, n_judge = len(lang_values), len(judge_values)
    values = runs[score]
    sums = _pair_sums(items, langs, judges, values, n_lang, len(item_values))
    # a judge that scores an item in a language twice: the judges' bits 2^judge summed per
    # pair carry (fewer bits set than rows) exactly when one repeats; average those first
    if n_judge > 52 or (np.bitwise_count(sums[3].astype(np.uint64)) != sums[0]).any():
        frame = pd.DataFrame({"i": items, "l": langs, "j": judges, "v": values.to_numpy()})
        frame = frame.groupby(["i", "l", "j"], sort=False)["v"].mean().reset_index()
        sums = _pair_sums(*(frame[c].to_numpy(np.int32) for c in ("i", "l", "j")),
                          frame["v"], n_lang, len(item_values))
    count, total, squares, _, centre = sums
    # pairs language by language, items in their order
    seen = np.flatnonzero(count.reshape(-1, n_lang).T.ravel())
    seen = (seen % len(item_values)) * n_lang + seen // len(item_values)
    mean = total[seen] / count[seen]
    var = np.maximum(squares[seen] / count[seen] - mean ** 2, 0.0)
    return pd.DataFrame({"item": item_values[seen // n_lang],
                         "language": pd.Categorical.from_codes(seen % n_lang, lang_values),
                         "prediction": mean + centre, "spread": np.sqrt(var)})


def _pair_sums(items, langs, judges, values: pd.Series, n_lang: int, n_items: int):
    """Per item-language pair: rows, sum and sum of squares of the scores (less a centre, so
    the squares keep their precision), the sum of ``2^judge``; and the centre."""
    n_pairs = n_items * n_lang
    centre = float(values.iloc[0]) if len(values) else 0.0
    count, total, squares, mask = (np.zeros(n_pairs) for _ in range(4))
    for start in range(0, len(items), CHUNK_ROWS):
        rows = slice(start, start + CHUNK_ROWS)
        pair = items[rows].astype(np.intp) * n_lang + langs[rows]
        v = values.iloc[rows].to_numpy(dtype=float) - centre
        count += np.bincount(pair, minlength=n_pairs)
        total += np.bincount(pair, v, minlength=n_pairs)
        squares += np.bincount(pair, v * v, minlength=n_pairs)
        mask += np.bincount(pair, np.exp2(judges[rows]), minlength=n_pairs)
    return count, total, squares, mask, centre


def _joined(predictions: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Labels (in their order) with their item's prediction, spread and the language's item
    count; one label per item and language (annotators averaged)."""
    labels = labels.copy()
    if "probability" not in labels:
        labels["probability"] = np.nan
    labels = labels.astype({"label": float, "probability": float})
    labels["order"] = np.arange(len(labels))
    grouped = labels.groupby(["item", "language"], sort=False, observed=True)
    labels = grouped.agg(label=("label", "mean"), probability=("probability", "first"),
                         order=("order", "min")).reset_index().sort_values("order")
    labels["language"] = labels["language"].astype(str)
    if labels["item"].dtype != predictions["item"].dtype:   # e.g. integer ids read as text
        predictions = predictions.assign(item=predictions["item"].astype(str))
        labels["item"] = labels["item"].astype(str)
    labelled = predictions[predictions["item"].isin(labels["item"])].astype({"language": str})
    labelled = labelled.rename_axis("row").reset_index()      # the item's row in predictions
    joined = labels.merge(labelled, on=["item", "language"], how="inner", validate="1:1")
    n_items = predictions.groupby("language", observed=True).size().rename("n_items")
    n_items.index = n_items.index.astype(str)
    joined = joined.merge(n_items, left_on="language", right_index=True)
    joined["probability"] = joined["probability"].fillna(1.0 / joined["n_items"])
    return joined


def label_progress(predictions: pd.DataFrame, labels: pd.DataFrame, *, level: float = 0.95,
                   target_halfwidth=None, tuned_for: float = 200, batch: int = 20,
                   label_range=None, sampling: str = "active") -> pd.DataFrame:
    """Per language (:data:`PROGRESS_COLUMNS`): the labels so far, the anytime-valid
    prediction-powered mean after the last of them (:func:`.anytime.anytime_ppi`, the labels
    in their order), whether its half-width meets ``target_halfwidth`` (a number, or a
    mapping language -> number; None: no target), the forecast of the labels still needed
    (:func:`.anytime.labels_needed`, in whole batches; -1: out of reach) and the size of the
    next batch (0 once the target is met)."""
    alpha = 1.0 - level
    predictions = predictions.reset_index(drop=True)
    joined = _joined(predictions, labels)
    rows = []
    for lang, preds in predictions.groupby("language", sort=False, observed=True):
        got = joined[joined["language"] == str(lang)]
        n = len(got)
        fbar = float(preds["prediction"].mean())
        est = lower = upper = np.nan
        sd, past_var = np.nan, None
        prior = None if label_range is None else (label_range[1] - label_range[0]) ** 2 / 4.0
        if n:
            w = 1.0 / (len(preds) * got["probability"].to_numpy())
            y, f = got["label"].to_numpy(), got["prediction"].to_numpy()
            e, lo, up = anytime.anytime_ppi(y[:, None], f[:, None], w[:, None], fbar,
                                            alpha=alpha, tuned_for=tuned_for,
                                            label_range=label_range)
            est, lower, upper = float(e[-1, 0]), float(lo[-1, 0]), float(up[-1, 0])
            terms = anytime.anytime_terms(y[:, None], f[:, None], w[:, None], fbar)[:, 0]
            past_var = float(np.var(terms))
            if prior is not None:                # as the sequence regularises it
                past_var = (anytime.PRIOR_LABELS * prior + n * past_var) / (
                    anytime.PRIOR_LABELS + n)
            if n >= 2:                           # the coming terms: tuned on all labels so far
                lam, shift = anytime.tuned_coefficients(w * y, w * f - fbar, w - 1.0, axis=0)
                sd = float(np.std(anytime.influence_terms(y, f, w, fbar, lam, shift), ddof=1))
        if not np.isfinite(sd) and prior is not None:
            sd, past_var = np.sqrt(prior), None   # nothing seen: the widest spread
        target = (target_halfwidth.get(lang) if isinstance(target_halfwidth, dict)
                  else target_halfwidth)
        half = (upper - lower) / 2.0 if n else np.inf
        met = bool(target is not None and half <= target)
        if not np.isfinite(half):        # no interval yet: empty cells, not infinities
            lower = upper = half = np.nan
        needed = (int(anytime.labels_needed(sd, target, n, alpha, tuned_for, batch,
                                             past_var=past_var))
                  if target is not None and np.isfinite(sd) else None)
        if needed == 0 and not met:     # the forecast's sd is below the sequence's so far
            needed = int(batch)
        left = len(preds) - n
        rows.append({"language": lang, "n_items": len(preds), "n_labels": n, "estimate": est,
                     "lower": lower, "upper": upper, "halfwidth": half,
                     "target_halfwidth": np.nan if target is None else float(target),
                     "met": met, "labels_needed": needed,
                     "next_batch": 0 if met else min(int(batch), left), "sampling": sampling})
    out = pd.DataFrame(rows, columns=PROGRESS_COLUMNS)
    out["labels_needed"] = out["labels_needed"].astype("Int64")
    return out


def batch_seed(seed: int, language: str, n_labels: int) -> list[int]:
    """The seed of a language's next batch: the same labels give the same batch on every
    run, and each new batch of labels a fresh draw."""
    return [int(seed), zlib.crc32(str(language).encode()), int(n_labels)]


def next_batch(predictions: pd.DataFrame, labels: pd.DataFrame, sizes: dict, *,
               sampling: str = "active", uniform_share: float = active.UNIFORM_SHARE,
               seed: int = 0) -> pd.DataFrame:
    """The next items to label (:data:`BATCH_COLUMNS`, ``label`` empty): ``sizes[language]``
    items per language, drawn with :func:`.active.sampling_probabilities` (the error model
    refitted on the language's labels; uniform until :data:`.active.PILOT_MIN` labels) and
    never an item already labelled; ``probability`` is the chance one draw picks the item,
    which the estimator weights by once the label is in."""
    predictions = predictions.reset_index(drop=True)
    joined = _joined(predictions, labels)
    parts = []
    for lang, preds in predictions.groupby("language", sort=False, observed=True):
        size = int(sizes.get(lang, 0))
        if size <= 0:
            continue
        got = joined[joined["language"] == str(lang)]
        spread = preds["spread"].to_numpy()
        shared, scale = np.nan, np.nan
        if sampling == "active" and len(got):
            shared, scale = active.error_model(
                got["label"].to_numpy(), got["prediction"].to_numpy(),
                got["spread"].to_numpy(), 1.0 / (len(preds) * got["probability"].to_numpy()))
        p = active.sampling_probabilities(spread, shared=shared, scale=scale,
                                          uniform_share=uniform_share, method=sampling)
        done = np.flatnonzero(preds.index.isin(got["row"]))
        rng = np.random.default_rng(batch_seed(seed, lang, len(got)))
        chosen = active.draw_items(p, size, rng, exclude=done)
        parts.append(pd.DataFrame({"item": preds["item"].to_numpy()[chosen], "language": lang,
                                   "probability": p[chosen], "label": np.nan}))
    if not parts:
        return pd.DataFrame(columns=BATCH_COLUMNS)
    return pd.concat(parts, ignore_index=True)[BATCH_COLUMNS]


def label_plan(predictions: pd.DataFrame, labels: pd.DataFrame, *, batch: int = 20,
               sampling: str = "active", uniform_share: float = active.UNIFORM_SHARE,
               target_halfwidth=None, level: float = 0.95, tuned_for: float = 200,
               label_range=None, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One turn of the loop: :func:`label_progress` and the :func:`next_batch` it asks for."""
    progress = label_progress(predictions, labels, level=level,
                              target_halfwidth=target_halfwidth, tuned_for=tuned_for,
                              batch=batch, label_range=label_range, sampling=sampling)
    sizes = dict(zip(progress["language"], progress["next_batch"]))
    return progress, next_batch(predictions, labels, sizes, sampling=sampling,
                                uniform_share=uniform_share, seed=seed)
