"""The lm-evaluation-harness, HELM and promptfoo readers on files written here in each tool's
layout, with the fields and nesting the tool writes (tests/tool_files.py) and planted values
whose means and counts are known; lm-eval's own helpers, and a run of lm-eval itself, where it
is installed. Files that are not the tool's, or miss a field, or leave a choice open, are
refused naming the file, the field and the setting that resolves it. tests/test_tool_files.py
checks the readers on files the tools wrote upstream."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import polyjudge
from polyjudge.data.errors import InputError
from polyjudge.data.tools import READERS
from tool_files import (HELM as HELM_SCORES, LM_EVAL as LM_EVAL_SCORES,
                        PROMPTFOO as PROMPTFOO_SCORES, helm_runs, lm_eval_folder, lm_eval_run,
                        promptfoo_output)

REPO = Path(__file__).resolve().parents[1]
LM_EVAL = {"path": "gpt-4o", "format": "lm_eval", "constants": {"language": "ko"}}
HELM = {"path": "runs/v3", "format": "helm", "constants": {"language": "en"}}
PROMPTFOO = {"path": "output.json", "format": "promptfoo", "constants": {"language": "en"}}


def message(source, base_dir, **options) -> str:
    with pytest.raises(InputError) as error:
        polyjudge.read_runs(source, base_dir=base_dir, **options)
    return str(error.value)


# --- lm-evaluation-harness ----------------------------------------------------------------------

def reported(folder: Path) -> dict:
    """task -> (metric key, value) as each results_<time>.json gives them."""
    found = {}
    for path in sorted(folder.glob("results_*.json")):
        for task, values in json.loads(path.read_text())["results"].items():
            key = next(k for k in values if "," in k and "_stderr" not in k)
            found[task] = (key, values[key])
    return found


@pytest.mark.parametrize("named", [True, False], ids=["lm-eval-0.4.3+", "older"])
def test_lm_eval_samples_give_the_planted_means(tmp_path, named):
    """Records with `filter` and `metrics` (lm-eval 0.4.3 and later) and without them (the
    filter then comes from the results file's keys): each task's mean is the planted one."""
    lm_eval_folder(tmp_path / "gpt-4o", named=named, filter="get-answer")
    runs = polyjudge.read_runs(LM_EVAL, base_dir=tmp_path)
    assert len(runs) == 15 and set(runs["framework"]) == {"gpt-4o"}
    assert set(runs["backbone"]) == {"exact_match"} and set(runs["language"]) == {"ko"}
    assert sorted(runs["stratum"].unique()) == sorted(LM_EVAL_SCORES)
    for task, values in LM_EVAL_SCORES.items():
        scores = runs.loc[runs["stratum"] == task].sort_values("task")["score"]
        assert scores.tolist() == [float(v) for v in values], task
        assert scores.mean() == pytest.approx(np.mean(values))
    assert runs["task"].str.match(r"kobest_\w+:\d$").all()
    by_filter = polyjudge.read_runs({**LM_EVAL, "judge": "filter"}, base_dir=tmp_path)
    assert set(by_filter["backbone"]) == {"get-answer"}


def test_lm_eval_agrees_with_lm_evals_own_file_helpers_and_aggregation(tmp_path):
    """lm-eval's own helpers name each samples file's task and time (as its Zeno and Hub
    loaders do), and its registered `mean` aggregation of the scores read gives the values
    of the results files."""
    utils = pytest.importorskip("lm_eval.utils")
    from lm_eval.api.registry import get_aggregation
    folder = tmp_path / "gpt-4o"
    lm_eval_folder(folder)
    names = sorted(str(p) for p in folder.iterdir())
    samples = utils.get_sample_results_filenames(names)
    assert len(samples) == 3 and len(utils.get_results_filenames(names)) == 3
    runs = polyjudge.read_runs(LM_EVAL, base_dir=tmp_path)
    for path in samples:
        name = Path(path).name
        task = utils.get_file_task_name(name)
        assert (folder / f"results_{utils.get_file_datetime(name)}.json").is_file()
        scores = runs.loc[runs["stratum"] == task, "score"].tolist()
        assert get_aggregation("mean")(scores) == pytest.approx(reported(folder)[task][1])
        assert get_aggregation("mean")(scores) == pytest.approx(np.mean(LM_EVAL_SCORES[task]))


def test_lm_eval_language_and_items_from_the_task_names(tmp_path):
    """A parallel benchmark in two languages: the language from each task name, the same
    documents as the same items, no stratum (one benchmark)."""
    folder = tmp_path / "out" / "gpt-4o"
    lm_eval_run(folder, "xnli_de", [1, 0, 1], time="2024-11-28T15-40-18.523102")
    lm_eval_run(folder, "xnli_en", [1, 1, 1], time="2024-11-28T16-23-38.220589")
    runs = polyjudge.read_runs({"path": "out", "format": "lm_eval"}, base_dir=tmp_path)
    assert sorted(runs["language"].unique()) == ["de", "en"] and "stratum" not in runs
    assert set(runs.groupby("task")["language"].nunique()) == {2}
    means = runs.groupby("language")["score"].mean()
    assert means["de"] == pytest.approx(2 / 3) and means["en"] == 1.0
    swapped = polyjudge.read_runs({"path": "out", "format": "lm_eval", "judge": "model",
                                   "system": "none"}, base_dir=tmp_path)
    assert set(swapped["backbone"]) == {"gpt-4o"} and set(swapped["framework"]) == {"single"}


def rewrite(path: Path, change) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(r) + "\n" for r in change(records)))


@pytest.mark.parametrize("named", [True, False], ids=["lm-eval-0.4.3+", "older"])
def test_lm_eval_ambiguous_metric_is_refused_until_named(tmp_path, named):
    folder = tmp_path / "gpt-4o"
    lm_eval_folder(folder, named=named)
    boolq = lm_eval_run(folder, "kobest_boolq", LM_EVAL_SCORES["kobest_boolq"], named=named,
                        time="2024-11-28T10-00-00.000000",
                        metrics={"acc": [1] * 5, "exact_match": LM_EVAL_SCORES["kobest_boolq"]})
    text = message(LM_EVAL, tmp_path)
    assert boolq.name in text and "2 metrics ['acc', 'exact_match']" in text
    assert "`metric: acc`" in text
    runs = polyjudge.read_runs({**LM_EVAL, "metric": "exact_match"}, base_dir=tmp_path)
    assert len(runs) == 15 and runs["score"].mean() == pytest.approx(8 / 15)


def test_lm_eval_several_filters_are_refused_until_named(tmp_path):
    folder = tmp_path / "gpt-4o"
    boolq = lm_eval_folder(folder, named=False)[0]
    rewrite(boolq, lambda rs: [{**r, "filter": f} for r in rs for f in ("strict", "flexible")])
    text = message(LM_EVAL, tmp_path)
    assert boolq.name in text and "`filter: flexible`" in text
    runs = polyjudge.read_runs({**LM_EVAL, "filter": "strict"}, base_dir=tmp_path)
    assert len(runs) == 15


def test_lm_eval_corpus_metrics_missing_fields_and_other_tools_are_refused(tmp_path):
    folder = tmp_path / "gpt-4o"
    wic = lm_eval_folder(folder)[2]
    text = message({"path": "gpt-4o", "format": "lm_eval"}, tmp_path)
    assert "do not say the language" in text and "`constants: {language: <value>}`" in text
    rewrite(wic, lambda rs: [{**{k: v for k, v in r.items() if k != "exact_match"},
                              "metrics": ["f1"], "f1": [r["target"], r["filtered_resps"]]}
                             for r in rs])
    text = message(LM_EVAL, tmp_path)
    assert f"{wic.name}:1" in text and "aggregates it over the whole corpus" in text
    rewrite(wic, lambda rs: [{k: v for k, v in r.items() if k != "doc_id"} for r in rs])
    assert "no `doc_id` field" in message(LM_EVAL, tmp_path)
    promptfoo_output(tmp_path / "output.json")
    text = message({"path": "output.json", "format": "lm_eval"}, tmp_path)
    assert "no lm-eval sample file" in text and "--log_samples" in text
    for results in folder.glob("results_*.json"):
        results.unlink()
    wic.unlink()
    text = message(LM_EVAL, tmp_path)
    assert "no results_<time>.json" in text and "`system: =<model name>`" in text


RUN_LM_EVAL = """
import json, sys
from pathlib import Path
from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager
folder = Path(sys.argv[1])
tracker = EvaluationTracker(output_path=str(folder / "out"))
result = simple_evaluate(model="dummy", model_args="pretrained=org/tiny-model",
                         tasks=["tiny_de", "tiny_en"], log_samples=True,
                         task_manager=TaskManager(include_path=str(folder / "tasks"),
                                                  include_defaults=False),
                         evaluation_tracker=tracker)
tracker.save_results_aggregated(results=result, samples=result["samples"])
for task, samples in result["samples"].items():
    tracker.save_results_samples(task_name=task, samples=samples)
"""


@pytest.mark.slow
def test_lm_eval_reads_what_lm_eval_itself_wrote(tmp_path):
    """lm-eval's `dummy` model (it answers "lol" to every prompt) on two local tasks, offline:
    the documents whose answer is "lol" score exact_match 1, so the planted means are known;
    the files its EvaluationTracker writes are read and give them, and lm-eval's own means."""
    pytest.importorskip("lm_eval")
    answers = {"de": ["lol", "nein", "lol", "lol"], "en": ["no", "lol", "no", "no"]}
    (tmp_path / "tasks").mkdir()
    for language, targets in answers.items():
        data = tmp_path / f"{language}.jsonl"
        data.write_text("".join(json.dumps({"question": f"q{n}", "answer": a}) + "\n"
                                for n, a in enumerate(targets)))
        task = {"task": f"tiny_{language}", "dataset_path": "json",
                "dataset_kwargs": {"data_files": {"test": str(data)}}, "test_split": "test",
                "output_type": "generate_until", "doc_to_text": "{{question}}",
                "doc_to_target": "{{answer}}", "generation_kwargs": {"until": ["\n"]},
                "metric_list": [{"metric": "exact_match", "aggregation": "mean",
                                 "higher_is_better": True}]}
        (tmp_path / "tasks" / f"tiny_{language}.yaml").write_text(yaml.safe_dump(task))
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run([sys.executable, "-c", RUN_LM_EVAL, str(tmp_path)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = tmp_path / "out" / "org__tiny-model"
    runs = polyjudge.read_runs({"path": "out", "format": "lm_eval"}, base_dir=tmp_path)
    assert len(runs) == 8 and set(runs["framework"]) == {"org/tiny-model"}
    assert set(runs["backbone"]) == {"exact_match"} and "stratum" not in runs
    means = runs.groupby("language")["score"].mean()
    assert means.to_dict() == {"de": 0.75, "en": 0.25}
    for task, (key, value) in reported(folder).items():
        assert key == "exact_match,none" and means[task[-2:]] == pytest.approx(value), task


# --- HELM ---------------------------------------------------------------------------------------

def test_helm_runs_give_each_judges_planted_mean(tmp_path):
    """Each annotator judge's mean per model, the unperturbed stats of train trial 0 (the
    perturbed entry, planted 0.25, is left out), and the combined metric where named."""
    helm_runs(tmp_path / "runs" / "v3")
    runs = polyjudge.read_runs(HELM, base_dir=tmp_path)
    assert len(runs) == 2 * 3 * 2 and set(runs["backbone"]) == {"gpt", "claude"}
    assert set(runs["task"]) == {"id1", "id2", "id3"}
    means = runs.groupby(["framework", "backbone"])["score"].mean()
    assert len(means) == 4
    for model, instances in HELM_SCORES.items():
        for k, judge in enumerate(("gpt", "claude")):
            planted = np.mean([pair[k] for pair in instances.values()])
            assert means[model, judge] == pytest.approx(planted), (model, judge)
    assert means["meta/llama-3-70b", "gpt"] == 0.5  # the judges disagree on one answer
    assert means["meta/llama-3-70b", "claude"] == pytest.approx(1 / 6)
    combined = polyjudge.read_runs({**HELM, "metric": "harm_bench_score"}, base_dir=tmp_path)
    assert set(combined["backbone"]) == {"harm_bench_score"}
    for model, mean in combined.groupby("framework")["score"].mean().items():
        assert mean == pytest.approx(np.mean([sum(p) / 2 for p in HELM_SCORES[model].values()]))


def test_helm_language_from_the_scenario_argument(tmp_path):
    helm_runs(tmp_path / "runs" / "v3", args={"language": "de"})
    runs = polyjudge.read_runs({"path": "runs/v3", "format": "helm"}, base_dir=tmp_path)
    assert set(runs["language"]) == {"de"} and len(runs) == 12


def test_helm_refuses_other_files_unknown_and_ambiguous_metrics(tmp_path):
    runs = helm_runs(tmp_path / "runs" / "v3")
    text = message({**HELM, "metric": "accuracy"}, tmp_path)
    assert "no metric ['accuracy']" in text and "harm_bench_gpt_score" in text
    for folder in runs:
        (folder / "scenario_state.json").unlink()  # no annotations: no metric is a judge
    text = message(HELM, tmp_path)
    assert "per_instance_stats.json" in text and "`metric: <name>`" in text
    assert "ambiguous" in text
    (runs[0] / "per_instance_stats.json").unlink()
    assert "without per_instance_stats.json" in message({**HELM, "metric": "harm_bench_score"},
                                                        tmp_path)
    lm_eval_folder(tmp_path / "gpt-4o")
    text = message({"path": "gpt-4o", "format": "helm"}, tmp_path)
    assert "no run_spec.json" in text and "helm-run" in text


# --- promptfoo ----------------------------------------------------------------------------------

def test_promptfoo_llm_rubric_scores_and_the_overall_totals(tmp_path):
    output = json.loads(promptfoo_output(tmp_path / "output.json").read_text())
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=tmp_path)
    assert len(runs) == 6 and set(runs["task"]) == {"0", "1", "2"}
    assert set(runs["framework"]) == set(PROMPTFOO_SCORES)
    assert set(runs["backbone"]) == {"llm-rubric"}  # the grader is not recorded
    for provider, tests in PROMPTFOO_SCORES.items():
        mine = runs[runs["framework"] == provider].set_index("task")["score"]
        assert mine.to_dict() == {str(t): score for t, (_, score) in tests.items()}
    overall = polyjudge.read_runs({**PROMPTFOO, "assertion": "all"}, base_dir=tmp_path)
    totals = overall.groupby("framework")["score"].sum()
    assert totals.to_dict() == {"openai:gpt-5": 2.0, "openai:gpt-5-mini": 1.75}
    for prompt in output["results"]["prompts"]:
        assert totals[prompt["provider"]] == pytest.approx(prompt["metrics"]["score"])
    contains = polyjudge.read_runs({**PROMPTFOO, "assertion": "contains"}, base_dir=tmp_path)
    assert contains.groupby("framework")["score"].sum().to_dict() == \
        {"openai:gpt-5": 2.0, "openai:gpt-5-mini": 2.0}


def edit_output(folder: Path, change) -> None:
    path = folder / "output.json"
    output = json.loads(path.read_text())
    change(output)
    path.write_text(json.dumps(output))


def test_promptfoo_graders_where_recorded_make_a_panel(tmp_path):
    promptfoo_output(tmp_path / "output.json", grader={"id": "openai:gpt-4.1"})
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=tmp_path)
    assert set(runs["backbone"]) == {"openai:gpt-4.1"} and len(runs) == 6

    def two_graders(output):
        for result in output["results"]["results"]:
            rubric = next(c for c in result["gradingResult"]["componentResults"]
                          if c["assertion"]["type"] == "llm-rubric")
            second = json.loads(json.dumps(rubric))
            second["assertion"]["provider"] = {"id": "anthropic:messages:claude-sonnet-4"}
            second["score"] = 0.5
            result["gradingResult"]["componentResults"].append(second)
    edit_output(tmp_path, two_graders)
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=tmp_path)
    assert len(runs) == 12
    means = runs.groupby("backbone")["score"].mean()
    assert means["anthropic:messages:claude-sonnet-4"] == 0.5
    assert means["openai:gpt-4.1"] == pytest.approx(3.5 / 6)

    def same_grader(output):
        for result in output["results"]["results"]:
            for component in result["gradingResult"]["componentResults"]:
                component["assertion"].pop("provider", None)
    edit_output(tmp_path, same_grader)
    text = message(PROMPTFOO, tmp_path)
    assert "results.results[0]" in text and "the same grader" in text
    assert "`assertion: llm-rubric`" in text


def test_promptfoo_failed_results_other_files_and_missing_fields(tmp_path):
    promptfoo_output(tmp_path / "output.json")
    edit_output(tmp_path, lambda o: o["results"]["results"][2].update(gradingResult=None))
    text = message(PROMPTFOO, tmp_path)
    assert "results.results[2]" in text and "`missing: omit`" in text
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=tmp_path, missing="omit")
    assert len(runs) == 5
    edit_output(tmp_path, lambda o: o["results"].pop("results"))
    assert "not a promptfoo output file" in message(PROMPTFOO, tmp_path)
    helm_runs(tmp_path / "runs" / "v3")
    text = message({"path": "runs/v3", "format": "promptfoo"}, tmp_path)
    assert "not a promptfoo output file" in text and "promptfoo eval -o" in text


# --- the pages in docs/tools/ and the schema ----------------------------------------------------

def test_the_schema_lists_each_reader_and_its_options():
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    source = schema["$defs"]["tool_source"]
    assert set(source["properties"]["format"]["enum"]) == set(READERS)
    for name, module in READERS.items():
        assert set(module.OPTIONS) <= set(source["properties"]), name
        assert (REPO / "docs" / "tools" / f"{name}.md").is_file(), name


def test_a_verdict_table_from_a_tool_reader_is_refused():
    with pytest.raises(InputError, match="under a panel's `runs`"):
        READERS["lm_eval"].read([Path("out")], table="verdicts")


def test_the_config_check_takes_a_tool_format_and_still_names_an_unknown_one():
    from polyjudge.data.config import unknown_keys
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    panel = {"kind": "judge_runs", "runs": {"path": "out", "format": "lm_eval", "metric": "acc"}}
    assert unknown_keys({"panels": {"p": panel}}, schema) == []
    panel["runs"]["format"] = "lm-eval"
    problems = unknown_keys({"panels": {"p": panel}}, schema)
    assert len(problems) == 1 and "'lm-eval' is not one of csv, parquet, jsonl, json" in \
        problems[0] and "lm_eval" in problems[0]
