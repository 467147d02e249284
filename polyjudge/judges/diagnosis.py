"""Why a collected panel has fewer judgments or scores than it asked for, in words a user can act
on: the stage, the counts by outcome, the files to look at and the setting to change.

A small or badly configured judge fails quietly: translations cut off at ``max_tokens`` leave
their judgments ``no_input``, free-text answers do not parse, calls fail. The analyses then see
missing values, and their own messages ("reference condition 'en' is not among the conditions
[]", "every score is missing") hide the cause. These functions name it; the rule scripts call them
before an analysis reads a collection. Pure: tables in, text out.
"""
from __future__ import annotations

import pandas as pd

OUTCOMES = ("ok", "parse_failure", "failed", "no_input")
WORDS = {"parse_failure": "unparseable", "failed": "failed", "no_input": "no_input"}


def _counts(status: pd.Series, truncated: pd.Series | None = None) -> str:
    """``8 calls: 2 ok, 6 unparseable (6 cut off at max_tokens)``: the non-zero outcomes."""
    counts = status.value_counts()
    parts = [f"{int(counts.get(s, 0))} {WORDS.get(s, s)}" for s in OUTCOMES if counts.get(s, 0)]
    text = f"{len(status)} calls: " + ", ".join(parts or ["none"])
    if truncated is not None and truncated.any():
        text += f" ({int(truncated.sum())} cut off at max_tokens)"
    return text


def _setting(endpoints: dict, name: str, key: str) -> str:
    value = (endpoints.get(name) or {}).get(key)
    return f"endpoints.{name}.{key}" + (f" (now {value})" if value is not None else "")


def _advice(status: pd.Series, truncated: pd.Series, endpoint: str, endpoints: dict) -> list[str]:
    """What to change for one endpoint's unusable calls."""
    advice = []
    if truncated.any():
        advice.append(f"raise {_setting(endpoints, endpoint, 'max_tokens')}: its replies were "
                      "cut off")
    if ((status == "parse_failure") & ~truncated).any():
        advice.append(f"set {_setting(endpoints, endpoint, 'structured_output')} to true, or "
                      "fit the prompt's answer pattern to what it writes")
    if (status == "failed").any():
        advice.append(f"rerun to retry the failed calls of {endpoint!r} (see the shard logs)")
    return advice


def judge_ls_shortfall(panel_name: str, verdicts: pd.DataFrame, texts: dict[str, pd.DataFrame],
                       reference: str, translator: str | None, endpoints: dict
                       ) -> tuple[str | None, str | None]:
    """``(error, warning)`` for a collected Judge-LS panel (``verdicts``: the collected verdict
    table with its ``status`` and ``truncated`` columns; ``texts``: condition -> translated text
    table with ``status`` and ``truncated``; ``endpoints``: the config's endpoint settings).

    The error (None when the analysis can run) is for a judge with no usable judgment in the
    reference condition (nothing can be compared with it); the warning (None when every condition
    has usable judgments) names the target conditions left without any (their rows in the tables
    count only invalid judgments)."""
    usable = verdicts["status"] == "ok"
    conditions = [c for c in pd.unique(verdicts["condition"]) if c not in (reference, "tie_probe")]
    empty_reference = sorted(j for j, part in verdicts[verdicts["condition"] == reference]
                             .groupby("judge") if not (part["status"] == "ok").any())
    empty = [c for c in conditions if not usable[verdicts["condition"] == c].any()]
    if not empty_reference and not empty:
        return None, None
    lines, advice = [], []
    for condition, table in texts.items():
        truncated = table["truncated"].astype(bool)
        lines.append(f"  translate ({translator}) {condition}: "
                     f"{_counts(table['status'], truncated)}")
        advice += _advice(table["status"], truncated, translator, endpoints)
    for (judge, condition), part in verdicts.groupby(["judge", "condition"], sort=False):
        truncated = part["truncated"].astype(bool)
        lines.append(f"  judge_pairwise {judge} {condition}: {_counts(part['status'], truncated)}")
        advice += _advice(part["status"], truncated, judge, endpoints)
    if (verdicts["status"] == "no_input").any():
        advice.append("no_input judgments wait for their translated texts: fix the translations "
                      "first (audit.csv flags every unusable field)")
    what = []
    if empty_reference:
        what.append(f"judge(s) {empty_reference} have no usable judgment in the reference "
                    f"condition {reference!r}")
    if empty:
        what.append(f"no usable judgment in condition(s) {empty}")
    text = (f"panel {panel_name!r}: " + "; ".join(what) + ". Call outcomes per stage:\n"
            + "\n".join(lines) + f"\nSee results/{panel_name}/collect/status.csv (outcomes per "
            f"stage), audit.csv (each translated field) and the raw replies in "
            f"results/{panel_name}/collect/<stage>/.../shard<k>.parquet. To change: "
            + "; ".join(dict.fromkeys(advice)) + ". Then rerun: every cached call is reused.")
    return (text, None) if empty_reference else (None, text)


def missing_scores_note(panel_name: str, scores: dict[str, pd.DataFrame], endpoints: dict
                        ) -> str | None:
    """Why scores of a collected pointwise panel are missing (``scores``: judge -> the collected
    score table with ``chosen_status`` / ``rejected_status``), or None when none is missing."""
    lines, advice = [], []
    for judge, table in scores.items():
        status = pd.concat([table["chosen_status"], table["rejected_status"]], ignore_index=True)
        truncated = pd.concat([table["chosen_truncated"], table["rejected_truncated"]],
                              ignore_index=True).astype(bool)
        if (status == "ok").all():
            continue
        lines.append(f"  judge_pointwise {judge}: {_counts(status, truncated)}")
        advice += _advice(status, truncated, judge, endpoints)
    if not lines:
        return None
    return (f"panel {panel_name!r}: scores are missing because the judges' calls did not give "
            "one (a response needs both its chosen and rejected score):\n" + "\n".join(lines)
            + f"\nSee results/{panel_name}/collect/status.csv (outcomes per judge and language, "
            "and why calls failed) "
            f"and the raw replies in results/{panel_name}/collect/judge_pointwise/. To change: "
            + "; ".join(dict.fromkeys(advice)) + "; or `missing: omit` in the panel config to "
            "leave the missing scores out. Then rerun: every cached call is reused.")
