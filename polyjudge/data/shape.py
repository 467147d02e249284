"""What a panel's shape must allow before CBC can run, said with the fixes that work.

CBC's interaction beta needs at least two languages and two backbones, and every language x
backbone cell observed on some task: no estimator and no ``missing`` setting fills a cell
without any task. The CMI test and the three-way diagnostic need repeated runs of a cell. These
checks name the labels at fault and only fixes that would work.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .column_names import user_rows
from .errors import InputError, say
from .panel import Panel

# Analyses that compare the repeated runs of a task x language x backbone cell (a table without
# a framework column has one run per cell): what each is and why it needs them, in messages.
REPEATED_RUNS = {"information": ("the CMI test", "compares a cell's repeated runs across "
                                                 "languages"),
                 "diagnostics": ("the three-way interaction test", "needs the spread of a "
                                                                   "cell's repeated runs")}


def empty_pairs(observed: np.ndarray, languages, backbones) -> tuple[list[tuple], str]:
    """Language x backbone cells without any task (``observed[l, b]`` False), by their labels,
    and the fixes that work: no estimator fills such a cell (beta is not identified there), so
    only removing the languages or the backbones they are in (where at least two of each are
    left) or judging the cells does."""
    empty = ~np.asarray(observed, dtype=bool)
    cells = [(languages[l], backbones[b]) for l, b in zip(*np.nonzero(empty))]
    bad_languages = [languages[l] for l in np.flatnonzero(empty.any(axis=1))]
    bad_backbones = [backbones[b] for b in np.flatnonzero(empty.any(axis=0))]
    fixes = []
    if len(languages) - len(bad_languages) >= 2:
        fixes.append(f"remove the runs of language(s) {bad_languages}")
    if len(backbones) - len(bad_backbones) >= 2:
        fixes.append(f"remove the runs of backbone(s) {bad_backbones}")
    fixes.append("have those cells judged")
    return cells, ", or ".join(fixes)


def named_pairs(cells: list[tuple], limit: int = 6) -> str:
    """``(en, gpt), (de, gpt), ...``: the first ``limit`` cells by their labels."""
    return ", ".join(f"({l}, {b})" for l, b in cells[:limit]) + (
        ", ..." if len(cells) > limit else "")


def unbalanced_error(source, cells: pd.DataFrame, size: int,
                     mapping: dict | None = None) -> InputError:
    """Task x language x backbone ``cells`` without runs (of ``size``), shown under the user's
    column names (``mapping``), with the setting that estimates beta without them."""
    return InputError(source, f"unbalanced panel: {len(cells)} of {size} task x language x "
                      "backbone cells have no runs",
                      f"every task judged in every language by every backbone, or "
                      f"{say('missing omit')} to estimate beta on an incomplete panel "
                      f"({say('estimator')}; least squares by default)",
                      user_rows(cells.set_axis(range(1, len(cells) + 1)), mapping),
                      rows_caption="missing cells")


def empty_pairs_error(source, observed: np.ndarray, languages, backbones) -> InputError:
    cells, fix = empty_pairs(observed, languages, backbones)
    return InputError(source, f"{len(cells)} language x backbone cell(s) have no run of any "
                      f"task: {named_pairs(cells)}; beta is not identified there, whatever the "
                      "estimator or `missing` setting", fix)


def require_pairs(panel: Panel, source) -> None:
    """Stop, naming them and the fixes that work, if language x backbone cells have no task."""
    observed = np.isfinite(panel.values).any(axis=0)
    if not observed.all():
        raise empty_pairs_error(source, observed, panel.languages, panel.backbones)


def require_two_way(panel: Panel, source, what: str = "CBC") -> None:
    """Stop, saying what can still be run, unless the panel has two languages and two backbones.

    beta is what is left of the language x backbone table of means after each language's and
    each backbone's mean is removed: with one language (or one backbone) there is nothing left,
    and the radius and the rankings within languages have no meaning."""
    k, m = len(panel.languages), len(panel.backbones)
    if k >= 2 and m >= 2:
        return
    def count(n, axis, labels):
        named = ", ".join(labels[:3]) + (", ..." if n > 3 else "")
        return f"{n} {axis}{'' if n == 1 else 's'} ({named})"
    raise InputError(source, f"has {count(k, 'language', panel.languages)} and "
                     f"{count(m, 'backbone', panel.backbones)}: {what} needs at least 2 "
                     "languages and at least 2 backbones (the language x backbone interaction "
                     "is zero by definition on a single language or backbone)",
                     "runs of the same tasks in at least 2 languages, each judged by at least "
                     "2 backbones. What still runs on this panel: the raw mean score of each "
                     "backbone in each language (Python: polyjudge.prepare_runs(runs) gives the "
                     "task-level panel; workflow: snakemake --cores 2 "
                     "results/<panel>/cell_means.csv)")


def one_run_per_cell_error(source, wanted, panel: str | None = None,
                           analyses=None) -> InputError:
    """A table with one run per task x language x backbone cell, given to analyses ``wanted``
    (names of :data:`REPEATED_RUNS`) that need repeated runs. ``panel`` / ``analyses``: the
    workflow's panel and its `analyses` list, which the fix shows without them; without a
    panel the message is the Python API's."""
    column = say("framework column", "<column>")
    runs = (f"at least 2 runs of every task x language x backbone cell (repeated runs: "
            f"frameworks, seeds or epochs), told apart by a column named as the framework "
            f"({column})")
    if panel is None:  # the Python API: one function asked, the others run on the table
        return InputError(source, "one run per task x language x backbone cell: "
                          + " ".join(REPEATED_RUNS[wanted[0]]),
                          f"{runs}; on one run per cell the other analyses run "
                          "(polyjudge.calibrate, polyjudge.heldout, polyjudge.reversal)")
    named = " and ".join(f"'{name}' ({REPEATED_RUNS[name][0]}, which {REPEATED_RUNS[name][1]})"
                         for name in wanted)
    kept = ", ".join(name for name in analyses if name not in wanted)
    return InputError(source, f"one run per task x language x backbone cell, and panel "
                      f"'{panel}' lists {'analyses' if len(wanted) > 1 else 'analysis'} {named}",
                      f"{runs}; or, to run the others on one run per cell, drop "
                      f"{' and '.join(repr(name) for name in wanted)} from the panel's "
                      f"`analyses` (analyses: [{kept}])")


def require_repeated_runs(n_runs, source, panel: str, analyses) -> None:
    """Stop, naming ``source`` (the user's table), the panel and the fixes, if the panel lists
    an analysis of :data:`REPEATED_RUNS` and no cell has more than one run (``n_runs``: runs
    per task x language x backbone cell)."""
    wanted = [name for name in REPEATED_RUNS if name in analyses]
    if wanted and not (np.asarray(n_runs) > 1).any():
        raise one_run_per_cell_error(source, wanted, panel, analyses)


# --- which analyses a panel's shape allows (the workflow skips the others) ---------------------
# Found only when the runs are read: a panel's config does not say how many judges, languages,
# tasks or repeated runs its table holds. ingest writes the verdict for every analysis into
# results/{panel}/shape.json; an analysis that cannot run writes a "skipped" result naming why.
TWO_WAY = ("cbc", "bands", "heldout", "decisions", "reversal", "task_count", "backbone_subsets",
           "requirement_type", "lolo", "missing", "diagnostics", "external")
"""Analyses of CBC's interaction beta (or compared with it): two languages and two backbones."""
ALL_ANALYSES = (*TWO_WAY[:5], "information", *TWO_WAY[5:], "parse_failures")
"""Every analysis of a score panel, in the order of the config schema."""
MIN_TASKS = {"task_count": 3}
"""Fewest tasks an analysis needs (2 elsewhere: a task bootstrap, a split into halves)."""
SKIPPED = ("analysis", "skipped")
"""The columns (CSV, Parquet) or keys (JSON) of a skipped analysis's results: its name and why
(written by polyjudge.scripting.write_skipped)."""
STILL_RUNS = ("the raw mean score of each backbone in each language (results/{panel}/"
              "cell_means.csv)")


def _labels(n, axis, labels) -> str:
    named = ", ".join(map(str, labels[:3])) + (", ..." if n > 3 else "")
    return f"{n} {axis}{'' if n == 1 else 's'} ({named})"


def short_repeats(n_runs: np.ndarray, tasks, languages, backbones) -> str | None:
    """Why the cells' repeated runs do not allow a test that compares them (None if they do):
    every task x language x backbone cell needs the same number of runs, at least 2, as the
    CMI test's strata and the three-way test's frameworks are read as complete blocks."""
    n_runs = np.asarray(n_runs)
    most = int(n_runs.max(initial=0))
    if most < 2:
        return ("needs repeated runs (frameworks, seeds or epochs) of every task x language x "
                "backbone cell; this panel has one run per cell. If the run table has repeated "
                "runs, tell them apart by a column named as the framework (columns: "
                "{framework: <column>}); else drop the analysis from the panel's `analyses`")
    short = np.argwhere(n_runs < most)
    if not len(short):
        return None
    cells = ", ".join(f"({tasks[t]}, {languages[l]}, {backbones[b]}) with {n_runs[t, l, b]}"
                      for t, l, b in short[:4]) + (", ..." if len(short) > 4 else "")
    return (f"needs the same number of repeated runs in every task x language x backbone "
            f"cell: {len(short)} cell(s) have fewer than the others' {most}: {cells}; have "
            f"those runs judged, or remove the task(s) from the run table")


def analysis_reasons(n_runs: np.ndarray, tasks, languages, backbones,
                     analyses=ALL_ANALYSES) -> dict[str, str | None]:
    """``{analysis: why it cannot run on this panel, or None}`` for ``analyses``, from the
    panel's shape alone: its ``tasks``, ``languages`` and ``backbones`` and ``n_runs[t, l, b]``,
    the runs of each cell (0: none). What a panel's kind or config rules out is said at start-up
    (polyjudge.workflow_config.analysis_problem), before any run is read."""
    n, k, m = len(tasks), len(languages), len(backbones)
    two_way = None
    if k < 2 or m < 2:
        two_way = (f"needs at least 2 languages and 2 backbones (the language x backbone "
                   f"interaction is zero by definition on one); this panel has "
                   f"{_labels(k, 'language', languages)} and {_labels(m, 'backbone', backbones)}")
    repeats = short_repeats(n_runs, tasks, languages, backbones)
    reasons = {}
    for name in analyses:
        reason = None
        if name in TWO_WAY:
            reason = two_way
            least = MIN_TASKS.get(name, 2)
            if reason is None and n < least:
                reason = f"needs at least {least} tasks; this panel has {n}"
            if reason is None and name == "lolo" and k < 3:
                reason = (f"needs at least 3 languages (2 left when one is held out); this "
                          f"panel has {_labels(k, 'language', languages)}")
        if name == "information" and k < 2:
            reason = (f"needs at least 2 languages to compare; this panel has "
                      f"{_labels(k, 'language', languages)}")
        if reason is None and name in REPEATED_RUNS:
            reason = repeats
        reasons[name] = reason
    return reasons


def skipped_summary(panel: str, reasons: dict[str, str | None], source=None) -> list[str]:
    """The lines a log shows for a panel's ``reasons`` (:func:`analysis_reasons` of its listed
    analyses): one per analysis skipped, naming panel (and the run table ``source``) and
    reason, then what still runs."""
    read = f" ({source})" if source else ""
    skipped = [f"panel '{panel}'{read}: analysis '{name}' skipped: {reason}"
               for name, reason in reasons.items() if reason]
    if not skipped:
        return []
    runs = [name for name, reason in reasons.items() if not reason]
    return skipped + [f"panel '{panel}': still runs: " + ", ".join(
        runs + [STILL_RUNS.format(panel=panel)])]


def is_skipped(table) -> bool:
    """Is ``table`` (a DataFrame or a JSON object) a skipped analysis's result?"""
    keys = table.keys() if isinstance(table, dict) else getattr(table, "columns", ())
    return list(keys) == list(SKIPPED)


# --- items (tasks) with a missing score, for analyses that need complete items ----------------
def incomplete_items(panel: Panel) -> list[tuple[str, list[tuple]]]:
    """Each task without a score in some language x backbone cell, with those cells."""
    missing = ~np.isfinite(panel.values)
    return [(panel.tasks[t], [(panel.languages[l], panel.backbones[b])
                              for l, b in zip(*np.nonzero(missing[t]))])
            for t in np.flatnonzero(missing.any(axis=(1, 2)))]


def complete_items(panel: Panel, option: str, what: str, source,
                   name: str) -> tuple[Panel, list[str]]:
    """``panel`` for an analysis (``what``) that needs every item scored in every cell, and the
    items left out: with the panel's ``incomplete_items: drop``, those missing a score (logged
    by the caller); with ``error``, an incomplete panel stops here, naming the items, their
    cells and the setting. ``source``: the file named; ``name``: the panel."""
    found = incomplete_items(panel)
    if not found:
        return panel, []
    shown = "; ".join(f"{task} in {named_pairs(cells, 3)}" for task, cells in found[:5]) + (
        "; ..." if len(found) > 5 else "")
    if option != "drop":
        raise InputError(source, f"{what} needs every item (task) scored in every language x "
                         f"backbone cell; {len(found)} item(s) miss a score: {shown}",
                         f"scores for those items, or `incomplete_items: drop` in panel "
                         f"'{name}' to leave them out of {what} (logged, and said on the "
                         "results page)")
    dropped = [task for task, _ in found]
    kept = np.flatnonzero(~np.isin(np.asarray(panel.tasks, dtype=object),
                                   np.asarray(dropped, dtype=object)))
    if len(kept) < 2:
        raise InputError(source, f"{what}: {len(found)} of {len(panel.tasks)} items miss a "
                         f"score ({shown}); `incomplete_items: drop` would leave {len(kept)}",
                         "at least 2 items scored in every language x backbone cell")
    return panel.subset(tasks=kept), dropped
