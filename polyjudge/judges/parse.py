"""Answer formats: how a judge's reply text becomes a value, or a parse failure.

A format is declared next to its prompt (``answer:`` in the prompt file). Kinds:

* ``text``: the whole reply, blanks stripped (translations); empty is a parse failure;
* ``label``: one of a closed set of labels (pairwise verdicts A / B / Tie);
* ``integer``: an integer in ``[minimum, maximum]`` (1-5 rubric scores).

The value is read from the JSON object in the reply (``json_key``) when there is one (structured
output), else from the last match of ``pattern`` (its first group that matched, else the whole
match). Anything else is a ``parse_failure``: never a tie, never a wrong answer (Inspect AI's
"unscored"; RewardBench's silent 0.5 is the bug we avoid). Parsing is pure, so stored raw replies
are re-parsed whenever the format changes, without calling anyone.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

KINDS = ("text", "label", "integer")
OK, PARSE_FAILURE, FAILED = "ok", "parse_failure", "failed"
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


@dataclass(frozen=True)
class AnswerFormat:
    """How to read one answer from a reply (see the module docstring)."""
    kind: str
    pattern: str | None = None
    json_key: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    minimum: int | None = None
    maximum: int | None = None
    schema: Mapping[str, Any] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"answer kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "label" and not self.labels:
            raise ValueError("a label answer needs `labels` (reply text -> label)")
        if self.kind != "text" and not (self.pattern or self.json_key):
            raise ValueError(f"a {self.kind} answer needs a `pattern` or a `json_key`")
        if self.pattern:
            re.compile(self.pattern)

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> "AnswerFormat":
        known = {"kind", "pattern", "json_key", "labels", "minimum", "maximum", "schema"}
        unknown = sorted(set(spec) - known - {"expected_output_tokens"})
        if unknown:
            raise ValueError(f"unknown answer setting(s) {unknown}; known: {sorted(known)}")
        labels = {str(k).strip().lower(): str(v) for k, v in (spec.get("labels") or {}).items()}
        return cls(**{**{k: v for k, v in spec.items() if k in known}, "labels": labels})

    def digest(self) -> str:
        """Content hash of the format (a parser change shows as a new digest)."""
        text = json.dumps({"kind": self.kind, "pattern": self.pattern, "json_key": self.json_key,
                           "labels": dict(self.labels), "minimum": self.minimum,
                           "maximum": self.maximum, "schema": self.schema}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _json_value(text: str, key: str):
    """``obj[key]`` of the JSON object in ``text`` (whole reply, fenced, or embedded),
    else None."""
    stripped = _FENCE.sub("", text.strip())
    for candidate in (stripped, *(m.group(0) for m in [_JSON_OBJECT.search(stripped)] if m)):
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(obj, dict) and key in obj and obj[key] is not None:
            return obj[key]
    return None


def _pattern_value(text: str, pattern: str):
    matches = list(re.finditer(pattern, text, flags=re.IGNORECASE))
    if not matches:
        return None
    last = matches[-1]
    groups = [g for g in last.groups() if g is not None]
    return groups[0] if groups else last.group(0)


def parse_answer(text: str | None, answer: AnswerFormat, truncated: bool = False
                 ) -> tuple[Any, str]:
    """``(value, status)`` of one reply: status ``ok`` or ``parse_failure`` (value None).

    A reply cut off at ``max_tokens`` (``truncated``) is a parse failure whatever its start says:
    a rambling model's "The score is 3 because..." cut short is not an answer."""
    if truncated or text is None or not str(text).strip():
        return None, PARSE_FAILURE
    text = str(text)
    if answer.kind == "text":
        return text.strip(), OK
    raw = _json_value(text, answer.json_key) if answer.json_key else None
    if raw is None and answer.pattern:
        raw = _pattern_value(text, answer.pattern)
    if raw is None:
        return None, PARSE_FAILURE
    if answer.kind == "label":
        key = re.sub(r"^[\s(\[\"'*]+|[\s)\]\"'*.:!]+$", "", str(raw)).lower()
        label = answer.labels.get(key, answer.labels.get(str(raw).strip().lower()))
        return (label, OK) if label is not None else (None, PARSE_FAILURE)
    try:
        number = float(str(raw).strip())
    except ValueError:
        return None, PARSE_FAILURE
    if not number.is_integer():
        return None, PARSE_FAILURE
    value = int(number)
    if (answer.minimum is not None and value < answer.minimum) or \
            (answer.maximum is not None and value > answer.maximum):
        return None, PARSE_FAILURE
    return value, OK
