"""The planted judges of tests/judge_server.py: what each model it serves answers, drawn
from a hash of (model, item, ...) so the same request always gets the same answer.

Items are recognised by the markers the test items carry (tests/judge_items.py): ``<<good|1>>``
/ ``<<bad|2>>`` (quality and original index) at the start of each output, ``<<item:ID>>`` in
the instruction, ``<<lang:L>>`` for a pointwise item's language, a ``[zh] `` / ``[cs] `` prefix
for translated text.
"""
from __future__ import annotations

import hashlib
import json
import re

from polyjudge.analyses import judge_ls

_OUTPUT = re.compile(r"(?:\[(zh|cs)\] )?<<(good|bad)\|([12])>>")
_ITEM = re.compile(r"<<item:([^>]+)>>")
_LANG = re.compile(r"<<lang:([^>]+)>>")


def uniform(*parts) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:15], 16) / 16**15


class PlantedJudges:
    """The answers of :class:`judge_server.JudgeServer`'s models (its ``pairwise``,
    ``pointwise``, ``unparseable``, ``shared_quality`` and ``unparseable_low`` settings)."""

    shared_quality = False
    """Pointwise: the scorers agree on each item's quality (one coin per item, language and
    side for every model) instead of drawing their own."""
    unparseable_low: dict = {}
    """Pointwise: model -> the chance it answers nothing parseable where its chosen-side score
    is the low one (4, before its offset): a judge that fails where it would score low."""

    # --- planted behaviour -------------------------------------------------------------------
    def planted_score(self, model: str, item: str, language: str, side: str) -> int:
        """Chosen: 4 or 5, rejected: 2 or 3, shifted by the model's per-language offset."""
        base = {"chosen": 4, "rejected": 2}[side] + self._high(model, item, language, side)
        return int(min(5, max(1, base + self.pointwise[model].get(language, 0))))

    def _high(self, model: str, item: str, language: str, side: str) -> bool:
        """The coin that puts a side's score at the higher of its two values."""
        who = () if self.shared_quality else (model,)
        return uniform(*who, item, language, side) < 0.5

    def _pairwise(self, model: str, content: str) -> str:
        effects = self.pairwise[model]
        item = _ITEM.search(content).group(1)
        (lang_a, q_a, index_a), (lang_b, q_b, _) = _OUTPUT.findall(content)[-2:]
        lang_a, lang_b = lang_a or "en", lang_b or "en"
        if q_a == q_b == "good":  # tie probe: output A and B are the gold output in two languages
            order = "original" if lang_a == "en" else "swapped"
            content_choice = (2 if uniform(model, item, order, "probe") < effects.probe_prefer_2
                              else 1)
            translated_first = order == "swapped"
            letter = "A" if (content_choice == 2) == translated_first else "B"
            tie, bias = effects.probe_tie, effects.probe_position_bias
            condition = "tie_probe"
        else:
            condition = lang_a
            order = "original" if index_a == "1" else "swapped"
            reference = effects.reference
            correct_ref = uniform(model, item, "correct", reference) < effects.accuracy[reference]
            if condition == reference:
                correct = correct_ref
            else:
                joint = effects.joint_correctness(condition)
                p = joint[1, 1] / joint[1].sum() if correct_ref else joint[0, 1] / joint[0].sum()
                correct = uniform(model, item, "correct", condition) < p
            good_letter = "A" if q_a == "good" else "B"
            letter = good_letter if correct else ("B" if good_letter == "A" else "A")
            tie, bias = effects.tie_rate[condition], effects.position_bias[condition]
        u = uniform(model, item, condition, order, "verdict")
        return "Tie" if u < tie else ("A" if u < tie + (1 - tie) * bias else letter)

    def reply(self, request: dict) -> str:
        model = request["model"]
        messages = request["messages"]
        content = messages[-1]["content"]
        structured = request.get("response_format") is not None
        if model == "echo":
            return "ok"
        if model == "translator":
            text = content.rsplit("Text:\n", 1)[1].rstrip("\n")
            system = messages[0]["content"]
            return ("[cs] " if "bilingual" in system else "[zh] ") + text
        if uniform(json.dumps(messages), "unparseable") < self.unparseable.get(model, 0.0):
            return "I cannot decide between them."
        if model in self.pairwise:
            verdict = self._pairwise(model, content)
            return json.dumps({"verdict": verdict}) if structured else {
                "A": "Output (a)", "B": "Output (b)", "Tie": "Tie"}[verdict]
        if model in self.pointwise:
            item = _ITEM.search(content).group(1)
            language = _LANG.search(content).group(1)
            side = "chosen" if "<<good|" in content else "rejected"
            score = self.planted_score(model, item, language, side)
            if side == "chosen" and not self._high(model, item, language, side) and uniform(
                    model, item, language, "low") < self.unparseable_low.get(model, 0.0):
                return "I would rather not score this."
            return json.dumps({"score": score}) if structured else f"Score: {score}"
        raise KeyError(model)


def default_pairwise_judges() -> dict:
    """Two planted judges (the Judge-LS synthetic defaults, judge_a and judge_b)."""
    return judge_ls.default_judges()
