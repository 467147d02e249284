"""Stop targets of a collection: the per-item contrasts, their sequences, and the decision.

The quantities are means over items of linear contrasts of an item's language x backbone block
``S[t, l, b]`` (docs/methods.md, 10.7):

* beta cells ``d_t(l, b) = S(t,l,b) - S(t,l,.) - S(t,.,b) + S(t,.,.)`` (their mean is the
  double-centred beta of the items used);
* calibrated pairs ``S(t,.,a) - S(t,.,b)`` (the CBC ranking is the order of the backbone means);
* raw pairs ``S(t,l,a) - S(t,l,b)`` within each language.

Each quantity uses every item that has the cells it needs (:func:`item_contrasts`), which
assumes the cells are missing independently of the scores. The error level ``1 - level`` is
split equally (Bonferroni) over the quantities the target tests; beta cells shown but not tested
use the split over the beta cells alone. What the sequences guarantee, and when: docs/methods.md,
"The guarantee and its conditions".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from . import sequences

DECISION_KINDS = ("calibrated", "raw")
SEQUENCES = ("asymptotic", "betting")
DEFAULT_TUNING_ITEMS = 500
PRIOR_ITEMS = 1.0
"""Pseudo-observations of the largest variance the range allows, in the asymptotic sequence's
variance (as Waudby-Smith and Ramdas regularise theirs), where the scores have a range."""
MIN_INFORMATIVE = 20
"""Non-zero contrasts a quantity needs before the asymptotic sequence gives it an interval."""
CELL_COLUMNS = ["kind", "label", "language", "backbone", "versus", "tested", "n_items",
                "estimate", "lower", "upper", "halfwidth", "valid", "settled"]


@dataclass(frozen=True)
class StopStatus:
    """The sequences after the items collected so far, and whether to stop.

    ``n_items`` drawn (and paid for), ``n_complete_items`` with no missing cell; ``stop``: the
    target is met (``target_met``) and ``min_items`` items are in; ``reason`` says why or what
    is still open; ``undecided_pairs``: tested pairs not settled; ``tied_pairs``: pairs settled
    inside ``(-2 epsilon, 2 epsilon)`` with 0 inside (they differ by less than ``2 epsilon``);
    ``cells``: one row per quantity (:data:`CELL_COLUMNS`: ``n_items`` it used, ``valid``
    False where the sequence claims no interval yet; ``settled`` is meaningful where
    ``tested``).
    """

    n_items: int
    n_complete_items: int
    stop: bool
    reason: str
    max_beta_halfwidth: float
    undecided_pairs: list[str]
    cells: pd.DataFrame = field(repr=False)
    tied_pairs: list[str] = field(default_factory=list)
    target_met: bool = False


@dataclass(frozen=True)
class StopTarget:
    """A collection's stopping target, checked (a ``collect.stop`` block, docs/methods.md 10.7):
    what the sequences test, at which confidence, and how items are drawn. Built by
    :func:`check_target` (the workflow's from its completed ``collect.stop`` dict, by
    :func:`collection_target`); building one that could never stop raises ValueError naming the
    key."""

    beta_halfwidth: float | None
    """Target: every beta cell within +- this (score units); None: no beta target."""
    decisions: tuple[str, ...] | None
    """Target: every backbone pair settled, ``calibrated`` and/or ``raw``; None: no pair target."""
    epsilon: float | None
    """Indifference margin of ``decisions`` (score units, > 0; needed with them)."""
    level: float
    """Confidence of the sequences, simultaneous over every round, cell and pair tested."""
    sequence: str
    """``asymptotic`` or ``betting`` (``fixed_n``: the naive rule, in replays only)."""
    min_items: int
    """Items drawn before a stop is considered (a cost setting, not one of validity)."""
    max_items: int | None
    """Most items a collection draws; None: the whole item table (or the design)."""
    round_items: int
    """Items drawn per round, each with its whole language x judge block."""
    retire: bool
    """With ``decisions`` only: stop calling a judge whose every tested pair is settled."""
    seed: int
    """Seed of the random item order."""
    forecast_from: str | None
    """Panel or tensor file the forecast reads; None: the pilot round."""
    forecast_orders: int
    """Simulated collections behind the forecast."""
    score_range: tuple[float, float] | None
    """The range of the scores (a collection's margins); None: unbounded (asymptotic only)."""
    design_items: int | None
    """Items of the full design (the item table, at most ``max_items``); None: not known."""
    accept_informative_missing: bool = False
    """Stop although a judge's missing verdicts depend on the item's score (the workflow's
    rounds check this, ``polyjudge.judges.rounds.guard_informative_missing``; the sequences
    themselves do not read it)."""

    def __post_init__(self):
        decisions = self.decisions
        if isinstance(decisions, str):
            decisions = (decisions,)
        object.__setattr__(self, "decisions", None if decisions is None else tuple(decisions))
        object.__setattr__(self, "min_items", int(self.min_items or 0))
        if self.score_range is not None:
            object.__setattr__(self, "score_range", tuple(self.score_range))
        _check_fields(self)


API_DEFAULTS = {"beta_halfwidth": None, "decisions": None, "epsilon": None, "level": 0.95,
                "sequence": "asymptotic", "min_items": 0, "max_items": None, "round_items": 1,
                "retire": False, "seed": 0, "forecast_from": None, "forecast_orders": 200,
                "score_range": None, "design_items": None, "accept_informative_missing": False}
"""The fields a direct call (:func:`stopping_status`, :func:`~.replay.replay`, ...) may leave
out. The workflow's defaults are config/config.yaml's ``collection.stop_defaults``, which it
always passes in full; these equal them but for ``min_items`` 0 and ``round_items`` 1, so that a
direct call decides after every item (a test holds the rest equal)."""


def check_target(target) -> StopTarget:
    """The :class:`StopTarget` of a target dict (the fields it leaves out from
    :data:`API_DEFAULTS`), or ``target`` itself if it is one; ValueError naming the key when it
    is unusable (the workflow checks its config first; this guards direct calls)."""
    if isinstance(target, StopTarget):
        return target
    unknown = sorted(set(target) - set(API_DEFAULTS))
    if unknown:
        raise ValueError(f"stop: unknown key(s) {unknown}; the keys are {list(API_DEFAULTS)}")
    if target.get("sequence") == "fixed_n":  # the naive rule is for replays only
        raise ValueError(f"stop.sequence must be one of {list(SEQUENCES)}, got fixed_n")
    return StopTarget(**{**API_DEFAULTS, **target})


def _check_fields(t: StopTarget) -> None:
    """ValueError naming the first key of ``t`` that makes it unusable."""
    if t.beta_halfwidth is None and not t.decisions:
        raise ValueError("stop: needs `beta_halfwidth` or `decisions`")
    if t.beta_halfwidth is not None and not t.beta_halfwidth > 0:
        raise ValueError(f"stop.beta_halfwidth must be positive, got {t.beta_halfwidth}")
    unknown = sorted(set(t.decisions or ()) - set(DECISION_KINDS))
    if unknown:
        raise ValueError(f"stop.decisions: unknown {unknown}; use {list(DECISION_KINDS)}")
    if t.decisions and not (t.epsilon is not None and t.epsilon > 0):
        raise ValueError(f"stop.epsilon must be positive with decisions, got {t.epsilon}")
    if not 0 < t.level < 1:
        raise ValueError(f"stop.level must lie in (0, 1), got {t.level}")
    if t.sequence not in SEQUENCES + ("fixed_n",):
        raise ValueError(f"stop.sequence must be one of {list(SEQUENCES)}, got {t.sequence}")
    if t.sequence == "betting":
        if t.score_range is None or not t.score_range[1] > t.score_range[0]:
            raise ValueError("stop.sequence 'betting' needs the scores' range: a score_range "
                             "[lo, hi] with lo < hi")
    if t.round_items < 1:
        raise ValueError(f"stop.round_items must be at least 1, got {t.round_items}")


def collection_target(stop: dict, score_range=None, n_items: int | None = None) -> StopTarget:
    """The record of a collection's ``collect.stop`` block (the completed config's dict, as a
    rule gets it in its params): ``score_range`` the margins' range, ``design_items`` the
    ``n_items`` of the item table, at most ``max_items``."""
    design = None if n_items is None else min(n_items, stop["max_items"] or n_items)
    return check_target({**stop, "score_range": score_range, "design_items": design})


def tuning_items(target: StopTarget) -> float:
    """The item count the asymptotic sequence is tuned for: a third of the design (the point
    where a target is typically met), else 500; never below 20."""
    design = target.design_items
    return float(max(20, design / 3 if design else DEFAULT_TUNING_ITEMS))


def contrast_plan(languages, backbones, target) -> tuple[pd.DataFrame, np.ndarray]:
    """The quantities a target (a :class:`StopTarget` or its dict) follows (one row each: kind,
    label, language, backbone, versus, tested, alpha) and their coefficients on the flattened
    ``(language, backbone)`` block."""
    target = check_target(target)
    k, m = len(languages), len(backbones)
    eye_l, eye_b = np.eye(k), np.eye(m)
    centre_l, centre_b = eye_l - 1.0 / k, eye_b - 1.0 / m
    rows, coefs = [], []
    for il, ib in np.ndindex(k, m):
        rows.append(("beta", f"beta: {languages[il]} x {backbones[ib]}", languages[il],
                     backbones[ib], None))
        coefs.append(np.outer(centre_l[il], centre_b[ib]).ravel())
    decisions = target.decisions or ()
    pairs = list(combinations(range(m), 2))
    if "calibrated" in decisions:
        for a, b in pairs:
            rows.append(("calibrated", f"calibrated: {backbones[a]} vs {backbones[b]}", None,
                         backbones[a], backbones[b]))
            coefs.append(np.outer(np.full(k, 1.0 / k), eye_b[a] - eye_b[b]).ravel())
    if "raw" in decisions:
        for il in range(k):
            for a, b in pairs:
                rows.append(("raw", f"raw/{languages[il]}: {backbones[a]} vs {backbones[b]}",
                             languages[il], backbones[a], backbones[b]))
                coefs.append(np.outer(eye_l[il], eye_b[a] - eye_b[b]).ravel())
    plan = pd.DataFrame(rows, columns=["kind", "label", "language", "backbone", "versus"])
    is_beta = (plan["kind"] == "beta").to_numpy()
    plan["tested"] = ~is_beta if target.beta_halfwidth is None else True
    error = 1.0 - target.level
    n_tested = int(plan["tested"].sum())
    plan["alpha"] = np.where(plan["tested"], error / n_tested, error / int(is_beta.sum()))
    return plan, np.array(coefs)


def item_contrasts(scores, target, languages=None, backbones=None):
    """The plan and coefficients of a target (:func:`contrast_plan`) and each item's contrasts
    (items x quantities), NaN where the item lacks the cells the quantity needs: a beta cell
    needs the whole block (double-centring is exact only there); a raw pair its two cells; a
    calibrated pair at least one language with both judges' cells, and is the mean of their
    differences over those languages (unbiased for the pair when cells are missing
    independently of the scores). ``scores``: (items, languages, backbones), NaN = missing."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 3:
        raise ValueError(f"scores must be (items, languages, backbones), got {scores.shape}")
    _, k, m = scores.shape
    languages = list(languages) if languages is not None else [f"l{i}" for i in range(k)]
    backbones = list(backbones) if backbones is not None else [f"b{i}" for i in range(m)]
    plan, coefs = contrast_plan(languages, backbones, target)
    flat = scores.reshape(len(scores), -1)
    complete = np.isfinite(flat).all(axis=1)
    x = np.where(complete[:, None], np.nan_to_num(flat) @ coefs.T, np.nan)
    pairs = plan["kind"].isin(DECISION_KINDS).to_numpy()
    if pairs.any() and not complete.all():
        index = {b: i for i, b in enumerate(backbones)}
        a = plan.loc[pairs, "backbone"].map(index).to_numpy()
        b = plan.loc[pairs, "versus"].map(index).to_numpy()
        diff = scores[:, :, a] - scores[:, :, b]                 # items x languages x pairs
        present = np.isfinite(diff).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            calibrated = np.where(present > 0, np.nansum(diff, axis=1) / present, np.nan)
        lang = plan.loc[pairs, "language"].map({l: i for i, l in enumerate(languages)})
        raw = diff[:, np.nan_to_num(lang.to_numpy(float)).astype(int), np.arange(len(a))]
        x[:, pairs] = np.where((plan.loc[pairs, "kind"] == "raw").to_numpy(), raw, calibrated)
    return plan, coefs, snap(x, flat)


def snap(x: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Contrasts rounded to 1e-12 of the scores' magnitude: the float products leave values
    around 1e-17 where a contrast is exactly 0 (or exactly equal to another), which would pass
    for information; the scores' own resolution is far coarser."""
    finite = np.abs(scores[np.isfinite(scores)])
    quantum = 1e-12 * (finite.max() if finite.size and finite.max() > 0 else 1.0)
    return np.round(x / quantum) * quantum


def used_first(x: np.ndarray) -> np.ndarray:
    """Each quantity's usable values (finite) first, in drawing order, then zeros that no
    bound reads (time on axis -2), so that one sequence per column runs over its own items."""
    order = np.argsort(~np.isfinite(x), axis=-2, kind="stable")
    return np.nan_to_num(np.take_along_axis(x, order, axis=-2))


def contrast_range(coefs: np.ndarray, score_range) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest value each contrast can take when every score is in the range."""
    lo, hi = score_range
    pos, neg = np.clip(coefs, 0, None).sum(axis=1), np.clip(coefs, None, 0).sum(axis=1)
    return pos * lo + neg * hi, pos * hi + neg * lo


PRIOR_FADE = 20
"""Items after which the variance prior's weight fades as ``PRIOR_FADE / t``: it guards the
small samples (where a few equal contrasts can make the running variance collapse) and no
longer widens long collections, whose stop it delayed where the spread is far below the range
(docs/performance.md, the replay). None: a constant weight."""


def prior_items(n: int):
    """Pseudo-observations of the variance prior after each of ``n`` items (time on axis -2):
    ``PRIOR_ITEMS * min(1, PRIOR_FADE / t)``."""
    if PRIOR_FADE is None:
        return PRIOR_ITEMS
    t = np.arange(1, n + 1, dtype=float)[:, None]
    return PRIOR_ITEMS * np.minimum(1.0, PRIOR_FADE / t)


def sequence_bounds(x: np.ndarray, plan: pd.DataFrame, coefs: np.ndarray, target: StopTarget,
                    points=None, full: bool = True
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Running estimate, lower and upper bound of every quantity after each of its items
    (``x`` from :func:`used_first`: time on axis -2, leading axes allowed, e.g. replay orders).
    ``points`` and ``full``: the betting sequence's candidates (:func:`betting_grid`)."""
    alpha = plan["alpha"].to_numpy()
    if target.sequence == "fixed_n":                    # the naive rule (replays only)
        mean, half = sequences.fixed_n_interval(x, alpha)
        return mean, mean - half, mean + half
    lo, hi = (contrast_range(coefs, target.score_range)
              if target.score_range is not None else (None, None))
    if target.sequence == "asymptotic":
        prior = None if lo is None else ((hi - lo) / 2.0) ** 2
        mean, half = sequences.asymptotic_cs(x, alpha, tuning_items(target), prior,
                                             prior_items(x.shape[-2]), MIN_INFORMATIVE,
                                             small_sample=True)
        return mean, mean - half, mean + half
    lower, upper = sequences.betting_cs(x, alpha, lo, hi,
                                        betting_grid(plan, lo, hi, target, points, full))
    return np.cumsum(x, axis=-2) / np.arange(1, x.shape[-2] + 1)[:, None], lower, upper


def betting_grid(plan, lo, hi, target, points=None, full: bool = True) -> np.ndarray:
    """Candidate values (candidates x quantities, NaN-padded) at which the betting sequence is
    evaluated. Always exactly 0 and +-2 epsilon for pairs (the points a pair's decision tests),
    and ``points`` (one value per quantity, e.g. a planted truth, tested exactly). A tested beta
    cell gets an even grid of step at most ``beta_halfwidth / 8``; with ``full`` every other
    quantity gets one of step at most epsilon / 8 (or 1/200 of its range), so that its reported
    bounds are within one step of the exact ones. Without ``full`` (a replay, which needs only
    the decisions) the pairs get their test points and untested beta cells a coarse grid."""
    is_beta = (plan["kind"] == "beta").to_numpy()
    width = hi - lo
    eps = target.epsilon if target.epsilon is not None else np.nan
    h = target.beta_halfwidth
    step = np.where(is_beta, h / 8.0 if h is not None else width / 200.0,
                    eps / 8.0 if target.epsilon is not None else width / 200.0)
    if not full:
        step = np.where(is_beta & (h is None), width / 20.0, step)
        step = np.where(~is_beta, np.inf, step)
    counts = np.clip(np.ceil(width / step), 0, 4000).astype(int)
    counts = np.where(np.isfinite(step), np.maximum(counts, 20), 0)
    special = [np.where(is_beta, np.nan, 0.0), np.where(is_beta, np.nan, -2 * eps),
               np.where(is_beta, np.nan, 2 * eps)]
    if points is not None:
        special.append(np.asarray(points, dtype=float))
    grid = np.full((counts.max() + len(special), len(plan)), np.nan)
    for q in range(len(plan)):
        even = lo[q] + np.arange(1, counts[q] + 1) / (counts[q] + 1.0) * width[q]
        values = np.concatenate([even, [s[q] for s in special]])
        values = np.unique(np.clip(values[np.isfinite(values)], lo[q], hi[q]))
        grid[:len(values), q] = values
    return grid


def settled(plan: pd.DataFrame, lower, upper, target: StopTarget) -> np.ndarray:
    """Whether each quantity meets its target: a beta cell when its half-width is at most
    ``beta_halfwidth``; a pair when its interval excludes 0 or lies inside
    ``(-2 epsilon, 2 epsilon)`` (then the pair differs by less than ``2 epsilon``, and a pair
    differing by more can only be settled with its sign). Broadcasts over leading axes."""
    half = (upper - lower) / 2.0
    is_beta = (plan["kind"] == "beta").to_numpy()
    beta_ok = half <= (target.beta_halfwidth if target.beta_halfwidth is not None
                       else -np.inf)
    eps = target.epsilon if target.epsilon is not None else -np.inf
    pair_ok = (lower > 0) | (upper < 0) | ((lower > -2 * eps) & (upper < 2 * eps))
    return np.where(is_beta, beta_ok, pair_ok)


def needed_judges(cells: pd.DataFrame, backbones) -> list:
    """The backbones still in a tested pair that is not settled (the rest may retire: every
    pair they are in is settled), in the order of ``backbones``."""
    pairs = cells[cells["tested"] & (cells["kind"] != "beta") & ~cells["settled"]]
    still = set(pairs["backbone"]) | set(pairs["versus"])
    return [b for b in backbones if b in still]


def stopping_status(scores: np.ndarray, target, languages=None, backbones=None
                    ) -> StopStatus:
    """Evaluate the confidence sequences on all rows of ``scores`` (items in the order they were
    drawn, shape ``(items, languages, backbones)``, NaN = missing) and decide whether to stop.
    Each quantity uses every item that has the cells it needs (:func:`item_contrasts`)."""
    target = check_target(target)
    plan, coefs, x = item_contrasts(scores, target, languages, backbones)
    used = np.isfinite(x).sum(axis=0)
    n_complete = int(np.isfinite(x).all(axis=1).sum())
    if len(x):
        bounds = sequence_bounds(used_first(x), plan, coefs, target)
        at = np.maximum(used - 1, 0)[None, :]
        est, lower, upper = (np.take_along_axis(a, at, axis=0)[0] for a in bounds)
    else:
        est = lower = upper = np.zeros(len(plan))
    none = used == 0
    est, lower, upper = (np.where(none, np.nan, est), np.where(none, -np.inf, lower),
                         np.where(none, np.inf, upper))
    ok = settled(plan, lower, upper, target)
    return status_from_bounds(plan, est, lower, upper, ok, target, np.shape(scores)[0],
                              n_complete, used)


def not_yet(target) -> str:
    """Why a quantity has no interval yet under ``target``'s sequence."""
    if target.sequence == "asymptotic":
        return (f"the asymptotic sequence needs {MIN_INFORMATIVE} items with a nonzero "
                "contrast, and a spread")
    return "no item has its cells yet"


def status_from_bounds(plan, est, lower, upper, ok, target, n_items, n_complete, used
                       ) -> StopStatus:
    """The StopStatus of one evaluation (shared with the replay's checks)."""
    cells = plan.drop(columns="alpha").assign(
        n_items=used, estimate=est, lower=lower, upper=upper,
        halfwidth=(upper - lower) / 2.0, valid=np.isfinite(lower) & np.isfinite(upper),
        settled=ok)
    cells = cells[CELL_COLUMNS]
    tested = cells[cells["tested"]]
    pairs = tested[tested["kind"] != "beta"]
    undecided = pairs.loc[~pairs["settled"], "label"].tolist()
    tied = pairs.loc[pairs["settled"] & (pairs["lower"] <= 0) & (pairs["upper"] >= 0),
                     "label"].tolist()
    beta = cells[cells["kind"] == "beta"]
    met = bool(tested["settled"].all())
    if n_items < target.min_items:
        reason = f"min_items not reached ({n_items} of {target.min_items} items)"
    elif met:
        reason = "; ".join(([f"beta_halfwidth {target.beta_halfwidth} reached"]
                            if target.beta_halfwidth is not None else [])
                           + (["all pairs settled"] if len(pairs) else []))
    else:
        open_cells = tested[(tested["kind"] == "beta") & ~tested["settled"]]
        no_interval = int((~open_cells["valid"]).sum())
        wider = len(open_cells) - no_interval
        reason = "continuing: " + ", ".join(
            ([f"{no_interval} beta cell(s) with no interval yet ({not_yet(target)})"]
             if no_interval else [])
            + ([f"{wider} beta cell(s) wider than {target.beta_halfwidth}"] if wider else [])
            + ([f"{len(undecided)} pair(s) undecided"] if undecided else []))
    return StopStatus(n_items=int(n_items), n_complete_items=int(n_complete),
                      stop=met and n_items >= target.min_items, reason=reason,
                      max_beta_halfwidth=float(beta["halfwidth"].max()),
                      undecided_pairs=undecided, cells=cells.reset_index(drop=True),
                      tied_pairs=tied, target_met=met)
