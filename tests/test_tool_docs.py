"""Each tool's page in docs/tools/ gives a panel that reads the tool's output: its YAML block,
as printed, passes the workflow's start-up check and reads the files it names (written here in
the tool's layout, tests/tool_files.py) with `polyjudge.read_runs`."""
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

import polyjudge
from polyjudge import workflow_config
from tool_files import (SINGLE, alpaca_annotations, arena_judgments, fastchat_single, helm_runs,
                        lm_eval_run, promptfoo_output)

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "config/schema/config.schema.yaml").read_text())
DEFAULTS = yaml.safe_load((REPO / "config/config.yaml").read_text())
PAGES = {"alpaca_eval": (lambda d: [alpaca_annotations(d, results=folder)
                                    for folder in ("results", "results_bn")], 22),
         "fastchat": (lambda d: [fastchat_single(d / "data" / bench)
                                 for bench in ("mt_bench", "mt_bench_bn")], 14),
         "arena_hard": (lambda d: arena_judgments(d / "data" / "arena-hard-v2.0"), 5),
         "lm_eval": (lambda d: [lm_eval_run(d / "google__gemma-2b", f"xnli_{language}",
                                            [1, 0, 1, 1], time=f"2025-01-0{n}T10-00-00.000000",
                                            model="google/gemma-2b",
                                            metrics={"acc": [1, 0, 1, 1]})
                                for n, language in enumerate(("de", "en"), start=1)], 8),
         "helm": (lambda d: helm_runs(d / "runs" / "v3"), 12),
         "promptfoo": (lambda d: promptfoo_output(d / "output.json"), 6)}
LANGUAGES = {"lm_eval": {"de", "en"}}
"""Languages the files say (the other pages' sources give theirs in `constants`)."""


def page_config(tool: str) -> dict:
    text = (REPO / "docs" / "tools" / f"{tool}.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, f"docs/tools/{tool}.md: one YAML block expected"
    return yaml.safe_load(blocks[0])


@pytest.mark.parametrize("tool", sorted(PAGES))
def test_the_page_config_reads_the_tools_files(tool, tmp_path):
    write, rows = PAGES[tool]
    write(tmp_path)
    user = page_config(tool)
    completed = workflow_config.complete(yaml.safe_load(yaml.safe_dump(user)), DEFAULTS)
    workflow_config.check(completed, tmp_path, SCHEMA)
    (name, panel), = user["panels"].items()
    panel = {**completed["panels"][name], "runs": panel["runs"]}  # with the defaults filled in
    sources = panel["runs"] if isinstance(panel["runs"], list) else [panel["runs"]]
    assert {source["format"] for source in sources} == {tool}
    runs = polyjudge.read_runs(panel["runs"], base_dir=tmp_path, missing=panel["missing"],
                               score_range=panel["score_range"])
    languages = LANGUAGES.get(tool) or {source["constants"]["language"] for source in sources}
    assert len(runs) == rows and set(runs["language"]) == languages


def test_every_tool_has_a_page_linked_from_the_configuration():
    from polyjudge.data.tools import READERS
    pages = {p.stem for p in (REPO / "docs" / "tools").glob("*.md")}
    assert set(PAGES) <= set(READERS) and set(PAGES) <= pages
    configuration = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    for tool in PAGES:
        assert f"(tools/{tool}.md)" in configuration, tool


@pytest.mark.slow
def test_the_fastchat_page_panel_runs_through_the_workflow(tmp_path):
    """The page's panel as printed, on two judges' MT-Bench files in two languages (the
    language from each source's `constants`): ingest reads the tool's fields, counts the -1
    scores it leaves out, and CBC runs; the cell means are the judges' means over questions."""
    import subprocess
    import sys
    lift = {key: (s if s == -1 else min(s + 1, 10)) for key, s in SINGLE.items()}
    for bench in ("mt_bench", "mt_bench_bn"):
        data = tmp_path / "my_data" / "data" / bench
        fastchat_single(data, judge="gpt-4")
        fastchat_single(data, judge="claude-v1", scores=lift if bench == "mt_bench" else None)
    config = {"data_dir": "my_data", **page_config("fastchat"), "simulation": {"scenarios": {}}}
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "-s",
                             str(REPO / "Snakefile"), "--configfile", "my.yaml"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    log = (tmp_path / "results/mt_bench/logs/ingest.log").read_text()
    assert "28 runs: 4 tasks x 2 languages x 2 backbones" in log
    assert "mt_bench_bn/model_judgment/gpt-4_single.jsonl: 1 of 8 records have no score and " \
        "are left out" in log
    means = pd.read_csv(tmp_path / "results/mt_bench/cell_means.csv")
    means = means.set_index(["language", "backbone"])["mean"]
    assert means[("bn", "gpt-4")] == means[("bn", "claude-v1")] == pytest.approx(4.125)
    assert means[("en", "claude-v1")] == pytest.approx((6 + 5 + 7.5 + 2) / 4)
    beta = pd.read_csv(tmp_path / "results/mt_bench/cbc/beta.csv")
    assert len(beta) == 4  # language x backbone interaction of 2 x 2 cells


def test_a_misspelt_tool_is_named_with_the_tools_at_start_up(tmp_path):
    user = page_config("fastchat")
    user["panels"]["mt_bench"]["runs"][1]["format"] = "fastchta"
    completed = workflow_config.complete(yaml.safe_load(yaml.safe_dump(user)), DEFAULTS)
    with pytest.raises(ValueError) as refused:
        workflow_config.check(completed, tmp_path, SCHEMA)
    line = next(line for line in str(refused.value).splitlines() if "fastchta" in line)
    assert line.startswith("  panels.mt_bench.runs[1].format: 'fastchta' is not one of csv, ")
    assert all(tool in line for tool in ("alpaca_eval", "fastchat", "arena_hard"))
