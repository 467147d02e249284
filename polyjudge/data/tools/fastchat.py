"""FastChat's MT-Bench judgments (``gen_judgment.py`` writes
``data/<bench>/model_judgment/<judge>_single.jsonl`` and ``<judge>_pair.jsonl``).

Single-answer grading (``*_single.jsonl``): one record per question, turn and model:
``question_id``, ``turn``, ``model`` (the judged system), ``judge`` ([judge model, prompt
name]) and ``score`` (the judge's 1-10 ``[[rating]]``; -1 where FastChat found none, which is a
missing score, as ``show_result.py`` leaves it out of the mean).

Pairwise comparison (``*_pair.jsonl``): ``model_1`` against ``model_2`` in two games, the second
with the answers swapped; ``g1_winner`` and ``g2_winner`` name the winner in model_1/model_2
terms (FastChat maps the swapped game back). The verdict, as ``show_result.py`` counts it:
model_1 wins when both games say so (score 1), model_2 when both say so (0), and anything else
is a tie (0.5: a tie, or the two orders disagreeing). A game whose winner is ``error`` leaves
the record without a score (missing, as show_result.py drops it). The judged system is
``model_1`` when every record has the same ``model_2`` (the baseline of ``--mode
pairwise-baseline``); against several (``pairwise-all``) each pair is one, with ``system:
pair`` ("model_1 vs model_2").

Both: backbone = the judge model (``judge[0]``), task = "<question_id>/turn<turn>" (each turn
is judged on its own), stratum = "turn <turn>", and ``turn`` as a column of its own.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError
from .records import Records, choice, load, refuse_duplicates, require, unscored

TOOL = "FastChat (MT-Bench)"
OPTIONS = ("judgments", "system")
KINDS = ("single", "pair")
SINGLE = ("question_id", "model", "judge", "score", "turn")
PAIR = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge", "turn")
WINNERS = ("model_1", "model_2", "tie", "error")


def read(files, *, table: str = "runs", missing: str = "error", **options) -> pd.DataFrame:
    """The runs of FastChat judgment files (module docstring)."""
    if table != "runs":
        raise InputError(files[0], "FastChat judgments read as a verdict table",
                         "a `judge_runs` panel's `runs`")
    loaded = [load(Path(path), TOOL) for path in files]
    kinds = [_kind(records) for records in loaded]
    wanted = options.get("judgments")
    if wanted is None and len(set(kinds)) > 1:
        single = [r.path.name for r, k in zip(loaded, kinds) if k == "single"][:2]
        pair = [r.path.name for r, k in zip(loaded, kinds) if k == "pair"][:2]
        raise InputError(loaded[0].path.parent, f"single-answer grades ({single}) and pairwise "
                         f"verdicts ({pair}) in one source: the records' `score` and "
                         "`g1_winner` fields are on different scales",
                         "`judgments: single` or `judgments: pair` in the source (one panel "
                         "each)")
    wanted = choice({"judgments": wanted or kinds[0]}, "judgments", KINDS, "single")
    framework = choice(options, "system", ("model_1", "pair"), None) \
        if "system" in options else None
    if wanted not in kinds:
        raise InputError(loaded[0].path, f"`judgments: {wanted}`, but the source holds "
                         f"{kinds[0]} judgments only", f"judgments: {kinds[0]} (or `path` "
                         f"naming the *_{wanted}.jsonl files)")
    frames = [_single(r, missing) if wanted == "single" else _pair(r, missing, framework)
              for r, kind in zip(loaded, kinds) if kind == wanted]
    frame = pd.concat(frames)
    refuse_duplicates(frame, ["task", "backbone", "framework"], loaded[0].path if len(loaded) == 1
                      else f"{len(loaded)} judgment files", "one judgment per question, turn, "
                      "model and judge (gen_judgment.py appends when rerun: keep one record)")
    return frame.reset_index(drop=True)


def _kind(records: Records) -> str:
    first = records.rows[0]
    if "g1_winner" in first:
        return "pair"
    if "score" in first:
        return "single"
    raise InputError(records.path, f"records with neither `score` (single-answer grading) nor "
                     f"`g1_winner` (pairwise); the first has {sorted(first)[:12]}",
                     "MT-Bench judgments as gen_judgment.py writes them (model_judgment/"
                     "<judge>_single.jsonl or _pair.jsonl); a file another tool wrote is read "
                     "with that tool's `format`")


def _judge(records: Records, frame: pd.DataFrame) -> pd.Series:
    judge = frame["judge"].map(lambda j: j[0] if isinstance(j, list) and j else j)
    bad = judge.map(lambda j: not isinstance(j, str) or not j.strip())
    if bad.any():
        raise InputError(records.path, f"{int(bad.sum())} records whose `judge` names no model",
                         "`judge`: [judge model, prompt name], as gen_judgment.py writes it",
                         frame.loc[bad, ["question_id", "judge"]])
    return judge


def _turns(records: Records, frame: pd.DataFrame) -> pd.Series:
    turn = pd.to_numeric(frame["turn"], errors="coerce")
    bad = turn.isna() | (turn != turn.round())
    if bad.any():
        raise InputError(records.path, f"{int(bad.sum())} records without a whole-number "
                         "`turn`", "`turn`: 1 or 2", frame.loc[bad, ["question_id", "turn"]])
    return turn.astype(int)


def _base(records: Records, frame: pd.DataFrame) -> dict:
    turn = _turns(records, frame)
    question = frame["question_id"].astype(str)
    return {"task": (question + "/turn" + turn.astype(str)).to_numpy(),
            "backbone": _judge(records, frame).astype(str).to_numpy(),
            "stratum": ("turn " + turn.astype(str)).to_numpy(), "turn": turn.to_numpy()}


def _single(records: Records, missing: str) -> pd.DataFrame:
    require(records, SINGLE, TOOL, "single-answer judgments")
    frame = records.frame(SINGLE)
    score = pd.to_numeric(frame["score"], errors="coerce")
    text = frame["score"].notna() & score.isna()
    if text.any():
        raise InputError(records.path, f"{int(text.sum())} `score` values are not numbers",
                         "the judge's rating, or -1 where FastChat found none",
                         frame.loc[text, ["question_id", "model", "score"]])
    failed = score.isna() | (score == -1)
    unscored(records, failed, "`score` is -1 (FastChat found no [[rating]] in the judgment; "
             "show_result.py leaves these out)", ["question_id", "model", "turn", "score"],
             missing)
    out = pd.DataFrame({**_base(records, frame), "framework": frame["model"].astype(str),
                        "score": score.where(~failed).to_numpy(float)}, index=frame.index)
    return out[["task", "backbone", "framework", "score", "stratum", "turn"]]


def _pair(records: Records, missing: str, framework: str | None) -> pd.DataFrame:
    require(records, PAIR, TOOL, "pairwise judgments")
    frame = records.frame(PAIR)
    for game in ("g1_winner", "g2_winner"):
        unknown = ~frame[game].isin(WINNERS)
        if unknown.any():
            raise InputError(records.path, f"{int(unknown.sum())} `{game}` values that are not "
                             "a winner", f"one of {list(WINNERS)}",
                             frame.loc[unknown, ["question_id", "model_1", "model_2", game]])
    baselines = frame["model_2"].astype(str).unique()
    if framework is None and len(baselines) > 1:
        raise InputError(records.path, f"the field `model_2` holds {len(baselines)} models "
                         f"({', '.join(sorted(baselines)[:4])}...): no one baseline, so "
                         "model_1 alone does not name what is judged",
                         "`system: pair` in the source (each pair \"model_1 vs model_2\" is "
                         "a judged system), or `system: model_1` (model_1 against whichever "
                         "model_2)")
    failed = frame["g1_winner"].eq("error") | frame["g2_winner"].eq("error")
    unscored(records, failed, "a game's winner is `error` (the judge's verdict could not be "
             "read; show_result.py drops these)",
             ["question_id", "model_1", "model_2", "g1_winner", "g2_winner"], missing)
    agree = frame["g1_winner"].eq(frame["g2_winner"])
    score = pd.Series(0.5, index=frame.index)
    score[agree & frame["g1_winner"].eq("model_1")] = 1.0
    score[agree & frame["g1_winner"].eq("model_2")] = 0.0
    name = frame["model_1"].astype(str)
    if framework == "pair":
        name = name + " vs " + frame["model_2"].astype(str)
    out = pd.DataFrame({**_base(records, frame), "framework": name.to_numpy(),
                        "score": score.where(~failed).to_numpy(float)}, index=frame.index)
    return out[["task", "backbone", "framework", "score", "stratum", "turn"]]
