"""The factors of a run table beyond task, language and judge, and what each analysis does with
them.

A run table may carry two more factors. ``framework`` holds the runs of a task x language x judge
cell: repeats of one judgment, or the systems the judge judged (a tool reader puts the judged
model there). ``stratum`` groups tasks: a subset, a category, a turn. The estimator is the
two-way model of language and judge, so no analysis fits a third factor. Each one either uses
these columns or pools over them. ``shape.json`` says which, so a panel with a judged system or
a turn is never averaged without saying so.
"""
from __future__ import annotations

from .shape import ALL_ANALYSES

POOLED = {
    "framework": "averaged: a cell's runs are averaged into its task score T[t, l, b]",
    "stratum": "ignored: every task is pooled",
}
"""What an analysis that does not use a factor does with it."""

USED = {
    "framework": {
        "information": "used: each run is a point of the conditional mutual information (one "
                       "per language x framework in every task x judge stratum)",
        "heldout": "averaged for CBC and the score baselines; Dawid-Skene's verdicts take each "
                   "run (task x framework) as an item",
    },
    "stratum": {
        "external": "used: the judge-aware BTL fits one discrimination per stratum",
    },
}
"""The analyses that use a factor, and how."""


def factor_uses(frameworks, strata, analyses=ALL_ANALYSES) -> dict:
    """``{factor: {values, analyses: {analysis: what it does with the factor}}}`` for the
    factors the panel has: ``frameworks``, the framework labels (one, ``single``, when the
    table has no framework column: then it is left out); ``strata``, the strata (None: none)."""
    present = {"framework": list(frameworks or ()), "stratum": sorted(set(strata or ()))}
    out = {}
    for factor, values in present.items():
        if len(values) < 2 and not (factor == "stratum" and values):
            continue
        out[factor] = {"values": len(values),
                       "analyses": {a: USED[factor].get(a, POOLED[factor]) for a in analyses}}
    return out


def factor_lines(panel: str, uses: dict, listed) -> list[str]:
    """One log line per factor: the analyses of ``listed`` that use it and those that pool it."""
    lines = []
    for factor, entry in uses.items():
        used = [a for a in listed if a in USED[factor]]
        pooled = [a for a in listed if a in entry["analyses"] and a not in USED[factor]]
        words = POOLED[factor].split(":")[0]
        text = (f"panel {panel}: {factor} has {entry['values']} values; "
                + (f"used by {', '.join(used)}" if used else "used by no analysis")
                + (f"; {words} by {', '.join(pooled)}" if pooled else ""))
        lines.append(text)
    return lines
