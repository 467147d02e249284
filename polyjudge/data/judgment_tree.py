"""Flattening the upstream Agent-as-a-Judge judgment tree into a requirement table.

The DevAI panel of the CBC paper (docs/methods.md section 0) was judged with Agent-as-a-Judge,
which writes one JSON per run, at this path under the folder ``<root>``:

    <backbone>/<Language>/<Framework>/judgment/<Framework>/agent_as_a_judge/gray_box/<task>.json

Each file holds the task's ``requirements`` (``requirement_id``, ``category``, ...) and the judge's
``judge_stats``: one verdict per requirement with ``requirement_index`` (its position in
``requirements``), ``satisfied``, ``total_time`` and ``llm_stats`` (tokens, inference time and the
judge's ``reason`` text). :func:`flatten_judgment_tree` gives one row per verdict, exactly as in
``devai_ml_aaaj/requirement_judgments.csv``; run scores ``100 x satisfied / requirements`` then
come from :func:`polyjudge.data.io.runs_from_requirements`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .checksums import verify as verify_checksum
from .errors import InputError

LAYOUT = ("<backbone>/<Language>/<Framework>/judgment/<Framework>/agent_as_a_judge/gray_box/"
          "<task>.json")
COLUMNS = ["backbone", "language", "framework", "task", "requirement_index", "requirement_id",
           "category", "satisfied", "input_tokens", "output_tokens", "inference_time",
           "total_time", "response_status", "reason_chars"]
SORT_KEYS = ["backbone", "language", "framework", "task", "requirement_index"]
SATISFIED_TAG = "<SATISFIED>"
UNSATISFIED_TAG = "<UNSATISFIED>"
TIME_DECIMALS = 3


def response_status(reason: str) -> str:
    """Classify the judge's reason text by its verdict tags.

    ``empty`` if it has no non-whitespace character; otherwise ``both_tags`` / ``sat_tag`` /
    ``unsat_tag`` / ``no_tag`` by whether the literal, case-sensitive tags ``<SATISFIED>`` and
    ``<UNSATISFIED>`` occur (so ``< SATISFIED >`` is ``no_tag``). Upstream stores empty and
    untagged responses as ``satisfied = false``.
    """
    if not reason.strip():
        return "empty"
    sat, unsat = SATISFIED_TAG in reason, UNSATISFIED_TAG in reason
    if sat and unsat:
        return "both_tags"
    return "sat_tag" if sat else "unsat_tag" if unsat else "no_tag"


def flatten_judgment_tree(root) -> pd.DataFrame:
    """One row per requirement verdict of every judgment JSON under ``root``.

    Columns (``COLUMNS``): backbone, language, framework, task (the file name without ``.json``),
    requirement_index, requirement_id, category, satisfied (0/1), input_tokens, output_tokens,
    inference_time and total_time (seconds, rounded to 3 decimals), response_status (see
    :func:`response_status`) and reason_chars (length of the reason text). Rows are sorted by
    backbone, language, framework, task, requirement_index.

    Raises :class:`polyjudge.data.errors.InputError` (a ValueError) naming the file for a root
    without JSON files, a file outside ``LAYOUT``, unreadable JSON, missing keys, or verdicts that
    do not match the requirements one to one.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "is not a directory", f"a judgment tree laid out as {LAYOUT}")
    files = sorted(root.rglob("*.json"))
    if not files:
        raise InputError(root, "contains no JSON files", f"judgment files laid out as {LAYOUT}")
    rows = [row for path in files for row in _flatten_judgment_file(path, root)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(SORT_KEYS, kind="stable", ignore_index=True)


def _run_labels(path: Path, root: Path) -> dict:
    """backbone, language, framework and task from the file's place in the layout."""
    parts = path.relative_to(root).parts
    fixed = parts[3:4] + parts[5:7]
    if len(parts) != 8 or fixed != ("judgment", "agent_as_a_judge", "gray_box") \
            or parts[2] != parts[4]:
        raise InputError(path, f"is outside the judgment layout (relative path {'/'.join(parts)})",
                         f"{LAYOUT} under {root}, with the same <Framework> twice")
    return {"backbone": parts[0], "language": parts[1], "framework": parts[2],
            "task": path.stem}


def _require(mapping, keys, path: Path, where: str) -> None:
    if not isinstance(mapping, dict):
        raise InputError(path, f"{where} is a {type(mapping).__name__}",
                         f"a JSON object at {where}")
    missing = [k for k in keys if k not in mapping]
    if missing:
        raise InputError(path, f"{where} lacks key(s) {missing}", f"keys {list(keys)} at {where}")


def _reason_text(reason, path: Path, where: str) -> str:
    """The judge's reason: upstream a list of strings (joined), a plain string is accepted."""
    if isinstance(reason, str):
        return reason
    if isinstance(reason, list) and all(isinstance(part, str) for part in reason):
        return "".join(reason)
    raise InputError(path, f"{where}.llm_stats.reason is {reason!r:.60}",
                     "a string or a list of strings")


def _flatten_judgment_file(path: Path, root: Path) -> list[dict]:
    """Rows of one judgment JSON (see :func:`flatten_judgment_tree`)."""
    labels = _run_labels(path, root)
    verify_checksum(path)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, f"cannot be read as JSON ({error})",
                         "an Agent-as-a-Judge judgment JSON") from None
    _require(data, ["requirements", "judge_stats"], path, "the top level")
    requirements, verdicts = data["requirements"], data["judge_stats"]
    if not isinstance(requirements, list) or not isinstance(verdicts, list) or not requirements:
        raise InputError(path, "requirements or judge_stats is not a list, or has no requirement",
                         "two JSON lists with one entry per requirement")
    for i, requirement in enumerate(requirements):
        _require(requirement, ["requirement_id", "category"], path, f"requirements[{i}]")
    indices = []
    for i, verdict in enumerate(verdicts):
        where = f"judge_stats[{i}]"
        _require(verdict, ["requirement_index", "satisfied", "total_time", "llm_stats"],
                 path, where)
        _require(verdict["llm_stats"],
                 ["input_tokens", "output_tokens", "inference_time", "reason"], path,
                 f"{where}.llm_stats")
        if not isinstance(verdict["satisfied"], bool):
            raise InputError(path, f"{where}.satisfied is {verdict['satisfied']!r}",
                             "true or false")
        stats = verdict["llm_stats"]
        for key, value, kinds in [("requirement_index", verdict["requirement_index"], int),
                                  ("llm_stats.input_tokens", stats["input_tokens"], int),
                                  ("llm_stats.output_tokens", stats["output_tokens"], int),
                                  ("llm_stats.inference_time", stats["inference_time"],
                                   (int, float)),
                                  ("total_time", verdict["total_time"], (int, float))]:
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise InputError(path, f"{where}.{key} is {value!r:.60}",
                                 "an integer" if kinds is int else "a number")
        indices.append(verdict["requirement_index"])
    if sorted(indices) != list(range(len(requirements))):
        raise InputError(path, f"judge_stats has requirement_index {indices} for "
                         f"{len(requirements)} requirements",
                         f"one verdict per requirement, indices 0..{len(requirements) - 1}")
    rows = []
    for i, verdict in enumerate(verdicts):
        stats = verdict["llm_stats"]
        requirement = requirements[verdict["requirement_index"]]
        reason = _reason_text(stats["reason"], path, f"judge_stats[{i}]")
        rows.append({**labels,
                     "requirement_index": verdict["requirement_index"],
                     "requirement_id": requirement["requirement_id"],
                     "category": requirement["category"],
                     "satisfied": int(verdict["satisfied"]),
                     "input_tokens": stats["input_tokens"],
                     "output_tokens": stats["output_tokens"],
                     "inference_time": round(stats["inference_time"], TIME_DECIMALS),
                     "total_time": round(verdict["total_time"], TIME_DECIMALS),
                     "response_status": response_status(reason),
                     "reason_chars": len(reason)})
    return rows
