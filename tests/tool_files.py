"""Files in the formats AlpacaEval, FastChat (MT-Bench) and Arena-Hard-Auto write, for the tool
reader tests: records with every field of the upstream files (tests/test_tool_files.py reads
the upstream files themselves), texts shortened, and known values planted."""
from __future__ import annotations

import json
from pathlib import Path

ALPACA_PREFERENCES = {"model-a": [2, 1, 1.5, 1.83, None, 0],  # None: no preference; 0: old tie
                      "model-b": [1, 1, 2, 2, 1.25, 1.5]}
INSTRUCTIONS = [f"Instruction {n}: say something useful." for n in range(6)]


def alpaca_annotations(folder: Path, annotator="weighted_alpaca_eval_gpt4_turbo",
                       preferences=None, results="results") -> list[Path]:
    """``results/<model>/<annotator>/annotations.json`` as ``alpaca_eval evaluate`` writes it
    (a JSON array, indent 2), one per model."""
    paths = []
    for model, values in (preferences or ALPACA_PREFERENCES).items():
        records = [{"instruction": text, "output_1": f"reference answer {n}",
                    "generator_1": "gpt4_1106_preview", "dataset": "helpful_base" if n % 2
                    else "koala", "output_2": f"{model} answer {n}", "generator_2": model,
                    "annotator": annotator, "preference": value,
                    "price_per_example": 0.0135, "time_per_example": 1.52,
                    "raw_completion": {"logprobs": None}}
                   for n, (text, value) in enumerate(zip(INSTRUCTIONS, values))]
        path = folder / results / model / annotator / "annotations.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records, indent=2), encoding="utf-8")
        (path.parent / "leaderboard.csv").write_text(",win_rate\n", encoding="utf-8")
        paths.append(path)
    return paths


# question_id, turn, model -> score (-1: FastChat found no [[rating]])
SINGLE = {(81, 1, "vicuna-13b"): 7, (81, 2, "vicuna-13b"): 6, (82, 1, "vicuna-13b"): 9,
          (82, 2, "vicuna-13b"): -1, (81, 1, "llama-13b"): 3, (81, 2, "llama-13b"): 2,
          (82, 1, "llama-13b"): 4, (82, 2, "llama-13b"): 1}
# question_id, turn, model_1, model_2 -> g1_winner, g2_winner
PAIR = {(81, 1, "vicuna-13b", "gpt-3.5-turbo"): ("model_1", "model_1"),
        (81, 2, "vicuna-13b", "gpt-3.5-turbo"): ("model_2", "model_2"),
        (82, 1, "vicuna-13b", "gpt-3.5-turbo"): ("model_1", "model_2"),
        (82, 2, "vicuna-13b", "gpt-3.5-turbo"): ("tie", "tie"),
        (81, 1, "llama-13b", "gpt-3.5-turbo"): ("model_2", "model_2"),
        (81, 2, "llama-13b", "gpt-3.5-turbo"): ("model_2", "error"),
        (82, 1, "llama-13b", "gpt-3.5-turbo"): ("model_2", "model_2"),
        (82, 2, "llama-13b", "gpt-3.5-turbo"): ("tie", "model_2")}


def write_jsonl(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def fastchat_single(folder: Path, judge="gpt-4", scores=None) -> Path:
    """``model_judgment/<judge>_single.jsonl`` as gen_judgment.py writes it."""
    records = [{"question_id": q, "model": model,
                "judge": [judge, "single-v1" if turn == 1 else "single-v1-multi-turn"],
                "user_prompt": "[Instruction] ...", "judgment": f"... Rating: [[{score}]]",
                "score": score, "turn": turn, "tstamp": 1687221890.1}
               for (q, turn, model), score in (scores or SINGLE).items()]
    return write_jsonl(folder / "model_judgment" / f"{judge}_single.jsonl", records)


def fastchat_pair(folder: Path, judge="gpt-4", games=None) -> Path:
    """``model_judgment/<judge>_pair.jsonl`` as gen_judgment.py writes it."""
    records = [{"question_id": q, "model_1": m1, "model_2": m2, "g1_winner": g1,
                "g2_winner": g2, "judge": [judge, "pair-v2" if turn == 1
                                           else "pair-v2-multi-turn"],
                "g1_user_prompt": "...", "g1_judgment": "... [[A]]", "g2_user_prompt": "...",
                "g2_judgment": "... [[B]]", "turn": turn, "tstamp": 1687222070.2}
               for (q, turn, m1, m2), (g1, g2) in (games or PAIR).items()]
    return write_jsonl(folder / "model_judgment" / f"{judge}_pair.jsonl", records)


# uid, model -> (game 1 label: the baseline is A; game 2 label: the model is A)
ARENA = {("q1", "model-x"): ("B>A", "A>>B"), ("q2", "model-x"): ("A=B", "B>A"),
         ("q3", "model-x"): ("A>>B", None), ("q1", "model-y"): ("A>B", "B>A"),
         ("q2", "model-y"): ("B>>A", "A>B"), ("q3", "model-y"): ("A=B", "A=B")}
ARENA_EXPECTED = {("q1", "model-x"): 1.5, ("q2", "model-x"): -0.5, ("q1", "model-y"): -1.0,
                  ("q2", "model-y"): 1.5, ("q3", "model-y"): 0.0}


def arena_judgments(folder: Path, judge="gpt-4.1", labels=None, version=2) -> list[Path]:
    """``model_judgment/<judge>/<model>.jsonl``: v2 records (uid, category, judge, model,
    baseline, games) or v0.1 records (question_id, model, judge, games)."""
    paths, labels = [], labels or ARENA
    for model in sorted({m for _, m in labels}):
        records = []
        for (uid, m), pair in labels.items():
            if m != model:
                continue
            games = [{"score": label, "judgment": {"answer": f"... [[{label}]]"},
                      "prompt": "..."} for label in pair]
            record = ({"uid": uid, "category": "hard_prompt", "judge": judge, "model": model,
                       "baseline": "o3-mini-2025-01-31", "games": games} if version == 2 else
                      {"question_id": uid, "model": model, "judge": judge, "games": games})
            records.append(record)
        paths.append(write_jsonl(folder / "model_judgment" / judge / f"{model}.jsonl", records))
    return paths
