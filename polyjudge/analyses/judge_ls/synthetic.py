"""The planted synthetic Judge-LS protocol, its exact truth, and the recovery of the truth."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from .audit import _NUMBER
from .verdicts import ALL, ORDERS, validate_verdicts


@dataclass(frozen=True)
class JudgeEffects:
    """Planted behaviour of one synthetic pairwise judge (probabilities).

    The first condition of ``accuracy`` is the reference. Per item and condition the judge forms a
    content choice, correct with probability ``accuracy[c]``; the target condition's choice
    differs from the reference's with probability ``flip[c]`` (the joint of the two correctness
    indicators is fixed by the two accuracies and ``flip``). Each shown order then gives, per
    judgment independently: Tie with probability ``tie_rate[c]``, otherwise the answer shown
    first (A) with probability ``position_bias[c]``, otherwise the content choice. On a tie probe
    (output 1 in language 1, output 2 its translation): Tie with probability ``probe_tie``,
    otherwise A with probability ``probe_position_bias``, otherwise output 2 with probability
    ``probe_prefer_2``.
    """
    accuracy: Mapping[str, float]
    flip: Mapping[str, float]
    position_bias: Mapping[str, float]
    tie_rate: Mapping[str, float]
    probe_tie: float = 0.95
    probe_prefer_2: float = 0.5
    probe_position_bias: float = 0.0

    def joint_correctness(self, target: str) -> np.ndarray:
        """``P[reference correct, target correct]`` as a 2 x 2 array (index 1 = correct)."""
        a_r, a_t, f = self.accuracy[self.reference], self.accuracy[target], self.flip[target]
        if not abs(a_r - a_t) - 1e-12 <= f <= min(a_r + a_t, 2 - a_r - a_t) + 1e-12:
            raise ValueError(f"flip[{target!r}] = {f} is impossible with accuracies {a_r} and "
                             f"{a_t}: need |a_ref - a_target| <= flip <= min(a_ref + a_target, "
                             "2 - a_ref - a_target)")
        p10, p01 = (f + a_r - a_t) / 2, (f - a_r + a_t) / 2
        return np.array([[1 - a_r - p01, p01], [p10, a_r - p10]])

    @property
    def reference(self) -> str:
        return next(iter(self.accuracy))


def default_judges() -> dict[str, JudgeEffects]:
    """Two judges shaped like the Judge-LS findings: best in English, ~10-15% flips, position
    inconsistency rising en -> cs, tie probes mostly Tie, translation (zh) winning more
    non-ties."""
    return {
        "judge_a": JudgeEffects(accuracy={"en": 0.93, "zh": 0.89, "cs": 0.90},
                                flip={"zh": 0.04, "cs": 0.03},
                                position_bias={"en": 0.10, "zh": 0.11, "cs": 0.16},
                                tie_rate={"en": 0.01, "zh": 0.015, "cs": 0.015},
                                probe_tie=0.95, probe_prefer_2=0.70, probe_position_bias=0.10),
        "judge_b": JudgeEffects(accuracy={"en": 0.91, "zh": 0.86, "cs": 0.88},
                                flip={"zh": 0.05, "cs": 0.03},
                                position_bias={"en": 0.09, "zh": 0.10, "cs": 0.14},
                                tie_rate={"en": 0.01, "zh": 0.01, "cs": 0.01},
                                probe_tie=0.97, probe_prefer_2=0.60, probe_position_bias=0.05),
    }


def _choice_probs(content: int, order: str, tie: float, bias: float) -> dict[str, float]:
    """Distribution of the normalised choice given the content choice (1 or 2) and the order."""
    first = "1" if order == "original" else "2"
    probs = {"1": 0.0, "2": 0.0, "Tie": tie}
    probs[first] += (1 - tie) * bias
    probs[str(content)] += (1 - tie) * (1 - bias)
    return probs


def _truth(judges: Mapping[str, JudgeEffects], probe_languages) -> dict[str, pd.DataFrame]:
    """Exact expected rates implied by the planted parameters (enumeration of the finite states).

    Gold is 1 or 2 and the two orders are equally likely; unparseable verdicts occur
    independently of everything, so rates among parseable verdicts are unaffected.
    """
    accuracy, flips, position, probe = [], [], [], []
    for name, e in judges.items():
        ref = e.reference
        for c in e.accuracy:
            strict = first = 0.0
            for correct, p_correct in ((True, e.accuracy[c]), (False, 1 - e.accuracy[c])):
                for g in (1, 2):
                    for order in ORDERS:
                        probs = _choice_probs(g if correct else 3 - g, order, e.tie_rate[c],
                                              e.position_bias[c])
                        strict += 0.25 * p_correct * probs[str(g)]
                        first += 0.25 * p_correct * probs["1" if order == "original" else "2"]
            tie_half = strict + 0.5 * e.tie_rate[c]
            accuracy.append((name, c, strict, tie_half))
            orig = _choice_probs(1, "original", e.tie_rate[c], e.position_bias[c])
            swap = _choice_probs(1, "swapped", e.tie_rate[c], e.position_bias[c])
            position.append((name, c, 1 - sum(orig[x] * swap[x] for x in orig),
                             first / (1 - e.tie_rate[c])))
        for c in e.flip:
            joint = e.joint_correctness(c)
            flip = gold_flip = 0.0
            for (cr, ct), p in np.ndenumerate(joint):
                for g in (1, 2):
                    for order in ORDERS:
                        w = p * 0.25
                        pr = _choice_probs(g if cr else 3 - g, order, e.tie_rate[ref],
                                           e.position_bias[ref])
                        pt = _choice_probs(g if ct else 3 - g, order, e.tie_rate[c],
                                           e.position_bias[c])
                        flip += w * (1 - sum(pr[x] * pt[x] for x in pr))
                        gold_flip += w * (pr[str(g)] * (1 - pt[str(g)])
                                          + (1 - pr[str(g)]) * pt[str(g)])
            flips.append((name, ref, c, flip, gold_flip))
        first_share = (1 - e.probe_tie) * (e.probe_position_bias * 0.5
                                           + (1 - e.probe_position_bias) * (1 - e.probe_prefer_2))
        second_share = (1 - e.probe_tie) - first_share
        lang1, lang2 = probe_languages
        shares = {lang1: first_share, lang2: second_share}
        low, high = sorted(probe_languages)
        probe.append((name, "tie_probe", low, high, shares[low], shares[high], e.probe_tie,
                      shares[high] / (1 - e.probe_tie)))
    return {
        "accuracy": pd.DataFrame(accuracy, columns=["judge", "condition", "strict_accuracy",
                                                    "tie_half_accuracy"]),
        "flips": pd.DataFrame(flips, columns=["judge", "reference", "target", "flip_rate",
                                              "gold_flip_rate"]),
        "position": pd.DataFrame(position, columns=["judge", "condition", "position_inconsistency",
                                                    "first_seat_rate"]),
        "tie_probe": pd.DataFrame(probe, columns=["judge", "condition", "language_1", "language_2",
                                                  "language_1_share", "language_2_share",
                                                  "tie_share", "non_tie_language_2_share"]),
    }


def simulate_judge_ls(seed: int, n_items: int = 400,
                      judges: Mapping[str, JudgeEffects] | None = None,
                      subsets: tuple[str, ...] = ("natural", "adversarial"),
                      probe_languages: tuple[str, str] = ("en", "zh"),
                      unparseable_rate: float = 0.01):
    """Seeded synthetic Judge-LS protocol with planted effects, and its ground truth.

    Every judge (``JudgeEffects``; default :func:`default_judges`) judges ``n_items`` items with
    gold 1 or 2 (equally likely; items assigned to ``subsets`` in turn) in each of its conditions
    (en / zh / cs by default) and both orders, plus one tie probe per item (condition
    ``tie_probe``, output 1 in ``probe_languages[0]``, output 2 its translation in
    ``probe_languages[1]``) in both orders. A fraction ``unparseable_rate`` of verdicts is
    replaced by unparseable text.

    Returns ``(verdicts, truth)``: a validated verdict table and a dict of tidy frames with the
    exact expectations implied by the parameters (see :func:`_truth`): ``accuracy`` (judge,
    condition, strict_accuracy, tie_half_accuracy), ``flips`` (judge, reference, target,
    flip_rate, gold_flip_rate), ``position`` (judge, condition, position_inconsistency,
    first_seat_rate) and ``tie_probe`` (the shares of :func:`tie_probe_table`).
    """
    judges = default_judges() if judges is None else judges
    rng = np.random.default_rng(seed)
    items = np.arange(n_items)
    gold = rng.integers(1, 3, size=n_items)
    subset = np.asarray(subsets)[items % len(subsets)]
    letters = {"original": np.array(["", "A", "B"]), "swapped": np.array(["", "B", "A"])}
    calls, verdicts, golds = [], [], []  # one block of n_items judgments per call

    def judgments(name, condition, choice_content, tie, bias, order, gold_labels):
        u = rng.random(n_items)
        verdict = np.where(u < tie, "Tie", np.where(u < tie + (1 - tie) * bias, "A",
                                                     letters[order][choice_content]))
        verdicts.append(np.where(rng.random(n_items) < unparseable_rate,
                                 rng.choice(["", "N/A", "both are good"], size=n_items), verdict))
        calls.append((name, condition, order))
        golds.append(np.broadcast_to(np.asarray(gold_labels, dtype=object), n_items))

    for name, e in judges.items():
        correct = {e.reference: rng.random(n_items) < e.accuracy[e.reference]}
        for c in e.flip:
            joint = e.joint_correctness(c)
            p_given = np.where(correct[e.reference], joint[1, 1] / joint[1].sum(),
                               joint[0, 1] / joint[0].sum())
            correct[c] = rng.random(n_items) < p_given
        for c, ok in correct.items():
            content = np.where(ok, gold, 3 - gold)
            for order in ORDERS:
                judgments(name, c, content, e.tie_rate[c], e.position_bias[c], order, gold)
        for order in ORDERS:
            content = np.where(rng.random(n_items) < e.probe_prefer_2, 2, 1)
            judgments(name, "tie_probe", content, e.probe_tie, e.probe_position_bias, order, "Tie")
    # one frame from all the blocks (building a frame per block dominates with many judges)
    name, condition, order = (np.repeat(np.array(column, dtype=object), n_items)
                              for column in zip(*calls))
    verdicts = pd.DataFrame({"item": np.tile(items, len(calls)),
                             "subset": np.tile(subset, len(calls)), "judge": name,
                             "condition": condition, "order": order,
                             "verdict": np.concatenate(verdicts), "gold": np.concatenate(golds)})
    probes = verdicts["gold"] == "Tie"
    verdicts["probe_language_1"] = np.where(probes, probe_languages[0], None)
    verdicts["probe_language_2"] = np.where(probes, probe_languages[1], None)
    return validate_verdicts(verdicts, "synthetic Judge-LS"), _truth(judges, probe_languages)


_WORDS = ("answer", "output", "the", "instruction", "list", "value", "result", "explain",
          "because", "table", "write", "function", "total", "step", "each", "number", "order")


def simulate_audit_texts(seed: int, items: pd.DataFrame, kind: str = "full",
                         n_per_defect: int = 2, fields=("input", "output_1", "output_2")):
    """Reference texts and translated variants with planted defects, for :func:`translation_audit`.

    Each (item, subset, field) of ``items`` gets an English-like reference of 60 words with five
    numbers. A clean ``full`` variant maps every word to one CJK character (length ratio about
    0.35); a clean ``code_switched`` variant replaces every other word (ratio about 0.6); numbers
    are kept. ``n_per_defect`` distinct fields per defect get: ``empty`` (empty variant),
    ``lost_numbers`` (digits removed), ``number_count_change`` (three of five numbers removed),
    ``shrinkage`` (only the numbers remain). Returns ``(reference, variant, planted)``; planted
    has item, subset, field, defect, and the audit must flag exactly those fields (each with the
    flag named by its defect).
    """
    rng = np.random.default_rng(seed)
    keys = items[["item", "subset"]].drop_duplicates().astype(str)
    keys = keys.merge(pd.DataFrame({"field": list(fields)}), how="cross")
    defects = ("empty", "lost_numbers", "number_count_change", "shrinkage")
    if len(defects) * n_per_defect > len(keys):
        raise ValueError(f"need at least {len(defects) * n_per_defect} fields for the defects")
    reference, variant = [], []
    for _ in range(len(keys)):
        words = list(rng.choice(_WORDS, size=60))
        numbers = [str(x) for x in rng.integers(1, 1000, size=5)]
        for position, number in zip(rng.choice(60, size=5, replace=False), numbers):
            words[position] = number
        reference.append(" ".join(words))
        variant.append(" ".join(w if w.isdigit() or (kind == "code_switched" and i % 2)
                                else chr(0x4E00 + _WORDS.index(w)) for i, w in enumerate(words)))
    chosen = rng.choice(len(keys), size=len(defects) * n_per_defect, replace=False)
    planted = keys.iloc[chosen].assign(defect=np.repeat(defects, n_per_defect))
    for row, defect in zip(chosen, planted["defect"]):
        text = variant[row]
        numbers = _NUMBER.findall(text)
        if defect == "empty":
            variant[row] = ""
        elif defect == "lost_numbers":
            variant[row] = _NUMBER.sub("", text)
        elif defect == "number_count_change":
            variant[row] = _NUMBER.sub("", text, count=3)
        else:
            variant[row] = " ".join(numbers)
    return (keys.assign(text=reference), keys.assign(text=variant),
            planted.reset_index(drop=True))


RECOVERY_COLUMNS = ["table", "judge", "condition", "quantity", "truth", "estimate", "ci_low",
                    "ci_high", "covered"]
# (table, keys, quantity, prefix of its interval columns)
_RECOVERED = [("accuracy", ["judge", "condition"], "strict_accuracy", "strict"),
              ("position", ["judge", "condition"], "position_inconsistency", "position"),
              ("position", ["judge", "condition"], "first_seat_rate", "first_seat"),
              ("flips", ["judge", "reference", "target"], "flip_rate", "flip"),
              ("tie_probe", ["judge", "condition"], "tie_share", "tie_share"),
              ("tie_probe", ["judge", "condition"], "non_tie_language_2_share", "non_tie")]


def recovery_table(tables: Mapping[str, pd.DataFrame], truth: Mapping[str, pd.DataFrame]
                   ) -> pd.DataFrame:
    """Each planted value of :func:`simulate_judge_ls` beside its estimate and interval.

    ``tables``: the accuracy, position, flips and tie_probe tables (pooled rows, subset and order
    ``all``, are compared); ``truth``: the simulation's truth frames. Columns
    :data:`RECOVERY_COLUMNS`; ``covered`` says whether the interval holds the planted value.
    """
    rows = []
    for name, keys, quantity, prefix in _RECOVERED:
        estimate = tables[name]
        for pooled in ("subset", "order"):
            if pooled in estimate:
                estimate = estimate[estimate[pooled] == ALL]
        merged = pd.DataFrame(truth[name])[keys + [quantity]].merge(
            estimate, on=keys, suffixes=("_truth", ""))
        for row in merged.to_dict(orient="records"):
            low, high = row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"]
            value = row[f"{quantity}_truth"]
            rows.append({"table": name, "judge": row["judge"],
                         "condition": row.get("condition", row.get("target")),
                         "quantity": quantity, "truth": value, "estimate": row[quantity],
                         "ci_low": low, "ci_high": high, "covered": low <= value <= high})
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)
