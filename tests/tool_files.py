"""Files in the formats AlpacaEval, FastChat (MT-Bench), Arena-Hard-Auto, lm-evaluation-harness,
HELM and promptfoo write, for the tool reader tests: records with the fields and nesting of the
tools' files (tests/test_tool_files.py reads upstream files themselves), texts shortened, and
known values planted."""
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


# --- lm-evaluation-harness, HELM, promptfoo: the fields and nesting each tool writes -----------

# task -> the per-document exact_match of each document (doc_id 0, 1, ...)
LM_EVAL = {"kobest_boolq": [1, 0, 1, 1, 0], "kobest_copa": [1, 1, 1, 0, 1],
           "kobest_wic": [0, 0, 1, 0, 0]}


def lm_eval_run(folder: Path, task: str, scores, *, time="2024-11-28T15-40-18.523102",
                model="gpt-4o", metrics=None, filter="none", named=True) -> Path:
    """``<folder>/samples_<task>_<time>.jsonl`` and ``results_<time>.json`` as ``lm_eval
    --output_path out --log_samples`` writes them in ``out/<model>/``. ``metrics``: name ->
    values (default ``{"exact_match": scores}``); ``named``: the records carry ``filter`` and
    ``metrics`` (lm-eval 0.4.3 and later), else the filter is only in the results' keys."""
    metrics = metrics or {"exact_match": scores}
    records = []
    for doc_id in range(len(scores)):
        target = f"answer {doc_id}"
        record = {"doc_id": doc_id, "doc": {"paragraph": f"text {doc_id}", "label": doc_id % 2},
                  "target": target, "arguments": {"gen_args_0": {
                      "arg_0": f"text {doc_id}\nanswer:", "arg_1": {"until": ["\n"]}}},
                  "resps": [[target]], "filtered_resps": [target]}
        if named:
            record.update(filter=filter, metrics=sorted(metrics))
        record.update(doc_hash=f"{doc_id:064x}", prompt_hash="0" * 64, target_hash="1" * 64)
        record.update({name: float(values[doc_id]) for name, values in metrics.items()})
        records.append(record)
    samples = write_jsonl(folder / f"samples_{task}_{time}.jsonl", records)
    means = {f"{name},{filter}": sum(values) / len(values) for name, values in metrics.items()}
    results = {"results": {task: {"alias": task, **means,
                                  **{f"{n}_stderr,{filter}": 0.1 for n in metrics}}},
               "group_subtasks": {task: []},
               "configs": {task: {"task": task, "dataset_path": "skt/kobest_v1",
                                  "dataset_name": task.split("_")[-1], "test_split": "test",
                                  "output_type": "generate_until", "metric_list": [
                                      {"metric": n, "aggregation": "mean"} for n in metrics],
                                  "filter_list": [{"name": filter, "filter": []}]}},
               "versions": {task: 1.0}, "n-shot": {task: 0},
               "higher_is_better": {task: {n: True for n in metrics}},
               "n-samples": {task: {"original": len(scores), "effective": len(scores)}},
               "config": {"model": "openai-chat-completions", "model_args": f"model={model}",
                          "limit": float(len(scores)), "bootstrap_iters": 100000},
               "git_hash": "0000000", "date": 1732808418.5, "model_source":
               "openai-chat-completions", "model_name": model, "model_name_sanitized": model}
    (folder / f"results_{time}.json").write_text(json.dumps(results, indent=2),
                                                 encoding="utf-8")
    return samples


def lm_eval_folder(folder: Path, scores=None, **options) -> list[Path]:
    """One run per task of ``scores`` (default LM_EVAL), each at its own time."""
    return [lm_eval_run(folder, task, values, time=f"2024-11-28T1{n}-00-00.000000", **options)
            for n, (task, values) in enumerate((scores or LM_EVAL).items())]


# model -> instance -> (gpt score, claude score): HarmBench's two annotator judges
HELM = {"meta/llama-3-70b": {"id1": (1.0, 0.0), "id2": (0.0, 0.0), "id3": (0.5, 0.5)},
        "openai/gpt-4o-2024-05-13": {"id1": (0.0, 0.0), "id2": (0.0, 0.0),
                                     "id3": (1.0, 1.0)}}


def helm_stat(name: str, values, **extra) -> dict:
    n = len(values)
    mean = sum(values) / n
    return {"name": {"name": name, "split": "test", **extra}, "count": n, "sum": sum(values),
            "sum_squared": sum(v * v for v in values), "min": min(values), "max": max(values),
            "mean": mean, "variance": sum((v - mean) ** 2 for v in values) / n, "stddev": 0.0}


def helm_runs(suite: Path, scores=None, *, annotated=True, args=None) -> list[Path]:
    """``<suite>/harm_bench:model=<model>/`` run folders as ``helm-run --suite <suite>``
    writes them: ``run_spec.json``, ``per_instance_stats.json`` (each instance's stats, with a
    second entry of other stats and a perturbed one, as HELM writes them), ``stats.json`` and
    (``annotated``) ``scenario_state.json`` with the annotator's judgments."""
    folders = []
    for model, instances in (scores or HELM).items():
        folder = suite / f"harm_bench:model={model.replace('/', '_')}"
        folder.mkdir(parents=True, exist_ok=True)
        adapter = {"method": "generation", "model_deployment": model, "model": model,
                   "max_eval_instances": len(instances), "num_train_trials": 1}
        spec = {"name": f"harm_bench:model={model}", "scenario_spec": {
                    "class_name": "helm.benchmark.scenarios.harm_bench_scenario.HarmBenchScenario",
                    "args": args or {}}, "adapter_spec": adapter, "metric_specs": [],
                "data_augmenter_spec": {"perturbation_specs": []}, "groups": ["harm_bench"],
                "annotators": [{"class_name": "helm.benchmark.annotation.harm_bench_annotator."
                                              "HarmBenchAnnotator", "args": {}}]}
        per_instance, states = [], []
        for instance, (gpt, claude) in instances.items():
            judged = [helm_stat("harm_bench_score", [(gpt + claude) / 2]),
                      helm_stat("harm_bench_gpt_score", [gpt]),
                      helm_stat("harm_bench_claude_score", [claude])]
            per_instance += [{"instance_id": instance, "train_trial_index": 0, "stats": judged},
                             {"instance_id": instance, "train_trial_index": 0, "stats": [
                                 helm_stat("num_prompt_tokens", [12.0])]},
                             {"instance_id": instance, "train_trial_index": 0,
                              "perturbation": {"name": "robustness"}, "stats": [
                                  helm_stat("harm_bench_gpt_score", [0.25])]}]
            states.append({"instance": {"input": {"text": f"prompt {instance}"},
                                        "references": [], "split": "test", "id": instance},
                           "train_trial_index": 0, "request": {"model": model, "prompt": "..."},
                           "result": {"success": True, "completions": [{"text": "..."}]},
                           "annotations": {"harm_bench": {
                               "prompt_text": "...", "claude_reasoning": "...",
                               "claude_score": claude, "gpt_reasoning": "...",
                               "gpt_score": gpt}}})
        pairs = list(instances.values())
        means = {"harm_bench_score": [(gpt + claude) / 2 for gpt, claude in pairs],
                 "harm_bench_gpt_score": [gpt for gpt, _ in pairs],
                 "harm_bench_claude_score": [claude for _, claude in pairs]}
        for name, contents in (("run_spec", spec), ("per_instance_stats", per_instance),
                               ("stats", [helm_stat(n, v) for n, v in means.items()]),
                               ("scenario_state", {"adapter_spec": adapter,
                                                   "request_states": states})):
            if name != "scenario_state" or annotated:
                (folder / f"{name}.json").write_text(json.dumps(contents, indent=2),
                                                     encoding="utf-8")
        folders.append(folder)
    return folders


# provider -> test index -> (contains passed, llm-rubric score)
PROMPTFOO = {"openai:gpt-5": {0: (True, 0.75), 1: (True, 1.0), 2: (False, 0.25)},
             "openai:gpt-5-mini": {0: (True, 0.5), 1: (False, 0.0), 2: (True, 1.0)}}


def promptfoo_output(path: Path, scores=None, *, grader=None) -> Path:
    """``output.json`` as ``promptfoo eval -o output.json`` writes it: each test of the config
    answered by each provider, graded by a ``contains`` and an ``llm-rubric`` assertion (its
    ``provider`` the ``grader``, where given); ``gradingResult.score`` the mean of the two, and
    each prompt's ``metrics.score`` their sum per provider."""
    scores = scores or PROMPTFOO
    rubric = {"type": "llm-rubric", "value": "The answer is correct and kind"}
    if grader:
        rubric["provider"] = grader
    asserts = [{"type": "contains", "value": "answer"}, rubric]
    results, prompts = [], []
    for provider, tests in scores.items():
        total, passed = 0.0, 0
        for index, (contains, score) in tests.items():
            components = [{"pass": contains, "score": float(contains), "reason": "...",
                           "assertion": asserts[0]},
                          {"pass": score >= 0.5, "score": score, "reason": "...",
                           "assertion": rubric}]
            overall = (float(contains) + score) / 2
            total += overall
            passed += contains and score >= 0.5
            results.append({
                "cost": 0.001, "gradingResult": {
                    "pass": contains and score >= 0.5, "score": overall, "reason": "...",
                    "namedScores": {}, "componentResults": components, "assertion": None},
                "id": f"{provider}-{index}", "latencyMs": 900, "namedScores": {},
                "prompt": {"raw": "Answer: {{riddle}}", "label": "Answer: {{riddle}}"},
                "promptId": "p1", "promptIdx": 0, "provider": {"id": provider, "label": ""},
                "response": {"output": "an answer", "cached": False}, "score": overall,
                "success": contains and score >= 0.5,
                "testCase": {"vars": {"riddle": f"riddle {index}"}, "assert": asserts,
                             "options": {}, "metadata": {}},
                "testIdx": index, "vars": {"riddle": f"riddle {index}"}, "metadata": {}})
        prompts.append({"raw": "Answer: {{riddle}}", "label": "Answer: {{riddle}}",
                        "id": "p1", "provider": provider, "metrics": {
                            "score": total, "testPassCount": passed,
                            "testFailCount": len(tests) - passed, "testErrorCount": 0}})
    output = {"evalId": "eval-2025-01-01", "results": {
                  "version": 3, "timestamp": "2025-01-01T00:00:00.000Z", "prompts": prompts,
                  "results": results, "stats": {"successes": 0, "failures": 0, "errors": 0}},
              "config": {"description": "riddles", "prompts": ["Answer: {{riddle}}"],
                         "providers": sorted(scores), "tests": [], "defaultTest": {}},
              "shareableUrl": None, "metadata": {"promptfooVersion": "0.118.10"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(output, indent=2), encoding="utf-8")
    return path
