"""A new user's own table through the workflow, as docs/running.md has it: 12 tasks x 3
languages x 3 judges, one run per cell, scores 0-100, the columns prompt_id, lang, judge_model,
pct and no framework column, with the guide's analyses. What each step says: the CMI test
refused in ingest naming the user's file (then, with the analyses the message gives, the run
works), and the held-out and task-count logs say each thing once, with fixes for this panel's
scale and task count, which work. One run of each kind, shared by the tests (module fixture)."""
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

    def run(self) -> tuple[int, str]:
        """snakemake as the guide runs it: (exit code, the end of its output from the
        polyjudge summary on)."""
        (self.root / "my.yaml").write_text(yaml.safe_dump(self.config))
        result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "-s",
                                 str(REPO / "Snakefile"), "--configfile", "my.yaml"],
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
    config as written; the analyses the ingest message gives; the held-out and task-count
    fixes their logs give; `information` listed again once the runs are ingested."""
    project, said = Project(tmp_path_factory.mktemp("my_project")), {}
    said["as written"] = project.run()
    said["no output"] = project.outputs()
    project.panel["analyses"] = fix_in(r"\(analyses: \[(.*?)\]\)",
                                       said["as written"][1]).split(", ")
    said["analyses fixed"] = project.run()
    said["logs"] = {rule: project.log(rule) for rule in ("heldout", "task_count")}
    said["tau"] = pd.read_csv(project.root / "results/mine/heldout/tau.csv",
                              keep_default_na=False)
    project.panel["verdict_threshold"] = float(fix_in(r"e\.g\. verdict_threshold: (\S+) \(",
                                                      said["logs"]["heldout"]))
    n_values = fix_in(r"e\.g\. ablations: \{task_count: \{n_values: \[(.*?)\]\}\}",
                      said["logs"]["task_count"])
    project.config["ablations"] = {"task_count": {
        "replicates": 5, "n_values": [int(n) for n in n_values.split(", ")]}}
    said["logs fixed"] = project.run()
    said["fixed logs"] = {rule: project.log(rule) for rule in ("heldout", "task_count")}
    said["fixed tau"] = pd.read_csv(project.root / "results/mine/heldout/tau.csv",
                                    keep_default_na=False)
    said["task counts"] = pd.read_csv(project.root / "results/mine/ablations/task_count.csv")
    project.panel["analyses"] = list(ANALYSES)
    said["information again"] = project.run()
    return said


@pytest.mark.slow
def test_information_on_one_run_per_cell_stops_in_ingest_naming_the_users_file(runs):
    """It failed in cmi_null_shard naming results/mine/runs.parquet, with no fix."""
    code, ending = runs["as written"]
    assert code != 0
    said = ending.splitlines()
    assert said[1] == "  rule ingest (results/mine/logs/ingest.log):", ending
    assert said[2] == ("    my_data/my_runs.csv: one run per task x language x backbone cell, "
                       "and panel 'mine' lists analysis 'information' (the CMI test, which "
                       "compares a cell's repeated runs across languages)"), ending
    assert "told apart by a column named as the framework (columns: {framework: <column>})" \
        in said[3] and "drop 'information' from the panel's `analyses`" in said[3], ending
    assert "(rule ingest, panel mine)" in ending
    assert "cmi_null_shard" not in ending and "runs.parquet" not in ending
    assert not runs["no output"]  # no partial output


@pytest.mark.slow
def test_the_analyses_the_message_gives_run(runs):
    code, ending = runs["analyses fixed"]
    assert code == 0, ending
    assert "panels: mine (7 analyses)" in ending


@pytest.mark.slow
def test_information_listed_after_the_ingest_is_refused_by_its_step_naming_the_users_file(runs):
    code, ending = runs["information again"]
    assert code != 0 and "rule cmi_null_shard" in ending, ending
    assert "my_data/my_runs.csv: one run per task x language x backbone cell" in ending
    assert "results/mine/runs.parquet" not in ending


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
