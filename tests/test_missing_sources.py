"""A panel's own data that is not there stops the workflow at start-up, in the one message of
the config's problems, naming the path it looked for and the fix: Snakemake found it while
building the jobs and framed it as "InputFunctionException in rule ingest in file ..., line 44"
with traceback lines (a plain missing file as a MissingInputException), as if the workflow were
at fault. Every source kind: a file, a folder, a glob, a template, a Hive folder, Inspect logs,
a list, a preference panel's files, a verdict table and its texts, the tables of analyses. Data
a rule makes (synthetic panels, collections, a judgment tree's flattened table) is not looked
for."""
import re
from pathlib import Path

import pytest

from conftest import dry_run_in, start_up_refusal

REPO = Path(__file__).resolve().parents[1]
COLUMNS = {"task": "prompt_id", "language": "lang", "backbone": "judge_model", "score": "pct"}
RUNS = "prompt_id,lang,judge_model,pct\n" + "".join(
    f"p{t},{lang},{judge},{(7 * t + 3 * i + j) % 100}\n" for t in range(4)
    for i, lang in enumerate(["en", "de"]) for j, judge in enumerate(["a", "b"]))


def runs_panel(runs, **settings) -> dict:
    return {"kind": "judge_runs", "runs": runs, "columns": COLUMNS, "score_range": [0, 100],
            "analyses": ["cbc"], **settings}


def config_of(panels: dict) -> dict:
    return {"data_dir": "my_data", "panels": panels, "simulation": {"scenarios": {}}}


# panel -> (its config, what the start-up message says of it; {data}: data_dir, resolved)
MISSING = {
    "file": (runs_panel("my_runs.csv"), "panel 'file': `runs`: my_data/my_runs.csv: file or "
             "folder not found (looked for {data}/my_runs.csv)"),
    "folder": (runs_panel("judges/"), "my_data/judges: file or folder not found (looked for "
               "{data}/judges)"),
    "empty_folder": (runs_panel("empty"), "my_data/empty: is a folder without CSV, Parquet, "
                     "JSON Lines or JSON files"),
    "glob": (runs_panel("runs/*.csv"), "my_data/runs/*.csv: matches no file (looked for "
             "{data}/runs/*.csv)"),
    "template": (runs_panel({"template": "judges/{backbone}/{language}.jsonl"}),
                 "my_data/judges/*/*.jsonl: matches no file"),
    "hive": (runs_panel({"path": "partitioned", "partitioning": "hive"}),
             "my_data/partitioned: file or folder not found (looked for {data}/partitioned)"),
    "inspect": (runs_panel({"inspect": "logs/"}), "my_data/logs: not found (looked for "
                "{data}/logs)"),
    "listed": (runs_panel(["present.csv", "absent.csv"]), "my_data/absent.csv: file or folder "
               "not found"),
    "requirements": (runs_panel("present.csv", requirements="verdicts.csv"),
                     "panel 'requirements': `requirements`: my_data/verdicts.csv: file or "
                     "folder not found"),
    "preferences": ({"kind": "preference_margins", "analyses": ["cbc", "external"],
                     "files": {"judge_a": "a.csv", "judge_b": "present.csv"},
                     "anchor_sample": "anchor.csv"},
                    "panel 'preferences': `files.judge_a: a.csv` is not there (looked for "
                    "{data}/a.csv): fix the path (relative to data_dir, here {data})"),
    "verdicts": ({"kind": "pairwise_verdicts", "source": "table", "verdicts": "v.parquet",
                  "reference": "en", "conditions": None, "on_duplicate": "error",
                  "reference_texts": "en.parquet",
                  "variant_texts": {"zh": {"path": "zh.parquet", "kind": "full"}},
                  "analyses": ["judge_ls"]}, "panel 'verdicts': `verdicts`: my_data/v.parquet: "
                 "file or folder not found"),
}
MISSING["types"] = (runs_panel("present.csv", requirements="present.csv",
                              requirement_types="types.csv", analyses=["cbc", "requirement_type"]),
                    "panel 'types': `requirement_types: types.csv` is not there")
TEXTS = ["panel 'verdicts': `reference_texts: en.parquet` is not there (looked for "
         "{data}/en.parquet)", "panel 'verdicts': `variant_texts.zh.path: zh.parquet` is not "
         "there", "panel 'preferences': `anchor_sample: anchor.csv` is not there"]
FIX = "relative paths are read under data_dir, here {data}: fix the path or set data_dir"


def user_folder(tmp_path: Path) -> Path:
    data = tmp_path / "my_data"
    (data / "empty").mkdir(parents=True)
    (data / "present.csv").write_text(RUNS)
    return data


def test_every_missing_source_kind_is_a_start_up_problem(tmp_path, monkeypatch):
    data = user_folder(tmp_path)
    config = config_of({name: panel for name, (panel, _) in MISSING.items()})
    monkeypatch.chdir(tmp_path)  # data_dir as the workflow has it: under the working directory
    text = start_up_refusal(config, Path("my_data"))
    assert text.startswith("the config's panels name data that is not there (nothing was run)")
    for name, (_, says) in MISSING.items():
        assert f"panel '{name}': `" in text, (name, text)
        assert says.format(data=data) in text, (name, text)
    assert all(line.format(data=data) in text for line in TEXTS), text
    assert text.count(FIX.format(data=data)) == 9, text  # each table source, with its fix


def test_data_a_rule_makes_is_not_looked_for(tmp_path):
    """The default panels (a synthetic one, the repository's data) pass; a collected
    preference panel's files are the collection's, not the user's."""
    data = user_folder(tmp_path)
    config = config_of({"mine": runs_panel(str(data / "present.csv"))})
    from polyjudge import workflow_config
    from polyjudge.data.yamlfile import read_yaml
    defaults = read_yaml(REPO / "config" / "config.yaml")
    schema = read_yaml(REPO / "config" / "schema" / "config.schema.yaml")
    done = workflow_config.complete(config, defaults)
    assert workflow_config.source_problems(done["panels"], data) == []
    done = workflow_config.complete({}, defaults)
    assert workflow_config.source_problems(done["panels"], REPO / "data") == []
    tables, files = workflow_config.user_data({"kind": "synthetic", "analyses": ["cbc"]})
    assert tables == [] and files == []
    collected = {"kind": "preference_margins", "analyses": ["cbc"], "collect": {},
                 "files": {"a": "nowhere.csv"}}
    assert workflow_config.user_data(collected) == ([], [])
    assert workflow_config.problems(workflow_config.complete({}, defaults), REPO / "data",
                                    schema) == []


@pytest.mark.slow
def test_a_missing_source_stops_snakemake_with_the_message_alone(tmp_path):
    """A real `snakemake -n` start in the user's folder: the message names each path it
    looked for, with no Snakemake frame or traceback; with the file there, the run starts."""
    data = user_folder(tmp_path)
    panels = {name: MISSING[name][0] for name in ("file", "glob", "template", "inspect")}

    result = dry_run_in(tmp_path, config_of(panels))
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    for name in panels:
        assert MISSING[name][1].format(data=data) in out, (name, out)
    assert "in file" not in out and "Exception" not in out and "Traceback" not in out, out
    assert not re.search(r'^\s*File "', out, re.M), out  # no traceback line
    assert "Building DAG" not in out  # stopped before the jobs were built
    (data / "my_runs.csv").write_text(RUNS)  # the fix: the file where it was looked for
    panels = {"file": panels["file"]}
    fixed = dry_run_in(tmp_path, config_of(panels))
    assert fixed.returncode == 0, fixed.stdout[-2000:] + fixed.stderr[-2000:]
