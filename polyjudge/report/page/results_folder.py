"""Read a results folder into the data of the results page: tables, facts and chart data.

Everything the page shows is read here from the workflow's own output files (docs/outputs.md);
nothing is recomputed. A table is a dict: ``id``, ``title``, ``source`` (the file, relative to the
results folder), ``scope`` (``per language`` or ``pooled over languages``: what the language filter
means for it), ``filters`` (filter name -> the columns it matches), ``columns`` (key, label,
``type`` in text / int / num / p / interval / bool, ``digits``), ``keys`` (the file columns
shown) and ``data`` (one list per row, in the file's order). Labels stay data: they are escaped
by the template and set as text by the page's script.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ...data.jsonfile import json_ready
from ...data.shape import SKIPPED, is_skipped

PER_LANGUAGE, POOLED = "per language", "pooled over languages"
SCORE, VERDICT = "score", "verdict"


def col(key, label=None, type="num", digits=3, low=None, high=None, missing=None) -> dict:
    """A column of a page table; an ``interval`` shows ``[low, high]`` from two file columns;
    ``missing``: what an empty cell means (shown instead of a dash, e.g. "no interval yet")."""
    column = {"key": key, "label": label or key, "type": type, "digits": digits}
    if type == "interval":
        column.update(low=low, high=high)
    if missing:
        column["missing"] = missing
    return column


def _plain(value):
    """A cell for JSON: NaN, infinities and missing as None, numpy scalars as Python values,
    as every JSON file is written (:func:`polyjudge.data.jsonfile.json_ready`); what an empty
    cell means is the column's ``missing`` text or the table's note."""
    return json_ready(value)[0]


def _records(frame: pd.DataFrame, keys) -> list[dict]:
    frame = frame[[k for k in keys if k in frame.columns]].astype(object)
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def table(tid, title, source, frame, columns, scope=POOLED, filters=None, note="") -> dict:
    """A page table from ``frame`` showing ``columns`` (those whose file columns exist)."""
    def present(c):
        return all(k in frame.columns for k in ((c["low"], c["high"]) if c["type"] == "interval"
                                                else (c["key"],)))
    columns = [c for c in columns if present(c)]
    keys = [k for c in columns for k in ((c["low"], c["high"]) if c["type"] == "interval"
                                         else (c["key"],))]
    rows = [[row[k] for k in keys] for row in _records(frame, keys)]
    return {"id": tid, "title": title, "source": source, "scope": scope,
            "filters": filters or {}, "columns": columns, "keys": keys, "data": rows,
            "note": note}


def rows(tab: dict) -> list[dict]:
    """A page table's rows as dicts (the page stores them as lists under ``keys``)."""
    return [dict(zip(tab["keys"], row)) for row in tab["data"]]


class Results:
    """The files of one results folder (``available``: the only paths to read, if given)."""

    def __init__(self, root, available=None):
        self.root = Path(root)
        self.available = None if available is None else {Path(p).resolve() for p in available}

    def path(self, relative: str) -> Path | None:
        path = self.root / relative
        if not path.is_file():
            return None
        if self.available is not None and path.resolve() not in self.available:
            return None
        return path

    # A skipped analysis's result (polyjudge.data.shape.SKIPPED) reads as no result: the page
    # shows why it was skipped (:meth:`skipped`), not a table of it.
    def csv(self, relative: str) -> pd.DataFrame | None:
        path = self.path(relative)
        frame = None if path is None else pd.read_csv(path, keep_default_na=False,
                                                      na_values=[""])
        return None if is_skipped(frame) else frame

    def json(self, relative: str):
        path = self.path(relative)
        found = None if path is None else json.loads(path.read_text(encoding="utf-8"))
        return None if is_skipped(found) else found

    def parquet(self, relative: str) -> pd.DataFrame | None:
        path = self.path(relative)
        frame = None if path is None else pd.read_parquet(path)
        return None if is_skipped(frame) else frame

    def skipped(self, name: str) -> dict[str, str]:
        """``{analysis: why}`` of panel ``name``'s analyses that its shape did not allow, read
        from their skipped results (CSV and JSON files whose header or keys are SKIPPED)."""
        found, header = {}, ",".join(SKIPPED)
        for path in sorted((self.root / name).rglob("*")):
            if path.suffix not in (".csv", ".json") or self.path(
                    str(path.relative_to(self.root))) is None:
                continue
            with path.open(encoding="utf-8") as handle:
                first = handle.readline().strip()
            if path.suffix == ".csv" and first == header:
                frame = pd.read_csv(path, keep_default_na=False)
                found.update(zip(frame["analysis"], frame["skipped"]))
            elif path.suffix == ".json" and first == "{":
                record = json.loads(path.read_text(encoding="utf-8"))
                if is_skipped(record):
                    found[record["analysis"]] = record["skipped"]
        return found

    def panels(self) -> list[str]:
        """Sub-folders holding a panel's outputs, in name order (the simulation excluded): only
        the panels of the run's config where ``panels.json`` (rule page) lists them, so folders
        left by another config are not read."""
        if not self.root.is_dir():
            raise ValueError(f"{self.root}: no such results folder")
        marks = ("cbc/rankings.csv", "judge_ls/accuracy.csv", "collect/usage.csv",
                 "collect/plan.csv")
        listed = self.json("panels.json")
        names = (listed["panels"] if isinstance(listed, dict) and "panels" in listed
                 else [p.name for p in self.root.iterdir() if p.is_dir()])
        return sorted(n for n in names if any(self.path(f"{n}/{m}") for m in marks))


LANG_BB = {"language": ["language"], "backbone": ["backbone"]}

LEADERBOARD_COLUMNS = [
    col("language", type="text"), col("backbone", type="text"),
    col("mean_raw", "raw mean"), col("mean_raw_ci", "raw mean interval", "interval",
                                     low="mean_raw_low", high="mean_raw_high"),
    col("rank_raw", "raw rank", "int"),
    col("rank_raw_set", "raw rank set (simultaneous over the language)", "interval", 0,
        "rank_raw_simultaneous_low", "rank_raw_simultaneous_high"),
    col("rank_raw_ci", "raw rank interval (this backbone alone)", "interval", 0,
        "rank_raw_low", "rank_raw_high"),
    col("rank_ub_raw", "raw group (best rank of the interval alone)", "int"),
    col("mean_cbc", "CBC mean"), col("mean_cbc_ci", "CBC mean interval", "interval",
                                     low="mean_cbc_low", high="mean_cbc_high"),
    col("rank_cbc", "CBC rank", "int"),
    col("rank_cbc_set", "CBC rank set (simultaneous over the language)", "interval", 0,
        "rank_cbc_simultaneous_low", "rank_cbc_simultaneous_high"),
    col("rank_cbc_ci", "CBC rank interval (this backbone alone)", "interval", 0,
        "rank_cbc_low", "rank_cbc_high"),
    col("rank_ub_cbc", "CBC group (best rank of the interval alone)", "int"),
]

BETA_COLUMNS = [
    col("language", type="text"), col("backbone", type="text"), col("beta"), col("se"),
    col("band", "simultaneous band", "interval", low="band_low", high="band_high"),
    col("excludes_zero", "band excludes 0", "bool"),
]

SPREAD = ("replicate spread 2.5% (not a confidence interval)",
          "replicate spread 97.5% (not a confidence interval)")
"""The held-out tables' percentiles of the replicates: two numbers, never a bracket."""
TAU_COLUMNS = [col("method", type="text"), col("mean", "mean tau"),
               col("spread_low", SPREAD[0]), col("spread_high", SPREAD[1]),
               col("full_fit", "full fit"), col("n_replicates", "replicates", "int")]
PAIRED_COLUMNS = [col("method", type="text"),
                  col("mean_difference", "mean difference (reference - method)"),
                  col("spread_low", SPREAD[0]), col("spread_high", SPREAD[1]),
                  col("share_reference_higher", "share reference higher"),
                  col("n_replicates", "replicates", "int")]
PAIRS_COLUMNS = [col("backbone_i", type="text"), col("backbone_j", type="text"),
                 col("witness_a", type="text"), col("witness_b", type="text"),
                 col("d_a"), col("d_b"), col("delta"), col("p_value", "p", "p"),
                 col("q_value", "q (BH)", "p"), col("reversed", type="bool"),
                 col("significant", type="bool")]
DECISION_COLUMNS = [col("method", type="text"), col("language", type="text"),
                    col("accuracy"),
                    col("ci_low", "Clopper-Pearson low (replicates as independent: not a CI)"),
                    col("ci_high", "Clopper-Pearson high"),
                    col("n_correct", "correct", "int"), col("n_decisions", "decisions", "int"),
                    col("regret_mean", "mean regret"),
                    col("regret_ci_low", "regret spread 2.5%"),
                    col("regret_ci_high", "regret spread 97.5%")]
CMI_COLUMNS = [col("convention", type="text"), col("observed", digits=4),
               col("null_mean", "null mean", digits=4), col("debiased", digits=4),
               col("band_low", "null spread 2.5% (not a sampling interval)", digits=4),
               col("band_high", "null spread 97.5%", digits=4),
               col("p_value", "p", "p"), col("n_strata", "strata", "int"),
               col("n_permutations", "permutations", "int"), col("description", type="text")]
JUDGE_FILTERS = {"language": ["condition"], "backbone": ["judge"]}
ACCURACY_COLUMNS = [col("judge", type="text"), col("condition", type="text"),
                    col("subset", type="text"), col("order", type="text"), col("n", type="int"),
                    col("strict_accuracy", "accuracy"),
                    col("strict_ci", "interval", "interval", low="strict_ci_low",
                        high="strict_ci_high"),
                    col("position_a_rate", "share A"), col("tie_rate", "tie rate")]
FLIP_COLUMNS = [col("judge", type="text"), col("reference", type="text"),
                col("target", type="text"), col("subset", type="text"),
                col("n_pairs", "pairs", "int"), col("n_flips", "flips", "int"),
                col("flip_rate", "flip rate"),
                col("flip_ci", "interval", "interval", low="flip_ci_low", high="flip_ci_high"),
                col("mcnemar_p", "McNemar p", "p")]
POSITION_COLUMNS = [col("judge", type="text"), col("condition", type="text"),
                    col("subset", type="text"), col("n", type="int"),
                    col("n_inconsistent", "inconsistent", "int"),
                    col("position_inconsistency", "position inconsistency"),
                    col("position_ci", "interval", "interval", low="position_ci_low",
                        high="position_ci_high"),
                    col("first_seat_rate", "first seat share"),
                    col("first_seat_ci", "first seat interval", "interval",
                        low="first_seat_ci_low", high="first_seat_ci_high"),
                    col("first_seat_cluster_p", "first seat p (clustered)", "p"),
                    col("position_mcnemar_p", "positional McNemar p", "p")]
CLAIM_COLUMNS = [col("id", type="text"), col("folder", "results folder", type="text"),
                 col("section", type="text"), col("quantity", type="text"),
                 col("published", digits=4), col("reproduced", digits=4),
                 col("difference", digits=4), col("tolerance", digits=4),
                 col("status", type="text"), col("output", type="text"),
                 col("note", type="text")]


def _text_columns(frame: pd.DataFrame) -> list[dict]:
    """Columns of a table shown as it is (collections): numbers as numbers, the rest as text."""
    out = []
    for key in frame.columns:
        kind = frame[key].dtype.kind
        out.append(col(key, type="int" if kind in "iu" else "num" if kind == "f" else
                       "bool" if kind == "b" else "text"))
    return out


def _facts(source: str, items: list[tuple[str, object]]) -> dict:
    return {"source": source, "items": [[k, _plain(v)] for k, v in items if v is not None]}
