"""The tool readers on files the tools wrote upstream, checked against the numbers the tools
publish. The files are not shipped (docs/tools/ says where they are); the environment variable
POLYJUDGE_TOOL_FILES names a folder that holds them in this layout, each file checked against
its SHA-256 first:

    alpaca_eval/results/<model>/alpaca_eval_gpt4/annotations.json   tatsu-lab/alpaca_eval
    alpaca_eval/alpaca_eval_gpt4_leaderboard.csv                     (src/alpaca_eval/leaderboards/
                                                                     data_AlpacaEval/), commit
                                                                     cd543a149df8, Apache-2.0
    fastchat/model_judgment/gpt-4_single.jsonl, gpt-4_pair.jsonl     Stefanstud/FastChat
                                                                     (fastchat/llm_judge/data/
                                                                     mt_bench/), commit
                                                                     1f5a7b81d3b2, Apache-2.0
"""
import hashlib
import os
from pathlib import Path

import pandas as pd
import pytest

import polyjudge
from polyjudge.data.errors import InputError

ROOT = Path(os.environ.get("POLYJUDGE_TOOL_FILES") or "/nonexistent")
pytestmark = pytest.mark.skipif(not ROOT.is_dir(), reason="POLYJUDGE_TOOL_FILES names no folder")
SHA256 = {
    "alpaca_eval/alpaca_eval_gpt4_leaderboard.csv":
        "9a86bb8cd16967ab94796ca6e52b63a14ceb59c953194ec064edfe690fb82ed6",
    "alpaca_eval/results/alpaca-7b/alpaca_eval_gpt4/annotations.json":
        "d44ea50f1a81f6ae6a95e8ac1dd08b7eca82cc0a9058a2923b1c70cec1e9eaa5",
    "alpaca_eval/results/phi-2/alpaca_eval_gpt4/annotations.json":
        "4eb708c0be289460cf66f2e7f8058c5dd481b19fa995ede24495580153086664",
    "alpaca_eval/results/text_davinci_001/alpaca_eval_gpt4/annotations.json":
        "09d486ce69568c52229e2123c9e3a0d7c485d64c709d86505297301289c8880b",
    "fastchat/model_judgment/gpt-4_pair.jsonl":
        "df0b1e51eace4167681733cdc713575ae9c05bdf082cde42f6b10a4a8ebcd482",
    "fastchat/model_judgment/gpt-4_single.jsonl":
        "25ca4be41d6298e733b1364000d0ac7739f52adafe75eab3ceec3580a5d1ca8a",
}
# FastChat's show_result.py on these files (fschat 0.2.36): single, the "Average" table and the
# turns'; pairwise (baseline phi-3-dpo), win_rate_adjusted
SHOW_RESULT = {"phi-3-dpo": 8.2, "turn 1": 8.3625, "turn 2": 8.0375, "phi-3": 0.486301}


def test_the_upstream_files_are_the_ones_checked():
    for name, digest in SHA256.items():
        assert hashlib.sha256((ROOT / name).read_bytes()).hexdigest() == digest, name


def test_alpaca_eval_mean_is_the_published_win_rate():
    """Three models of AlpacaEval's leaderboard (alpaca_eval_gpt4 annotator), read as one source:
    each model's mean score x 100 is its published win_rate; phi-2's 6 null preferences and
    text_davinci_001's one are counted as missing, the 0 (old tie) preferences as ties."""
    source = {"path": "alpaca_eval/results/*/alpaca_eval_gpt4/annotations.json",
              "format": "alpaca_eval", "constants": {"language": "en"}}
    with pytest.raises(InputError) as caught:
        polyjudge.read_runs(source, base_dir=ROOT)
    assert "phi-2/alpaca_eval_gpt4/annotations.json: 6 of 805 records" in str(caught.value)
    runs = polyjudge.read_runs(source, base_dir=ROOT, missing="omit")
    published = pd.read_csv(ROOT / "alpaca_eval/alpaca_eval_gpt4_leaderboard.csv", index_col=0)
    counts = runs.groupby("framework").size()
    assert counts.to_dict() == {"alpaca-7b": 805, "phi-2": 799, "text_davinci_001": 804}
    for model, mean in runs.groupby("framework")["score"].mean().items():
        assert mean * 100 == pytest.approx(published.loc[model, "win_rate"], abs=1e-9), model
        assert counts[model] == published.loc[model, "n_total"]
    assert set(runs["backbone"]) == {"alpaca_eval_gpt4"} and runs["task"].nunique() == 805
    metrics = pytest.importorskip("alpaca_eval.metrics")
    for model, mean in runs.groupby("framework")["score"].mean().items():
        path = ROOT / f"alpaca_eval/results/{model}/alpaca_eval_gpt4/annotations.json"
        assert mean * 100 == pytest.approx(metrics.get_winrate(pd.read_json(path))["win_rate"],
                                           abs=1e-9)


def test_fastchat_means_are_show_result_numbers():
    base = {"format": "fastchat", "constants": {"language": "en"}}
    single = polyjudge.read_runs({**base, "path": "fastchat/model_judgment/gpt-4_single.jsonl"},
                                 base_dir=ROOT)
    assert len(single) == 160 and set(single["stratum"]) == {"turn 1", "turn 2"}
    assert single.groupby("framework")["score"].mean()["phi-3-dpo"] == \
        pytest.approx(SHOW_RESULT["phi-3-dpo"], abs=1e-9)
    for turn, mean in single.groupby("stratum")["score"].mean().items():
        assert mean == pytest.approx(SHOW_RESULT[turn], abs=1e-9)
    pair = polyjudge.read_runs({**base, "path": "fastchat/model_judgment/gpt-4_pair.jsonl"},
                               base_dir=ROOT, missing="omit")
    assert len(pair) == 73  # 75 records, 2 with a game's winner `error`
    assert pair.groupby("framework")["score"].mean()["phi-3"] == \
        pytest.approx(SHOW_RESULT["phi-3"], abs=1e-6)
