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
    lm_eval/gpt-4o/samples_kobest_<task>_<time>.jsonl,              allenlee-37/KT-lm-evaluation-
    lm_eval/gpt-4o/results_<time>.json (five KoBEST tasks, one run  harness (a fork of EleutherAI/
    each, gpt-4o, --limit 10 --log_samples)                         lm-evaluation-harness;
                                                                     deprecated/), commit
                                                                     5e2067fe4bf5, MIT
    helm/runs/v3/harm_bench:model=<model>/run_spec.json,            stanford-crfm/helm, branch
    per_instance_stats.json, scenario_state.json, stats.json        farzaan/safetytesting
    (models meta_llama-3-70b, openai_gpt-4o-2024-05-13,             (benchmark_output_TRUE_latest/
    google_gemini-1.5-pro-001)                                      runs/v3/), commit
                                                                     865aaae70bbd, Apache-2.0
    promptfoo/sample-export.json                                    promptfoo/promptfoo
                                                                     (test/__fixtures__/), commit
                                                                     15e7d51283ff, MIT
"""
import hashlib
import json
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
    "helm/runs/v3/harm_bench:model=google_gemini-1.5-pro-001/per_instance_stats.json":
        "c5e0afcecfaa1696d1b5ea608eaf69808e68c39bdb947efa71abb37fe7ef6f40",
    "helm/runs/v3/harm_bench:model=google_gemini-1.5-pro-001/run_spec.json":
        "7c3003c76be478a6f0eb6a48aa2747369c30aa8e4173b8915dd22957e00dd85e",
    "helm/runs/v3/harm_bench:model=google_gemini-1.5-pro-001/scenario_state.json":
        "db7c27aebb856fb80ccc3ad40a7a8f0fcd690f3b356d29d4434ac959c14f7c34",
    "helm/runs/v3/harm_bench:model=google_gemini-1.5-pro-001/stats.json":
        "06f3873d7aa7ed0925da9be21c9168d54e5ad1d3b1eb0c2c6f57c50c3424df3f",
    "helm/runs/v3/harm_bench:model=meta_llama-3-70b/per_instance_stats.json":
        "a6e3108899b90c880c2a7e6e8b79690acf5e28e713facae786b329deca5297de",
    "helm/runs/v3/harm_bench:model=meta_llama-3-70b/run_spec.json":
        "6b8581d3083237e149394b3485415e383b54d8daf85467c69c4140d372f4283c",
    "helm/runs/v3/harm_bench:model=meta_llama-3-70b/scenario_state.json":
        "3153e75724f2441df7e5a1858e4c219d21af59b61632b472091ea82c431b9e1e",
    "helm/runs/v3/harm_bench:model=meta_llama-3-70b/stats.json":
        "46a3ed900830f658aef44d26d38244ceac17c5f99cf0ab1d701f29d245793969",
    "helm/runs/v3/harm_bench:model=openai_gpt-4o-2024-05-13/per_instance_stats.json":
        "604d8db85a1dd2cece2ee9ec00f864d7094d500fd5146dc3c6c27371896437aa",
    "helm/runs/v3/harm_bench:model=openai_gpt-4o-2024-05-13/run_spec.json":
        "92fd6e9d97d93dc0c4824ae7cebdf83b0bdc76146faed62ebd8fbf5530894f94",
    "helm/runs/v3/harm_bench:model=openai_gpt-4o-2024-05-13/scenario_state.json":
        "d5c538e59e06b02eefb4d8953f08296070791a54bc3de1dec2592c1f4630ac16",
    "helm/runs/v3/harm_bench:model=openai_gpt-4o-2024-05-13/stats.json":
        "4787d201a906ed372157d9b918f0f3656c6bf98b28363236070fba2abde7a719",
    "lm_eval/gpt-4o/results_2024-11-28T15-40-18.523102.json":
        "95298d63768094cc6a8e1a509488f2e297b6cdc0ce144d142da087722a6c783c",
    "lm_eval/gpt-4o/results_2024-11-28T16-23-38.220589.json":
        "756150f0181eb2d81e2b98a85e2b8647109547bcceffbedd75b21b9bd99e9dc2",
    "lm_eval/gpt-4o/results_2024-11-28T16-50-24.707541.json":
        "cb44564cd3cfc26a7fd6cabe9e29ca20c40e432ed75b6452a41e660fbdf76d45",
    "lm_eval/gpt-4o/results_2024-11-28T16-51-31.943745.json":
        "ad3a483b509d203ccf522ad2849089f238dcec032b74e95c2bfa4596a46b3d68",
    "lm_eval/gpt-4o/results_2024-11-28T16-58-18.299702.json":
        "fad3ce8b66dfed70302a74403b73158d6330cc4a36cbe005c3d0baba6b1b27bb",
    "lm_eval/gpt-4o/samples_kobest_boolq_2024-11-28T15-40-18.523102.jsonl":
        "a3442c75af4c62c581c0adbef6d900ba751600a5ba44a0d13b323cdda95f0d9f",
    "lm_eval/gpt-4o/samples_kobest_copa_2024-11-28T16-23-38.220589.jsonl":
        "a13dfb29f60dfcace4485db4cccdd53161734e41376594872589007c22bd78c4",
    "lm_eval/gpt-4o/samples_kobest_hellaswag_2024-11-28T16-50-24.707541.jsonl":
        "13bb976fb1d116bf21cc1300a8f7b51d69e198e154fd8e1a963d962f0ed4dfc5",
    "lm_eval/gpt-4o/samples_kobest_sentineg_2024-11-28T16-51-31.943745.jsonl":
        "0d50f120d070097e6cda1b68c7d075dcb082277eb80d62b0e51243df4ac7196a",
    "lm_eval/gpt-4o/samples_kobest_wic_2024-11-28T16-58-18.299702.jsonl":
        "ca1763f627da727eaaedbd21d5c346e6a64ead0a5613835e494f6abf05d3d957",
    "promptfoo/sample-export.json":
        "60f4c9f191453cbc3ddaa95474828c48734d34f31eaee9e110f27970fe22a9e7",
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


# --- lm-evaluation-harness, HELM, promptfoo: the numbers each tool wrote beside its files ----

LM_EVAL = {"path": "lm_eval/gpt-4o", "format": "lm_eval", "constants": {"language": "ko"}}
# exact_match of each task, as lm-eval wrote it in the run's results_<time>.json
LM_EVAL_RESULTS = {"kobest_boolq": 0.4, "kobest_copa": 1.0, "kobest_hellaswag": 0.9,
                   "kobest_sentineg": 1.0, "kobest_wic": 0.6}


def lm_eval_results() -> dict:
    """task -> (metric key, value) as lm-eval wrote them in each results_<time>.json."""
    found = {}
    for path in sorted((ROOT / "lm_eval" / "gpt-4o").glob("results_*.json")):
        for task, values in json.loads(path.read_text())["results"].items():
            key = next(k for k in values if "," in k and "_stderr" not in k)
            found[task] = (key, values[key])
    return found


def test_lm_eval_samples_give_the_means_lm_eval_reported():
    runs = polyjudge.read_runs(LM_EVAL, base_dir=ROOT)
    assert len(runs) == 50 and set(runs["framework"]) == {"gpt-4o"}
    assert set(runs["backbone"]) == {"exact_match"} and set(runs["language"]) == {"ko"}
    reported = lm_eval_results()
    assert sorted(runs["stratum"].unique()) == sorted(reported) == sorted(LM_EVAL_RESULTS)
    for task, (key, value) in reported.items():
        scores = runs.loc[runs["stratum"] == task, "score"]
        assert len(scores) == 10 and key.startswith("exact_match,")
        assert scores.mean() == pytest.approx(value) == pytest.approx(LM_EVAL_RESULTS[task])
    assert runs["task"].str.match(r"kobest_\w+:\d$").all()
    utils = pytest.importorskip("lm_eval.utils")
    from lm_eval.api.registry import get_aggregation
    names = sorted(str(p) for p in (ROOT / "lm_eval" / "gpt-4o").iterdir())
    for path in utils.get_sample_results_filenames(names):
        task = utils.get_file_task_name(Path(path).name)
        scores = runs.loc[runs["stratum"] == task, "score"].tolist()
        assert get_aggregation("mean")(scores) == pytest.approx(reported[task][1]), task


HELM = {"path": "helm/runs/v3", "format": "helm", "constants": {"language": "en"}}


def helm_stats() -> dict:
    """(model, metric) -> mean, from HELM's own stats.json of each run (unperturbed)."""
    found = {}
    for folder in sorted((ROOT / "helm" / "runs" / "v3").iterdir()):
        model = json.loads((folder / "run_spec.json").read_text())["adapter_spec"]["model"]
        for stat in json.loads((folder / "stats.json").read_text()):
            if "perturbation" not in stat["name"] and "mean" in stat:
                found[model, stat["name"]["name"]] = stat["mean"]
    return found


def test_helm_runs_give_each_judges_mean_helm_reported():
    runs = polyjudge.read_runs(HELM, base_dir=ROOT)
    assert len(runs) == 3 * 2 * 2 and set(runs["backbone"]) == {"gpt", "claude"}
    assert set(runs["task"]) == {"pacemaker_tampering_methods",
                                 "cyanide_home_making_sodium_hydroxide"}
    stats = helm_stats()
    means = runs.groupby(["framework", "backbone"])["score"].mean()
    assert len(means) == 6
    for (model, judge), mean in means.items():
        assert mean == pytest.approx(stats[model, f"harm_bench_{judge}_score"])
    assert means["meta/llama-3-70b", "gpt"] == 0.25  # the judges disagree on one answer
    assert means["meta/llama-3-70b", "claude"] == 0.0
    combined = polyjudge.read_runs({**HELM, "metric": "harm_bench_score"}, base_dir=ROOT)
    assert set(combined["backbone"]) == {"harm_bench_score"}
    for model, mean in combined.groupby("framework")["score"].mean().items():
        assert mean == pytest.approx(stats[model, "harm_bench_score"])


PROMPTFOO = {"path": "promptfoo/sample-export.json", "format": "promptfoo",
             "constants": {"language": "en"}}


def test_promptfoo_llm_rubric_scores_and_the_totals_promptfoo_reported():
    output = json.loads((ROOT / "promptfoo" / "sample-export.json").read_text())
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=ROOT)
    assert len(runs) == 4 and set(runs["task"]) == {"0", "1"}
    assert set(runs["framework"]) == {"openai:gpt-5", "openai:gpt-5-mini"}
    assert set(runs["backbone"]) == {"llm-rubric"}  # the grader is not recorded
    rubric = [c for r in output["results"]["results"]
              for c in r["gradingResult"]["componentResults"]
              if c["assertion"]["type"] == "llm-rubric"]
    assert runs["score"].tolist() == [float(c["score"]) for c in rubric] == [1.0] * 4
    overall = polyjudge.read_runs({**PROMPTFOO, "assertion": "all"}, base_dir=ROOT)
    totals = overall.groupby("framework")["score"].sum()
    for prompt in output["results"]["prompts"]:
        assert totals[prompt["provider"]] == pytest.approx(prompt["metrics"]["score"])
