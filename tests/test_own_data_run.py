"""A new user's own table through the workflow, as docs/running.md has it: 12 tasks x 3
languages x 3 judges, one run per cell, scores 0-100, the columns prompt_id, lang, judge_model,
pct and no framework column, with the guide's analyses. What each step says: the CMI test
skipped by ingest naming the user's file and the fix, the others run; and the held-out and
task-count logs say each thing once, with fixes for this panel's scale and task count, which
work. One run of each kind, shared by the tests (module fixture)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from test_messages import MY_COLUMNS, one_run_per_cell

REPO = Path(__file__).resolve().parents[1]
ANALYSES = ["cbc", "bands", "heldout", "decisions", "reversal", "information", "task_count",
            "lolo"]
# settings that make the user's analyses quick (the defaults are the papers')
QUICK = {"heldout": {"replicates": 20}, "decisions": {"replicates": 20},
         "bands": {"replicates": 100}, "lolo": {"replicates": 20},
         "rank_intervals": {"replicates": 100}, "reversal": {"permutations": 19},
         "information": {"permutations": 20, "shards": 2},
         "ablations": {"task_count": {"replicates": 5}}}


class Project:
    """The user's folder beside the clone: my_data/my_runs.csv and my.yaml."""

    def __init__(self, root: Path):
        self.root = root
        (root / "my_data").mkdir()
        one_run_per_cell().to_csv(root / "my_data" / "my_runs.csv", index=False)
        self.panel = {"kind": "judge_runs", "runs": "my_runs.csv", "columns": MY_COLUMNS,
                      "score_range": [0, 100], "missing": "error", "analyses": list(ANALYSES)}
        self.config = {"data_dir": "my_data", "panels": {"mine": self.panel},
                       "simulation": {"scenarios": {}}, **QUICK}

    def run(self, *targets: str) -> tuple[int, str]:
        """snakemake as the guide runs it (the whole default target unless ``targets``): (exit
        code, the end of its output from the polyjudge summary on)."""
        (self.root / "my.yaml").write_text(yaml.safe_dump(self.config))
        result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "-s",
                                 str(REPO / "Snakefile"), *targets, "--configfile", "my.yaml"],
                                cwd=self.root, capture_output=True, text=True)
        return result.returncode, result.stderr[result.stderr.rfind("polyjudge: "):]

    def log(self, rule: str) -> str:
        return (self.root / "results" / "mine" / "logs" / f"{rule}.log").read_text()

    def outputs(self) -> list[Path]:
        return [p for p in (self.root / "results").rglob("*")
                if p.is_file() and "logs" not in p.parts]


def fix_in(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    assert found, f"no fix matching {pattern!r} in:\n{text}"
    return found.group(1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The user's runs, each after the fix the previous one's message gave: the guide's
    config as written (information skipped; the whole default target); the held-out and
    task-count fixes their logs give (only the two tables they change: the figures, claims
    and page the whole target would redraw say nothing about the fixes)."""
    project, said = Project(tmp_path_factory.mktemp("my_project")), {}
    said["as written"] = project.run()
    said["ingest"] = project.log("ingest")
    said["information"] = json.loads((project.root / "results/mine/information/cmi.json")
                                     .read_text())
    said["logs"] = {rule: project.log(rule) for rule in ("heldout", "task_count")}
    said["tau"] = pd.read_csv(project.root / "results/mine/heldout/tau.csv",
                              keep_default_na=False)
    project.panel["verdict_threshold"] = float(fix_in(r"e\.g\. verdict_threshold: (\S+) \(",
                                                      said["logs"]["heldout"]))
    n_values = fix_in(r"e\.g\. ablations: \{task_count: \{n_values: \[(.*?)\]\}\}",
                      said["logs"]["task_count"])
    project.config["ablations"] = {"task_count": {
        "replicates": 5, "n_values": [int(n) for n in n_values.split(", ")]}}
    said["logs fixed"] = project.run("results/mine/heldout/tau.csv",
                                     "results/mine/ablations/task_count.csv")
    said["fixed logs"] = {rule: project.log(rule) for rule in ("heldout", "task_count")}
    said["fixed tau"] = pd.read_csv(project.root / "results/mine/heldout/tau.csv",
                                    keep_default_na=False)
    said["task counts"] = pd.read_csv(project.root / "results/mine/ablations/task_count.csv")
    return said


@pytest.mark.slow
def test_information_on_one_run_per_cell_is_skipped_naming_the_users_file_and_the_fix(runs):
    """It failed late in cmi_null_shard naming results/mine/runs.parquet, with no fix; then
    it stopped the run in ingest; now the other analyses run and the CMI test says why not."""
    code, ending = runs["as written"]
    assert code == 0, ending
    assert "panels: mine (8 analyses, 1 skipped: information; why: " \
           "results/mine/logs/ingest.log)" in ending
    (line,) = [x for x in runs["ingest"].splitlines() if "analysis 'information' skipped" in x]
    assert "panel 'mine' (my_data/my_runs.csv)" in line and "one run per cell" in line
    assert "(columns: {framework: <column>})" in line and "drop the analysis" in line
    assert "still runs: cbc, bands, heldout, decisions, reversal, task_count, lolo" \
        in runs["ingest"]
    assert runs["information"]["analysis"] == "information"
    assert "one run per cell" in runs["information"]["skipped"]
    assert "runs.parquet" not in ending and "cmi_null_shard" not in ending


def warnings(log: str) -> list[str]:
    return [line for line in log.splitlines() if " WARNING " in line]


@pytest.mark.slow
def test_the_heldout_log_says_each_thing_once_and_not_the_requirement_variant(runs):
    """It had three warnings for Dawid-Skene (one per replicate pass, the full fit and the
    summary), three more for its requirement variant, and a list of both; the Dawid-Skene fix
    said "e.g. 10 on 1-10" on this 0-100 panel."""
    log = runs["logs"]["heldout"]
    assert len(warnings(log)) == 1, warnings(log)
    (warning,) = warnings(log)
    assert "Dawid-Skene: not run: every run is a fail" in warning
    assert "a score on the panel's scale [0, 100]" in warning and "1-10" not in warning
    requirement = [line for line in log.splitlines() if "Dawid-Skene (requirement)" in line]
    assert len(requirement) == 1 and " INFO " in requirement[0], requirement
    assert "Dawid-Skene (requirement)" not in set(runs["tau"]["method"])
    # the threshold it offers makes Dawid-Skene run
    assert runs["logs fixed"][0] == 0, runs["logs fixed"][1]
    assert not warnings(runs["fixed logs"]["heldout"])
    row = runs["fixed tau"].set_index("method").loc["Dawid-Skene"]
    assert row["n_replicates"] > 0 and row["reason"] == ""


@pytest.mark.slow
def test_the_task_count_log_says_the_panels_task_count_and_the_key_to_set(runs):
    (warning,) = warnings(runs["logs"]["task_count"])
    assert "the panel has only 12 tasks" in warning and "[20, 30, 40, 55]" in warning
    assert "set `ablations.task_count.n_values` in your config" in warning
    assert not warnings(runs["fixed logs"]["task_count"])  # the counts it offers all run
    assert list(runs["task counts"]["n_tasks"]) == [3, 6, 9, 12]
