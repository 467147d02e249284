"""Files lm-evaluation-harness, HELM and promptfoo wrote upstream (data/tools/), read with no
code beyond the source mapping, against the numbers each tool wrote beside them; files that
are not the tool's, or miss a field, or leave a choice open, are refused naming the file, the
field and the setting that resolves it."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

import polyjudge
from polyjudge import workflow_config
from polyjudge.data.errors import InputError
from polyjudge.data.tools import READERS

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "data" / "tools"
LM_EVAL = {"path": "gpt-4o", "format": "lm_eval", "constants": {"language": "ko"}}
HELM = {"path": "runs/v3", "format": "helm", "constants": {"language": "en"}}
PROMPTFOO = {"path": "sample-export.json", "format": "promptfoo",
             "constants": {"language": "en"}}


def message(source, base_dir, **options) -> str:
    with pytest.raises(InputError) as error:
        polyjudge.read_runs(source, base_dir=base_dir, **options)
    return str(error.value)


def copy_of(tool: str, tmp_path: Path) -> Path:
    target = tmp_path / tool
    shutil.copytree(TOOLS / tool, target)
    return target


# --- lm-evaluation-harness ----------------------------------------------------------------------

def lm_eval_results() -> dict:
    """task -> (metric key, value) as lm-eval wrote them in each results_<time>.json."""
    found = {}
    for path in sorted((TOOLS / "lm_eval" / "gpt-4o").glob("results_*.json")):
        for task, values in json.loads(path.read_text())["results"].items():
            key = next(k for k in values if "," in k and "_stderr" not in k)
            found[task] = (key, values[key])
    return found


def test_lm_eval_samples_give_the_means_lm_eval_reported():
    runs = polyjudge.read_runs(LM_EVAL, base_dir=TOOLS / "lm_eval")
    assert len(runs) == 50 and set(runs["framework"]) == {"gpt-4o"}
    assert set(runs["backbone"]) == {"exact_match"} and set(runs["language"]) == {"ko"}
    reported = lm_eval_results()
    assert sorted(runs["stratum"].unique()) == sorted(reported) and len(reported) == 5
    for task, (key, value) in reported.items():
        scores = runs.loc[runs["stratum"] == task, "score"]
        assert len(scores) == 10 and key.startswith("exact_match,")
        assert scores.mean() == pytest.approx(value), task
    assert runs["task"].str.match(r"kobest_\w+:\d$").all()


def test_lm_eval_agrees_with_lm_evals_own_file_helpers_and_aggregation():
    """lm-eval's own helpers name each samples file's task and time (as its Zeno and Hub
    loaders do), and its registered `mean` aggregation of the scores read gives the values
    of its results files."""
    utils = pytest.importorskip("lm_eval.utils")
    from lm_eval.api.registry import get_aggregation
    names = sorted(str(p) for p in (TOOLS / "lm_eval" / "gpt-4o").iterdir())
    samples = utils.get_sample_results_filenames(names)
    assert len(samples) == 5 and len(utils.get_results_filenames(names)) == 5
    runs = polyjudge.read_runs(LM_EVAL, base_dir=TOOLS / "lm_eval")
    reported = lm_eval_results()
    for path in samples:
        name = Path(path).name
        task = utils.get_file_task_name(name)
        time = utils.get_file_datetime(name)
        assert (TOOLS / "lm_eval" / "gpt-4o" / f"results_{time}.json").is_file()
        scores = runs.loc[runs["stratum"] == task, "score"].tolist()
        assert get_aggregation("mean")(scores) == pytest.approx(reported[task][1])


def test_lm_eval_language_and_items_from_the_task_names(tmp_path):
    """A parallel benchmark in two languages: the language from each task name, the same
    documents as the same items, no stratum (one benchmark)."""
    folder = tmp_path / "out" / "gpt-4o"
    folder.mkdir(parents=True)
    source = TOOLS / "lm_eval" / "gpt-4o"
    for language, time in (("de", "2024-11-28T15-40-18.523102"),
                           ("en", "2024-11-28T16-23-38.220589")):
        shutil.copy(next(source.glob(f"samples_*_{time}.jsonl")),
                    folder / f"samples_xnli_{language}_{time}.jsonl")
        shutil.copy(source / f"results_{time}.json", folder)
    runs = polyjudge.read_runs({"path": "out", "format": "lm_eval"}, base_dir=tmp_path)
    assert sorted(runs["language"].unique()) == ["de", "en"] and "stratum" not in runs
    assert set(runs.groupby("task")["language"].nunique()) == {2}
    swapped = polyjudge.read_runs({"path": "out", "format": "lm_eval", "judge": "model",
                                   "system": "none"}, base_dir=tmp_path)
    assert set(swapped["backbone"]) == {"gpt-4o"} and set(swapped["framework"]) == {"single"}


def rewrite(path: Path, change) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(r) + "\n" for r in change(records)))


def test_lm_eval_ambiguous_metric_and_filter_are_refused_until_named(tmp_path):
    folder = copy_of("lm_eval", tmp_path) / "gpt-4o"
    boolq = next(folder.glob("samples_kobest_boolq_*.jsonl"))
    rewrite(boolq, lambda rs: [{**r, "acc": 1.0} for r in rs])
    text = message(LM_EVAL, tmp_path / "lm_eval")
    assert boolq.name in text and "2 metrics ['acc', 'exact_match']" in text
    assert "`metric: acc`" in text
    runs = polyjudge.read_runs({**LM_EVAL, "metric": "exact_match"}, base_dir=tmp_path / "lm_eval")
    assert len(runs) == 50
    rewrite(boolq, lambda rs: [{**r, "filter": f} for r in rs for f in ("strict", "flexible")])
    text = message({**LM_EVAL, "metric": "exact_match"}, tmp_path / "lm_eval")
    assert boolq.name in text and "`filter: flexible`" in text
    runs = polyjudge.read_runs({**LM_EVAL, "metric": "exact_match", "filter": "strict"},
                               base_dir=tmp_path / "lm_eval")
    assert len(runs) == 50


def test_lm_eval_corpus_metrics_missing_fields_and_other_tools_are_refused(tmp_path):
    folder = copy_of("lm_eval", tmp_path) / "gpt-4o"
    wic = next(folder.glob("samples_kobest_wic_*.jsonl"))
    rewrite(wic, lambda rs: [{**{k: v for k, v in r.items() if k != "exact_match"},
                              "f1": [r["target"], r["filtered_resps"]]} for r in rs])
    text = message(LM_EVAL, tmp_path / "lm_eval")
    assert f"{wic.name}:1" in text and "aggregates it over the whole corpus" in text
    rewrite(wic, lambda rs: [{k: v for k, v in r.items() if k != "doc_id"} for r in rs])
    assert "no `doc_id` field" in message(LM_EVAL, tmp_path / "lm_eval")
    text = message({"path": "sample-export.json", "format": "lm_eval"}, TOOLS / "promptfoo")
    assert "no lm-eval sample file" in text and "--log_samples" in text
    text = message({"path": "gpt-4o", "format": "lm_eval"}, TOOLS / "lm_eval")
    assert "do not say the language" in text and "`constants: {language: <value>}`" in text
    for results in folder.glob("results_*.json"):
        results.unlink()
    wic.unlink()
    text = message(LM_EVAL, tmp_path / "lm_eval")
    assert "no results_<time>.json" in text and "`system: =<model name>`" in text


# --- HELM ---------------------------------------------------------------------------------------

def helm_stats() -> dict:
    """(model, metric) -> mean, from HELM's own stats.json of each run (unperturbed)."""
    found = {}
    for folder in sorted((TOOLS / "helm" / "runs" / "v3").iterdir()):
        model = json.loads((folder / "run_spec.json").read_text())["adapter_spec"]["model"]
        for stat in json.loads((folder / "stats.json").read_text()):
            if "perturbation" not in stat["name"] and "mean" in stat:
                found[model, stat["name"]["name"]] = stat["mean"]
    return found


def test_helm_runs_give_each_judges_mean_helm_reported():
    runs = polyjudge.read_runs(HELM, base_dir=TOOLS / "helm")
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
    combined = polyjudge.read_runs({**HELM, "metric": "harm_bench_score"},
                                   base_dir=TOOLS / "helm")
    assert set(combined["backbone"]) == {"harm_bench_score"}
    for model, mean in combined.groupby("framework")["score"].mean().items():
        assert mean == pytest.approx(stats[model, "harm_bench_score"])


def test_helm_refuses_other_files_unknown_and_ambiguous_metrics(tmp_path):
    runs = copy_of("helm", tmp_path) / "runs" / "v3"
    text = message({**HELM, "metric": "accuracy"}, tmp_path / "helm")
    assert "no metric ['accuracy']" in text and "harm_bench_gpt_score" in text
    for state in runs.glob("*/scenario_state.json"):
        state.unlink()  # no annotations: nothing says which metrics are judges
    text = message(HELM, tmp_path / "helm")
    assert "per_instance_stats.json" in text and "`metric: <name>`" in text
    assert "ambiguous" in text
    next(runs.glob("*/per_instance_stats.json")).unlink()
    assert "without per_instance_stats.json" in message({**HELM, "metric": "harm_bench_score"},
                                                        tmp_path / "helm")
    text = message({"path": "gpt-4o", "format": "helm"}, TOOLS / "lm_eval")
    assert "no run_spec.json" in text and "helm-run" in text


# --- promptfoo ----------------------------------------------------------------------------------

def promptfoo_output() -> dict:
    return json.loads((TOOLS / "promptfoo" / "sample-export.json").read_text())


def test_promptfoo_llm_rubric_scores_and_the_totals_promptfoo_reported():
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=TOOLS / "promptfoo")
    assert len(runs) == 4 and set(runs["task"]) == {"0", "1"}
    assert set(runs["framework"]) == {"openai:gpt-5", "openai:gpt-5-mini"}
    assert set(runs["backbone"]) == {"llm-rubric"}  # the grader is not recorded
    rubric = [c for r in promptfoo_output()["results"]["results"]
              for c in r["gradingResult"]["componentResults"]
              if c["assertion"]["type"] == "llm-rubric"]
    assert runs["score"].tolist() == [float(c["score"]) for c in rubric] == [1.0] * 4
    overall = polyjudge.read_runs({**PROMPTFOO, "assertion": "all"},
                                  base_dir=TOOLS / "promptfoo")
    totals = overall.groupby("framework")["score"].sum()
    for prompt in promptfoo_output()["results"]["prompts"]:
        assert totals[prompt["provider"]] == pytest.approx(prompt["metrics"]["score"])


def edit_output(folder: Path, change) -> None:
    path = folder / "sample-export.json"
    output = json.loads(path.read_text())
    change(output)
    path.write_text(json.dumps(output))


def test_promptfoo_graders_where_recorded_make_a_panel(tmp_path):
    folder = copy_of("promptfoo", tmp_path)

    def two_graders(output):
        for result in output["results"]["results"]:
            rubric = next(c for c in result["gradingResult"]["componentResults"]
                          if c["assertion"]["type"] == "llm-rubric")
            second = json.loads(json.dumps(rubric))
            rubric["assertion"]["provider"] = "openai:gpt-4.1"
            second["assertion"]["provider"] = {"id": "anthropic:messages:claude-sonnet-4"}
            second["score"] = 0.5
            result["gradingResult"]["componentResults"].append(second)
    edit_output(folder, two_graders)
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=folder)
    assert len(runs) == 8
    means = runs.groupby("backbone")["score"].mean()
    assert means.to_dict() == {"anthropic:messages:claude-sonnet-4": 0.5, "openai:gpt-4.1": 1.0}

    def same_grader(output):
        for result in output["results"]["results"]:
            for component in result["gradingResult"]["componentResults"]:
                component["assertion"].pop("provider", None)
    edit_output(folder, same_grader)
    text = message(PROMPTFOO, folder)
    assert "results.results[0]" in text and "the same grader" in text
    assert "`assertion: llm-rubric`" in text


def test_promptfoo_failed_results_other_files_and_missing_fields(tmp_path):
    folder = copy_of("promptfoo", tmp_path)
    edit_output(folder, lambda o: o["results"]["results"][2].update(gradingResult=None))
    text = message(PROMPTFOO, folder)
    assert "results.results[2]" in text and "`missing: omit`" in text
    runs = polyjudge.read_runs(PROMPTFOO, base_dir=folder, missing="omit")
    assert len(runs) == 3
    edit_output(folder, lambda o: o["results"].pop("results"))
    assert "not a promptfoo output file" in message(PROMPTFOO, folder)
    text = message({"path": "runs/v3", "format": "promptfoo"}, TOOLS / "helm")
    assert "not a promptfoo output file" in text and "promptfoo eval -o" in text


# --- the pages in docs/tools/ and the schema ----------------------------------------------------

PAGES = sorted((REPO / "docs" / "tools").glob("*.md"))


@pytest.mark.parametrize("page", [p for p in PAGES if p.stem in ("helm", "lm_eval", "promptfoo")],
                         ids=lambda p: p.stem)
def test_each_tool_page_config_runs_verbatim(page):
    """The page's panel config, as written: a valid configuration (schema, sources, analyses)
    whose runs read the repository's copy of the tool's files."""
    blocks = re.findall(r"```yaml\n(.*?)```", page.read_text(), flags=re.S)
    assert len(blocks) == 1, page
    user = yaml.safe_load(blocks[0])
    defaults = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    config = workflow_config.complete(user, defaults)
    data_dir = REPO / config["data_dir"]
    workflow_config.check(config, data_dir, schema)
    for panel in config["panels"].values():
        assert panel["runs"]["format"] == page.stem
        runs = polyjudge.read_runs(panel["runs"], base_dir=data_dir, missing=panel["missing"],
                                   score_range=panel["score_range"])
        assert len(runs) > 0 and np.isfinite(runs["score"]).all()
    assert f"(tools/{page.name})" in (REPO / "docs" / "configuration.md").read_text()


def test_the_schema_lists_each_reader_and_its_options():
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    source = schema["$defs"]["tool_source"]
    assert set(source["properties"]["format"]["enum"]) == set(READERS)
    for name, module in READERS.items():
        assert set(module.OPTIONS) <= set(source["properties"]), name
        assert (REPO / "docs" / "tools" / f"{name}.md").is_file(), name


def test_a_verdict_table_from_a_tool_reader_is_refused():
    with pytest.raises(InputError, match="under a panel's `runs`"):
        READERS["lm_eval"].read([TOOLS / "lm_eval" / "gpt-4o"], table="verdicts")


def test_every_tool_file_is_in_its_manifest():
    for tool in ("helm", "lm_eval", "promptfoo"):
        listed = dict(line.split("  ")[::-1] for line in
                      (TOOLS / tool / "SHA256SUMS").read_text().splitlines())
        files = sorted(p.relative_to(TOOLS / tool).as_posix() for p in (TOOLS / tool).rglob("*")
                       if p.is_file() and p.name not in ("PROVENANCE.md", "SHA256SUMS"))
        assert sorted(listed) == files, tool


def test_the_config_check_takes_a_tool_format_and_still_names_an_unknown_one():
    from polyjudge.data.config import unknown_keys
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    panel = {"kind": "judge_runs", "runs": {"path": "out", "format": "lm_eval", "metric": "acc"}}
    assert unknown_keys({"panels": {"p": panel}}, schema) == []
    panel["runs"]["format"] = "lm-eval"
    problems = unknown_keys({"panels": {"p": panel}}, schema)
    assert len(problems) == 1 and "'lm-eval' is not one of csv, parquet, jsonl, json" in \
        problems[0] and "lm_eval" in problems[0]
