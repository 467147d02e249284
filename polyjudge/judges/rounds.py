"""Collecting a pointwise panel in rounds until a precision target is met (``collect.stop``).

Items are drawn in one seeded random order without replacement (:func:`item_order`); each
round draws the next items, each with its whole language x judge block (chosen and rejected
response), so the double-centred contrasts stay exact and paired.
After each round the workflow evaluates the confidence sequences on the margins of the items
drawn so far (:func:`margin_array`) and stops or goes on; rounds end where
``polyjudge.analyses.stopping.round_ends`` says, as in the replay and the forecast. A target is a
``polyjudge.analyses.stopping.StopTarget`` (read here by its fields). The order
depends only on the seed and the item table, so a rerun with another target or round size finds
every call it made in the cache. Pure: no calls, no statistics (those are in
``polyjudge.analyses.stopping``).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .protocols import POINTWISE

STOPPING_COLUMNS = ["round", "items", "calls", "calls_made_this_run", "cost_usd",
                    "max_beta_halfwidth", "target_beta_halfwidth", "undecided_pairs",
                    "undecided", "active_judges", "informative_missing", "stop", "reason"]
TARGET_KEYS = ("beta_halfwidth", "decisions")


def check_stop(name: str, panel: dict, panels: dict) -> list[str]:
    """Problems of a panel's ``collect.stop`` block (completed from ``collection.stop_defaults``),
    each naming the key (empty: fine)."""
    stop = panel.get("collect", {}).get("stop")
    if stop is None:
        return []
    where = f"  panel '{name}': `collect.stop"
    if panel["kind"] != "preference_margins":
        return [f"{where}` is for pointwise collections (preference_margins); a pairwise "
                "Judge-LS collection is collected in full (remove `stop`)"]
    problems = []
    if all(stop[k] is None for k in TARGET_KEYS):
        problems.append(f"{where}` names no target: set `beta_halfwidth` and/or `decisions`")
    if stop["decisions"] and stop["epsilon"] is None:
        problems.append(f"{where}.epsilon` is needed with `decisions` (a margin > 0 in score "
                        "units: without one, near-ties never stop)")
    if stop["epsilon"] is not None and stop["epsilon"] <= 0:
        problems.append(f"{where}.epsilon` must be > 0, not {stop['epsilon']}")
    if stop["sequence"] == "betting" and panel.get("score_range") is None:
        problems.append(f"{where}.sequence` betting needs the margins' range: set the panel's "
                        "`score_range` (e.g. [-4, 4] for a 1-5 rubric), or use the asymptotic "
                        "sequence")
    if stop["retire"] and (stop["beta_halfwidth"] is not None or not stop["decisions"]):
        problems.append(f"{where}.retire` works with `decisions` targets only: a beta cell "
                        "needs every judge on every item (drop `beta_halfwidth`, or `retire`)")
    if not 0 < stop["level"] < 1:
        problems.append(f"{where}.level` must be in (0, 1), not {stop['level']}")
    if stop["max_items"] is not None and stop["min_items"] > stop["max_items"]:
        problems.append(f"{where}.min_items` ({stop['min_items']}) is above `max_items` "
                        f"({stop['max_items']})")
    source = stop["forecast_from"]
    if source is not None and source not in panels and not source.endswith(".parquet"):
        problems.append(f"{where}.forecast_from` '{source}' is neither a panel of the config "
                        "nor a tensor Parquet file")
    if source == name:
        problems.append(f"{where}.forecast_from` cannot be the panel itself (use null for its "
                        "pilot round)")
    return problems


def item_ids(items: pd.DataFrame) -> pd.Series:
    return items["subset"] + "\x1f" + items["item_index"]


def item_order(items: pd.DataFrame, seed: int) -> np.ndarray:
    """The items (ids, in file order of first appearance) in the seeded random draw order."""
    ids = pd.unique(item_ids(items))
    return ids[np.random.default_rng(seed).permutation(len(ids))]


def margin_range(score_range, answer=None):
    """The range of a margin (chosen - rejected): the panel's ``score_range``, else the one the
    rubric's answer bounds allow (``[min - max, max - min]``, [-4, 4] for a 1-5 rubric), else
    None (the asymptotic sequence needs none)."""
    if score_range is not None:
        return [float(v) for v in score_range]
    low, high = getattr(answer, "minimum", None), getattr(answer, "maximum", None)
    if low is None or high is None:
        return None
    return [float(low - high), float(high - low)]


def describe_target(target) -> str:
    """A target (a ``StopTarget``) in words, for the logs, the plan and the forecast."""
    parts = []
    if target.beta_halfwidth is not None:
        parts.append(f"every beta cell within +-{target.beta_halfwidth}")
    if target.decisions:
        parts.append(f"every {' and '.join(target.decisions)} pair settled (epsilon "
                     f"{target.epsilon})")
    return (" and ".join(parts) + f", {target.sequence} sequence at level {target.level}")


def margin_array(calls: pd.DataFrame, ids, languages, judges) -> np.ndarray:
    """Margins chosen - rejected, shape (items in ``ids`` order, languages, judges); NaN where a
    score is missing or unparseable (the cell is left out, as ``missing: omit`` reads it)."""
    rows = calls[calls["stage"] == POINTWISE]
    score = pd.to_numeric(rows["value"].where(rows["status"] == "ok"), errors="coerce")
    frame = pd.DataFrame({"id": rows["subset"].astype(str) + "\x1f" + rows["item"].astype(str),
                          "language": rows["language"], "judge": rows["endpoint"],
                          "side": rows["side"], "score": score})
    wide = frame.pivot_table(index=["id", "language", "judge"], columns="side", values="score",
                             aggfunc="first", dropna=False)
    margin = (wide.get("chosen") - wide.get("rejected")) if len(wide) else pd.Series(dtype=float)
    index = pd.MultiIndex.from_product([list(ids), list(languages), list(judges)],
                                       names=["id", "language", "judge"])
    values = margin.reindex(index).to_numpy(float)
    return values.reshape(len(ids), len(languages), len(judges))


def guard_informative_missing(status, flagged: list, accept: bool):
    """The status (a ``StopStatus``) with its stop refused while a judge's missing verdicts are
    flagged as depending on the item's score (``flagged``, by
    ``polyjudge.analyses.missingness.informative_missing_check``), unless the user accepts them
    (``collect.stop.accept_informative_missing``). The sequences assume cells missing at random
    (docs/methods.md 10.7); a judge that fails where it would score low biases every quantity
    it is in, so a stop there would claim a guarantee that does not hold. The collection goes
    on, and the check is redone on the larger sample after every round."""
    if not flagged or not status.stop:
        return status
    names = ", ".join(map(str, flagged))
    if accept:
        return replace(status, reason=f"{status.reason}; accepted although the missing verdicts "
                       f"of {names} depend on the item's score (accept_informative_missing)")
    return replace(status, stop=False, reason=(
        f"target met but no stop: the missing verdicts of {names} depend on the item's score "
        "(missing/mnar_check: the intervals assume cells missing at random); set "
        "collect.stop.accept_informative_missing: true to stop anyway"))


def round_row(round_number: int, items: int, calls: pd.DataFrame, status, active,
              target, flagged=()) -> dict:
    """One row of ``stopping.csv``: what was collected after this round, the judges called on
    its items (``active``), the judges whose missing verdicts the check flagged and what it
    decided; ``max_beta_halfwidth`` is infinite while a cell has no interval yet."""
    done = calls[calls["status"].isin(["ok", "parse_failure"])].drop_duplicates("key")
    undecided = list(status.undecided_pairs)
    return {"round": round_number, "items": items, "calls": len(done),
            "calls_made_this_run": int((~done["cached"]).sum()),
            "cost_usd": float(done["cost"].sum()),
            "max_beta_halfwidth": float(status.max_beta_halfwidth),
            "target_beta_halfwidth": target.beta_halfwidth,
            "undecided_pairs": len(undecided), "undecided": "; ".join(undecided),
            "active_judges": "; ".join(active), "informative_missing": "; ".join(flagged),
            "stop": bool(status.stop), "reason": status.reason}


def halfwidth_text(halfwidth: float) -> str:
    """A half-width for a log or a message; an infinite one is no interval yet."""
    return f"{halfwidth:.4g}" if np.isfinite(halfwidth) else "none yet (no interval)"


def unmet_message(panel: str, target, row: dict, n_design: int) -> str:
    """Why the target (a ``StopTarget``) was not met, with the widths reached and what is still
    undecided."""
    limit = ("max_items" if target.max_items and target.max_items < n_design
             else "the item table")
    text = (f"{panel}: the target ({describe_target(target)}) was not met within {limit} "
            f"({row['items']} items, {row['calls']} calls, ${row['cost_usd']:.4f}): the widest "
            f"beta half-width reached is {halfwidth_text(row['max_beta_halfwidth'])}")
    if target.beta_halfwidth is not None:
        text += f" (target {target.beta_halfwidth})"
    if row["undecided_pairs"]:
        text += f"; {row['undecided_pairs']} pair(s) undecided: {row['undecided']}"
    return text + ". The items collected are kept and analysed."


def design_note(stopping: pd.DataFrame | None) -> str:
    """usage.csv's ``design``: the full design, or how the collection was stopped adaptively."""
    if stopping is None or stopping.empty:
        return "full design"
    last = stopping.iloc[-1]
    how = last["reason"] if bool(last["stop"]) else f"not stopped: {last['reason']}"
    return (f"stopped adaptively after round {int(last['round'])}: {int(last['items'])} items "
            f"({how})")


VALID = "confidence sequence at the stop (valid at any stopping time, docs/methods.md 10.7)"
NOT_YET = ("not yet valid: too few informative items for the sequence's guarantee (no interval "
           "is claimed)")


def sequence_label(cells: pd.DataFrame) -> pd.Series:
    """What each interval is: a confidence sequence, or not yet one (an infinite bound)."""
    valid = np.isfinite(cells["sequence_low"].astype(float)) \
        & np.isfinite(cells["sequence_high"].astype(float))
    return pd.Series(np.where(valid, VALID, NOT_YET), index=cells.index)


def intervals_table(sequence: pd.DataFrame, bands: pd.DataFrame, stopping: pd.DataFrame
                    ) -> pd.DataFrame:
    """Each beta cell's confidence-sequence interval at the stop (valid at the data-dependent
    stopping time) beside the fixed-n task-bootstrap band of the items collected (valid for a
    sample size fixed in advance only), labelled as such; then the backbone pairs."""
    items = int(stopping.iloc[-1]["items"])
    beta = sequence[sequence["kind"] == "beta"]
    band = bands[["language", "backbone", "band_low", "band_high"]].rename(
        columns={"band_low": "fixed_n_band_low", "band_high": "fixed_n_band_high"})
    merged = beta.merge(band.astype({"language": str, "backbone": str}), how="left",
                        on=["language", "backbone"])
    merged = merged.rename(columns={"lower": "sequence_low", "upper": "sequence_high"})
    merged["sequence"] = sequence_label(merged)
    merged["fixed_n_band"] = (f"task-bootstrap band of the {items} items collected, fixed-n "
                              "(not valid at a data-dependent stop; for comparison)")
    pairs = sequence[sequence["kind"] != "beta"].rename(columns={"lower": "sequence_low",
                                                                 "upper": "sequence_high"})
    pairs = pairs.assign(sequence=sequence_label(pairs))
    return pd.concat([merged, pairs], ignore_index=True)
