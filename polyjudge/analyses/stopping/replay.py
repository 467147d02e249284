"""Replays of a collection on a complete panel, and the forecast of a target's cost.

:func:`replay` draws seeded item orders without replacement from a panel, evaluates the
sequences after every round exactly as :func:`~.targets.stopping_status` does on the items drawn
so far (vectorised over orders; a test checks they agree), and compares with the full panel,
which is the truth under sampling without replacement. :func:`forecast` replays a pilot (or an
earlier panel) resampled with replacement up to the design's size. With ``retire`` a collection
stops calling a judge once every tested pair it is in is settled (:func:`retire_judges`).
"""
from __future__ import annotations

from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from . import targets

ORDER_CHUNK_VALUES = 4_000_000   # contrast values per chunk of orders (memory ~ 30x this in bytes)
REPLAY_COLUMNS = ["order", "stop_items", "stop_complete_items", "fraction", "calls_fraction",
                  "cost_fraction", "retired", "stopped", "max_beta_halfwidth", "undecided",
                  "wrong_sign", "missed_big", "agree", "covered_every_round", "covered_at_stop"]


def round_ends(n_items: int, round_items: int, min_items: int = 0) -> np.ndarray:
    """Item counts after which a collection of rounds decides: every ``round_items`` items,
    the first round at least ``min_items``, the last at ``n_items``."""
    if round_items < 1:
        raise ValueError(f"round_items must be at least 1, got {round_items}")
    ends = np.arange(round_items, n_items, round_items)
    ends = ends[ends >= min_items] if min_items else ends
    first = [min(min_items, n_items)] if min_items and (not len(ends) or ends[0] > min_items) \
        else []
    return np.unique(np.concatenate([first, ends, [n_items]]).astype(int))


def replay_target(target, **changes) -> targets.StopTarget:
    """A target (a :class:`~.targets.StopTarget` or its dict, with ``changes``) for a replay:
    the workflow's, or the naive ``sequence: fixed_n`` (a fixed-n Student-t interval rechecked
    after every round; for comparison only)."""
    given = asdict(target) if isinstance(target, targets.StopTarget) else dict(target)
    given.update(changes)
    if given.get("sequence") == "fixed_n":
        return replace(targets.check_target({**given, "sequence": "asymptotic"}),
                       sequence="fixed_n")
    return targets.check_target(given)


def drawn_bounds(x: np.ndarray, draws: np.ndarray, ends: np.ndarray, plan, coefs, target,
                 truth=None):
    """Per collection and round: the items each quantity used and its estimate, lower and upper
    bound, exactly as :func:`~.targets.stopping_status` gives them on the items drawn so far.
    ``x``: contrasts of the pool's items (NaN where an item lacks a quantity's cells);
    ``draws``: collections x items drawn (pool indices, in drawing order)."""
    drawn = x[draws]                                         # collections x items x quantities
    t_used = np.cumsum(np.isfinite(drawn), axis=1)[:, ends - 1]
    bounds = targets.sequence_bounds(targets.used_first(drawn), plan, coefs, target,
                                     points=truth, full=False)
    idx = np.maximum(t_used - 1, 0)
    est, lower, upper = (np.take_along_axis(a, idx, axis=1) for a in bounds)
    empty = t_used == 0
    return (t_used, np.where(empty, np.nan, est), np.where(empty, -np.inf, lower),
            np.where(empty, np.inf, upper))


def judge_involvement(plan) -> np.ndarray:
    """Quantities x backbones: which judges each quantity needs (a pair its two, a beta cell
    the whole block), backbones in the plan's order."""
    backbones = list(pd.unique(plan.loc[plan["kind"] == "beta", "backbone"]))
    involved = np.zeros((len(plan), len(backbones)), dtype=bool)
    for q, (kind, a, b) in enumerate(zip(plan["kind"], plan["backbone"], plan["versus"])):
        if kind == "beta":
            involved[q] = True
        else:
            involved[q, [backbones.index(a), backbones.index(b)]] = True
    return involved


def retire_judges(lower, upper, plan, target):
    """Bounds, per collection and round, of a collection that stops calling a judge once every
    tested pair it is in is settled, and which judges each round calls (collections x rounds x
    backbones). A retired judge's quantities get no new item, so their bounds stay where they
    were when it retired (the pairs settled); every other quantity's are unchanged, since a
    pair's contrast needs only its own two judges. Decided from past rounds alone."""
    involved = judge_involvement(plan)
    pairs = (plan["tested"] & (plan["kind"] != "beta")).to_numpy()
    n_c, n_r, n_q = lower.shape
    active = np.ones((n_c, n_r, involved.shape[1]), dtype=bool)
    frozen = np.full((n_c, n_q), -1)            # the round a quantity's bounds stay at
    low, up = lower.copy(), upper.copy()
    rows = np.arange(n_c)[:, None]
    for r in range(n_r):
        at = np.where(frozen >= 0, frozen, r)
        low[:, r], up[:, r] = lower[rows, at, np.arange(n_q)], upper[rows, at, np.arange(n_q)]
        still_open = ~targets.settled(plan, low[:, r], up[:, r], target) & pairs
        needed = (still_open[:, :, None] & involved[None]).any(axis=1)
        leaving = active[:, r] & ~needed
        if r + 1 < n_r:
            active[:, r + 1] = active[:, r] & needed
        newly = (leaving[:, None, :] & involved[None]).any(axis=2) & (frozen < 0)
        frozen[newly] = r
    return low, up, active


def called_items(ends, active, at) -> np.ndarray:
    """Items each judge was called on up to each collection's stop round (collections x
    backbones), rounds of ``ends`` with the judges ``active`` at each."""
    sizes = np.diff(np.concatenate([[0], ends]))
    upto = np.arange(len(ends))[None, :] <= np.asarray(at)[:, None]
    return ((sizes[None, :, None] * active) * upto[:, :, None]).sum(axis=1)


def check_retire(target: targets.StopTarget) -> None:
    if target.retire and (target.beta_halfwidth is not None or not target.decisions):
        raise ValueError("stop.retire works with `decisions` targets only: a beta cell needs "
                         "every judge on every item (drop `beta_halfwidth` or `retire`)")


def stop_round(ends, lower, upper, plan, target):
    """Per collection: whether the target was met at some round, the first such round (else
    the last), and which quantities were settled at every round."""
    ok = targets.settled(plan, lower, upper, target)
    met = ok[..., plan["tested"].to_numpy()].all(axis=-1) & (ends >= target.min_items)
    stopped = met.any(axis=1)
    return stopped, np.where(stopped, met.argmax(axis=1), met.shape[1] - 1), ok


def chunks(n_collections: int, per_collection: int):
    """Slices of collections holding about :data:`ORDER_CHUNK_VALUES` values each."""
    step = max(1, ORDER_CHUNK_VALUES // max(1, per_collection))
    return [slice(i, i + step) for i in range(0, n_collections, step)]


def replay(scores: np.ndarray, target, n_orders: int, seed, round_items: int,
           languages=None, backbones=None, truth=None, with_replacement: bool = False,
           retire: bool = False, judge_weights=None) -> pd.DataFrame:
    """Replay a collection of a complete panel over ``n_orders`` seeded orders (without
    replacement, stopping at ``max_items`` at the latest); one row per order (columns
    :data:`REPLAY_COLUMNS`): items drawn when the target was met (the last round's if never:
    ``stopped`` False), their fraction of the design (``design_items``, else the panel), the
    widest beta half-width and the tested pairs left open at the stop, pairs decided with the
    wrong sign, pairs whose true difference exceeds ``2 epsilon`` not decided with its sign,
    ``agree`` (neither), and whether the sequence held the true value of every tested quantity
    at every round from ``min_items`` on, and at the stop. The truth is the full panel's (each
    quantity's mean over the items that have its cells), or ``truth`` (one value per row of the
    plan, e.g. a planted value). A betting sequence is evaluated at its decision points (and the
    truth) only, so the replay's decisions and coverage are exact and its pairs' reported widths
    coarse. ``with_replacement`` draws the items independently from the panel instead (a
    simulation: the panel is then the population, and its means are the exact truth).
    ``retire``: judges whose tested pairs are all settled are no longer called
    (:func:`retire_judges`); ``calls_fraction`` is the share of the design's judge-item calls
    made, ``cost_fraction`` the same weighted by ``judge_weights`` (what one item of each
    backbone costs; equal by default), and ``retired`` the judges retired at the stop."""
    target = replay_target(target)
    if retire:
        target = replace(target, retire=True)
    check_retire(target)
    plan, coefs, x = targets.item_contrasts(scores, target, languages, backbones)
    n = len(x)
    truth = np.nanmean(x, axis=0) if truth is None else np.asarray(truth, dtype=float)
    rng = np.random.default_rng(seed)
    if with_replacement:
        limit = int(target.max_items or target.design_items or n)
        orders = rng.integers(0, n, size=(n_orders, limit))
    else:
        limit = int(min(n, target.max_items or n))
        orders = np.argsort(rng.random((n_orders, n)), axis=1)[:, :limit]
    ends = round_ends(limit, round_items, target.min_items)
    weights = (np.ones(np.shape(scores)[2]) if judge_weights is None
               else np.asarray(judge_weights, dtype=float))
    rows = [replay_chunk(x, orders[part], ends, plan, coefs, target, truth, weights)
            for part in chunks(n_orders, limit * len(plan))]
    frame = pd.concat(rows, ignore_index=True)
    frame.insert(0, "order", np.arange(n_orders))
    design = target.design_items or n
    frame["fraction"] = frame["stop_items"] / design
    frame["calls_fraction"] = frame["calls_fraction"] / design
    frame["cost_fraction"] = frame["cost_fraction"] / (design * weights.sum())
    return frame[REPLAY_COLUMNS]


def replay_chunk(x, orders, ends, plan, coefs, target, truth, weights) -> pd.DataFrame:
    t_used, est, lower, upper = drawn_bounds(x, orders, ends, plan, coefs, target, truth)
    n_judges = judge_involvement(plan).shape[1]
    active = np.ones(lower.shape[:2] + (n_judges,), dtype=bool)
    if target.retire:
        lower, upper, active = retire_judges(lower, upper, plan, target)
    stopped, at, ok = stop_round(ends, lower, upper, plan, target)
    called = called_items(ends, active, at)
    complete = np.cumsum(np.isfinite(x).all(axis=1)[orders], axis=1)[:, ends - 1]
    tested = plan["tested"].to_numpy()
    rows = np.arange(len(orders))
    low, up, good = lower[rows, at], upper[rows, at], ok[rows, at]
    held = (lower <= truth) & (upper >= truth)
    looked = (ends >= max(target.min_items, 1))[None, :, None]
    pairs = tested & (plan["kind"] != "beta").to_numpy()
    beta = (plan["kind"] == "beta").to_numpy()
    sign = np.sign(truth)
    decided = np.where(low > 0, 1, np.where(up < 0, -1, 0))
    wrong = ((decided != 0) & (decided != sign) & pairs).sum(axis=1)
    eps = target.epsilon if target.epsilon is not None else np.inf
    missed = ((np.abs(truth) > 2 * eps) & (decided != sign) & pairs).sum(axis=1)
    return pd.DataFrame({
        "stop_items": ends[at], "stop_complete_items": complete[rows, at], "fraction": np.nan,
        "calls_fraction": called.sum(axis=1) / n_judges, "cost_fraction": called @ weights,
        "retired": n_judges - active[rows, at].sum(axis=1), "stopped": stopped,
        "max_beta_halfwidth": ((up - low) / 2)[:, beta].max(axis=1),
        "undecided": (~good & pairs).sum(axis=1), "wrong_sign": wrong, "missed_big": missed,
        "agree": (wrong == 0) & (missed == 0),
        "covered_every_round": (held | ~looked)[..., tested].all(axis=(1, 2)),
        "covered_at_stop": held[rows, at][:, tested].all(axis=1)})


def forecast(scores: np.ndarray, target, design_items: int, n_sims: int = 1000,
             seed=0, per_judge_item=None) -> dict:
    """Items and calls a target is expected to need, from pilot (or earlier-panel) scores.

    Each simulation resamples the pilot's items (so that the pilot's means and variances vary
    as estimates do), then draws ``design_items`` items with replacement from that resample
    (incomplete items included, so their rate carries over), collects them in rounds of
    ``target.round_items`` and stops as :func:`replay` does (at ``max_items`` or the design at
    the latest). Returns the design's items and calls, the median and 90th percentile of the
    items and calls used, and the share of simulations that did not meet the target. A pair whose
    difference is near ``2 epsilon`` or 0 makes the forecast depend on the pilot's estimate of
    it: a small pilot gives a wide forecast, a forecast and not a promise.

    ``per_judge_item``: name -> what one item of each judge costs (one value per backbone, e.g.
    calls or USD at list and at batch prices); for each name the result has ``median_<name>``
    and ``p90_<name>`` of the total, and for a ``decisions`` target also
    ``retire_median_<name>`` / ``retire_p90_<name>`` for a collection that retires settled
    judges (and ``retire_median_items`` / ``retire_p90_items``).
    """
    if len(scores) < 2:
        raise ValueError("a forecast needs scores of at least 2 pilot items")
    target = replay_target(target, design_items=design_items, retire=False)
    plan, coefs, x = targets.item_contrasts(scores, target, None, None)
    n, n_cells = len(x), int(np.prod(np.shape(scores)[1:]))
    limit = int(min(design_items, target.max_items or design_items))
    ends = round_ends(limit, int(target.round_items), target.min_items)
    can_retire = target.beta_halfwidth is None and bool(target.decisions)
    weights = {k: np.asarray(v, dtype=float) for k, v in (per_judge_item or {}).items()}
    rng = np.random.default_rng(seed)
    # two levels: a resampled pilot (its means are estimates), then the design from it
    pilots = rng.integers(0, n, size=(n_sims, n))
    draws = np.take_along_axis(pilots, rng.integers(0, n, size=(n_sims, limit)), axis=1)
    runs = {"": [], "retire_": []} if can_retire else {"": []}
    for part in chunks(n_sims, limit * len(plan)):
        _, _, lower, upper = drawn_bounds(x, draws[part], ends, plan, coefs, target)
        for mode in runs:
            if mode:
                low, up, active = retire_judges(lower, upper, plan, target)
            else:
                low, up = lower, upper
                active = np.ones(lower.shape[:2] + (np.shape(scores)[2],), dtype=bool)
            stopped, at, _ = stop_round(ends, low, up, plan, target)
            runs[mode].append((stopped, ends[at], called_items(ends, active, at)))
    result = {"design_items": int(design_items), "design_calls": int(design_items) * n_cells}
    for mode, parts in runs.items():
        met_any, items, called = (np.concatenate(a) for a in zip(*parts))
        totals = {"items": items, **{k: called @ w for k, w in weights.items()}}
        for key, values in totals.items():
            result[f"{mode}median_{key}"] = float(np.quantile(values, 0.5))
            result[f"{mode}p90_{key}"] = float(np.quantile(values, 0.9))
        if not mode:
            median, p90 = result["median_items"], result["p90_items"]
            result.update({"median_calls": median * n_cells, "p90_calls": p90 * n_cells,
                           "median_fraction": median / design_items,
                           "p90_fraction": p90 / design_items,
                           "share_not_met": float(1 - met_any.mean())})
    result.update({"n_sims": int(n_sims), "pilot_items": int(n),
                   "pilot_complete_items": int(np.isfinite(x).all(axis=1).sum())})
    return result
