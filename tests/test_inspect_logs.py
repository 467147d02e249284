"""Inspect AI eval logs as a panel source (polyjudge.read_inspect_logs and the workflow).

The logs are written by real, offline Inspect evaluations (tests/inspect_logs.py: Inspect's mock
model provider answers with planted scores; every internet socket is refused while they run), so
the reader meets what Inspect writes, and the planted table says what it must recover. Bad logs
are made the way they happen: a junk file, a copy, a scorer that wrote a value Inspect does not
know, a sample without a metadata key (edited into a .json log).
What the reader says where there is no log to read is tests/test_inspect_logs_absent.py.
"""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import polyjudge
from polyjudge.analyses.judge_ls.verdicts import VERDICT_COLUMNS
from polyjudge.data import inspect_logs as reader
from polyjudge.data.checksums import sha256
from polyjudge.data.errors import InputError
from polyjudge.data.io import read_table

REPO = Path(__file__).resolve().parents[1]
RUNS = ["task", "language", "backbone", "framework", "score"]


def write_logs(folder: Path, **options) -> pd.DataFrame:
    """Run the offline evals into ``folder`` with every internet connect refused."""
    pytest.importorskip("inspect_ai")
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from inspect_logs import write_inspect_logs
    finally:
        sys.path.pop(0)
    real = socket.socket.connect
    attempts = []

    def refuse(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise ConnectionRefusedError(f"test: network disabled ({address})")
        return real(sock, address)

    socket.socket.connect = refuse
    try:
        planted = write_inspect_logs(folder, **options)
    finally:
        socket.socket.connect = real
    assert not attempts, f"the Inspect evals tried the network: {attempts}"
    return planted


# Two layouts cover both log formats and both places of the grader (the eval's model, a model
# role); the format matters only to reading and the grader only to the mapping.
LAYOUTS = [("eval", "model"), ("json", "role")]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """Two graders x three languages x 4 samples x 2 epochs, in each layout."""
    written = {}
    for log_format, grader_as in LAYOUTS:
        folder = tmp_path_factory.mktemp(f"logs_{log_format}_{grader_as}")
        written[log_format, grader_as] = folder, write_logs(folder, log_format=log_format,
                                                            grader_as=grader_as, seed=3)
    return written


@pytest.fixture(params=LAYOUTS, ids=lambda p: f"{p[0]}-grader_{p[1]}")
def logs(request, layouts):
    return layouts[request.param]


@pytest.fixture
def json_logs(layouts):
    """The .json logs (editable as text; the grader is a model role)."""
    return layouts["json", "role"]


@pytest.fixture
def edited(json_logs, tmp_path):
    """A fresh copy of the .json logs to edit."""
    copy = tmp_path / "logs"
    shutil.copytree(json_logs[0], copy)
    return copy


def edit(path: Path, change) -> None:
    log = json.loads(path.read_text())
    change(log)
    path.write_text(json.dumps(log))


def log_of(folder: Path, language: str, grader: str = "mockllm/grader-a") -> Path:
    for path in sorted(folder.glob("*.json")):
        log = json.loads(path.read_text())
        if log["eval"]["task_args"]["language"] == language and grader in json.dumps(
                log["eval"]["model_roles"]):
            return path
    raise AssertionError(f"no log for {language} / {grader}")


def canonical(table: pd.DataFrame, keys) -> pd.DataFrame:
    return table.astype({k: str for k in keys}).sort_values(keys).reset_index(drop=True)


def one_csv(planted: pd.DataFrame, tmp_path: Path, score: str = "score") -> pd.DataFrame:
    """The same runs written as one CSV and read as any run table is."""
    path = tmp_path / "runs.csv"
    planted.assign(score=planted[score])[RUNS].to_csv(path, index=False)
    return read_table(path)


def assert_same_calibration(a: pd.DataFrame, b: pd.DataFrame) -> None:
    first, second = polyjudge.calibrate(a), polyjudge.calibrate(b)
    for axis in ("tasks", "languages", "backbones"):
        assert getattr(first.panel, axis) == getattr(second.panel, axis)
    assert np.array_equal(first.panel.values, second.panel.values)
    assert first.beta[["language", "backbone"]].equals(second.beta[["language", "backbone"]])
    assert np.array_equal(first.beta["beta"].to_numpy(), second.beta["beta"].to_numpy())


# --- what the logs hold -------------------------------------------------------------------------

def test_the_panel_equals_the_same_data_as_one_csv(logs, tmp_path):
    folder, planted = logs
    runs = polyjudge.read_inspect_logs(folder, scorer="judge_score")
    assert list(runs.columns) == RUNS and len(runs) == len(planted) == 48
    keys = ["task", "language", "backbone", "framework"]
    want = canonical(planted[RUNS].astype({"score": float}), keys)
    pd.testing.assert_frame_equal(canonical(runs, keys), want, check_dtype=False)
    assert_same_calibration(runs, one_csv(planted, tmp_path))
    # the language from the task argument (-T language=..) instead of the sample metadata
    by_argument = polyjudge.read_inspect_logs(folder, scorer="judge_score",
                                             language="task_arg.language")
    assert by_argument.equals(runs)


def test_a_list_of_logs_and_read_runs_give_the_same_panel(logs, tmp_path):
    folder, planted = logs
    files = sorted(str(p) for p in folder.iterdir() if p.suffix in (".eval", ".json"))
    assert len(files) == 6
    runs = polyjudge.read_inspect_logs(files, scorer="judge_score")
    assert runs.equals(polyjudge.read_inspect_logs(folder, scorer="judge_score"))
    validated = polyjudge.read_runs({"inspect": str(folder), "scorer": "judge_score"})
    assert_same_calibration(validated, one_csv(planted, tmp_path))


@pytest.mark.filterwarnings("ignore:.*encountered in divide:RuntimeWarning")  # CBC-Weighted
def test_letter_grades_become_numbers_as_inspect_converts_them(logs, tmp_path):
    folder, planted = logs
    runs = polyjudge.read_inspect_logs(folder, scorer="judge_grade")
    keys = ["task", "language", "backbone", "framework"]
    numbers = planted.assign(grade=planted["grade"].map({"C": 1.0, "P": 0.5, "I": 0.0}))
    assert set(planted["grade"]) == {"C", "P", "I"}
    assert np.array_equal(canonical(runs, keys)["score"].to_numpy(),
                          canonical(numbers, keys)["grade"].to_numpy())
    assert_same_calibration(runs, one_csv(numbers, tmp_path, score="grade"))


def test_the_evaluated_model_as_backbone(logs):
    folder, planted = logs
    if "role" in folder.name:  # one candidate, graded by two graders: two runs per candidate
        with pytest.raises(InputError, match="48 samples give the same run"):
            polyjudge.read_inspect_logs(folder, scorer="judge_score", backbone="model")
        return
    runs = polyjudge.read_inspect_logs(folder, scorer="judge_score", backbone="model")
    assert runs.equals(polyjudge.read_inspect_logs(folder, scorer="judge_score"))


@pytest.fixture(scope="module")
def pairwise(tmp_path_factory):
    """Pairwise judgments in both answer orders, one epoch."""
    folder = tmp_path_factory.mktemp("pairwise")
    planted = write_logs(folder, orders=("original", "swapped"), epochs=1, n_samples=5, seed=2)
    return folder, planted


def test_pairwise_verdicts_make_a_judge_ls_verdict_table(pairwise):
    folder, planted = pairwise
    verdicts = polyjudge.read_inspect_logs(folder, verdict_scorer="judge_pairwise",
                                          item="metadata.item")
    assert list(verdicts.columns) == VERDICT_COLUMNS
    want = pd.DataFrame({"item": planted["task"], "subset": "judge_panel",
                         "judge": planted["backbone"], "condition": planted["language"],
                         "order": planted["order"], "verdict": planted["verdict"],
                         "gold": planted["gold"]})
    keys = ["item", "judge", "condition", "order"]
    pd.testing.assert_frame_equal(canonical(verdicts, keys), canonical(want, keys),
                                  check_dtype=False)
    result = polyjudge.judge_ls(verdicts, reference="en")
    assert result.n_judgments == len(planted) and result.n_invalid == 0
    assert set(result.flips["target"]) == {"de", "ja"}
    assert len(result.position) > 0
    # every mapping can be overridden: the condition as a constant, the order from its field
    constant = polyjudge.read_inspect_logs(folder, verdict_scorer="judge_pairwise",
                                          item="metadata.item", condition="=all languages",
                                          judge="model", order="metadata.order")
    assert set(constant["condition"]) == {"all languages"}


def test_a_verdict_table_takes_one_epoch(logs):
    folder, _ = logs
    with pytest.raises(InputError, match=r"2 epochs \['1', '2'\].*\n.*`epoch: 1`"):
        polyjudge.read_inspect_logs(folder, verdict_scorer="judge_pairwise")
    first = polyjudge.read_inspect_logs(folder, verdict_scorer="judge_pairwise", epoch=1)
    assert len(first) == 24 and set(first["order"]) == {"original"}


# --- Inspect's traps ----------------------------------------------------------------------------

def test_a_renamed_json_log_is_read(json_logs, tmp_path):
    folder, planted = json_logs
    renamed = tmp_path / "renamed.json"  # Inspect's samples_df reads it as 0 rows
    shutil.copyfile(log_of(folder, "de"), renamed)
    runs = polyjudge.read_inspect_logs(renamed, scorer="judge_score")
    assert len(runs) == 8 and set(runs["language"]) == {"de"}


def test_score_types_may_differ_between_logs(edited):
    before = polyjudge.read_inspect_logs(edited, scorer="judge_score")

    def as_text(log):  # another lab's scorer wrote its numbers as text
        for sample in log["samples"]:
            sample["scores"]["judge_score"]["value"] = str(
                sample["scores"]["judge_score"]["value"])
    edit(log_of(edited, "de"), as_text)
    assert polyjudge.read_inspect_logs(edited, scorer="judge_score").equals(before)


def test_long_metadata_is_read_whole(edited):
    long = "x" * 3000  # Inspect's sample summaries shorten strings over 1k

    def annotate(log):
        for sample in log["samples"]:
            sample["metadata"]["rubric"] = long
    edit(log_of(edited, "ja"), annotate)
    runs = polyjudge.read_inspect_logs(log_of(edited, "ja"), scorer="judge_score",
                                      language="metadata.rubric")
    assert set(runs["language"]) == {long}


def sample_name(path: Path, index: int) -> tuple[str, int]:
    sample = json.loads(path.read_text())["samples"][index]
    return sample["id"], sample["epoch"]


def test_metadata_with_runs_of_spaces_is_read_as_written(edited):
    # sample summaries collapse it to "Simplified Chinese (zh)"
    label = "Simplified  Chinese\n(zh)"

    def relabel(log):
        for sample in log["samples"]:
            sample["metadata"]["language"] = label
    edit(log_of(edited, "ja"), relabel)
    runs = polyjudge.read_inspect_logs(log_of(edited, "ja"), scorer="judge_score")
    assert set(runs["language"]) == {label}


def test_errored_samples_are_reported_or_omitted(edited):
    failed = sample_name(log_of(edited, "de"), 1)

    def fail(log):
        sample = log["samples"][1]
        sample["error"] = {"message": "RuntimeError: the grader timed out", "traceback": "",
                           "traceback_ansi": ""}
        sample["scores"] = {}
    edit(log_of(edited, "de"), fail)
    with pytest.raises(InputError, match=r"1 sample\(s\) errored.*\n.*eval-retry") as error:
        polyjudge.read_inspect_logs(edited, scorer="judge_score")
    assert "the grader timed out" in str(error.value)
    assert f"{failed[0]}     {failed[1]}" in str(error.value)  # sample id and epoch
    runs = polyjudge.read_inspect_logs(edited, scorer="judge_score", missing="omit")
    assert runs["score"].isna().sum() == 1
    assert polyjudge.calibrate(runs, missing="omit").estimator == "plain"  # epoch 2 fills it


def test_a_log_of_an_unfinished_evaluation_is_refused(edited):
    edit(log_of(edited, "en"), lambda log: log.update(status="cancelled"))
    with pytest.raises(InputError, match="did not finish \\(status cancelled"):
        polyjudge.read_inspect_logs(edited, scorer="judge_score")
    assert len(polyjudge.read_inspect_logs(edited, scorer="judge_score", missing="omit")) == 48


# --- bad inputs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, content", [("bogus.eval", b"not a zip file"),
                                           ("results.json", b'{"accuracy": 0.5}'),
                                           ("notes.txt", b"hello")])
def test_a_file_that_is_not_a_log_is_named(edited, name, content):
    bad = edited / name
    bad.write_bytes(content)
    source = edited if name != "notes.txt" else [log_of(edited, "en"), bad]
    with pytest.raises(InputError, match=f"{name}: is not an Inspect log that inspect-ai"):
        polyjudge.read_inspect_logs(source, scorer="judge_score")


def test_an_unknown_scorer_lists_the_scorers_found(json_logs):
    with pytest.raises(InputError, match=r"no scorer 'judge_scores'; the logs' scorers are "
                       r"\['judge_grade', 'judge_pairwise', 'judge_score'\]"):
        polyjudge.read_inspect_logs(json_logs[0], scorer="judge_scores")
    with pytest.raises(InputError, match=r"the logs have 3 scorers .*\n.*`scorer: <name>`"):
        polyjudge.read_inspect_logs(json_logs[0])


def test_a_metadata_key_missing_in_some_samples_names_them(edited):
    def forget(log):
        for sample in log["samples"][:2]:
            del sample["metadata"]["language"]
    path = log_of(edited, "ja", "mockllm/grader-b")
    lacking = [sample_name(path, 0), sample_name(path, 1)]
    edit(path, forget)
    with pytest.raises(InputError, match=r"sample metadata key 'language', which 2 of 48 "
                       r"sample\(s\) lack") as error:
        polyjudge.read_inspect_logs(edited, scorer="judge_score")
    message = str(error.value)
    assert "task_arg.language" in message
    assert all(f"{name}     {epoch}" in message for name, epoch in lacking)
    runs = polyjudge.read_inspect_logs(edited, scorer="judge_score", language="task_arg.language")
    assert len(runs) == 48


@pytest.mark.parametrize("value", ["X", "c", "nan", "", [1, 2], {"grade": "C"}])
def test_an_unknown_score_value_is_refused(edited, value):
    """Inspect's value_to_float would give each of these 0.0 with a warning."""
    path = log_of(edited, "de")
    name, epoch = sample_name(path, 3)

    def grade(log):
        log["samples"][3]["scores"]["judge_grade"]["value"] = value
    edit(path, grade)
    with pytest.raises(InputError, match="1 'judge_grade' value\\(s\\) that Inspect cannot turn "
                       "into a number") as error:
        polyjudge.read_inspect_logs(edited, scorer="judge_grade")
    assert repr(value) in str(error.value) and f"{name}     {epoch}" in str(error.value)


def test_an_unknown_field_is_refused(json_logs):
    with pytest.raises(InputError, match="`language: langauge` is not a field"):
        polyjudge.read_inspect_logs(json_logs[0], scorer="judge_score", language="langauge")


def test_two_copies_of_a_log_are_refused(edited):
    original = log_of(edited, "de")
    copy = edited / "copy" / original.name
    copy.parent.mkdir()
    shutil.copyfile(original, copy)
    with pytest.raises(InputError, match="both are logs of the same evaluation") as error:
        polyjudge.read_inspect_logs(edited, scorer="judge_score")
    assert original.name in str(error.value) and "copy" in str(error.value)


def test_duplicate_runs_across_two_logs_name_both(edited):
    original = log_of(edited, "de")
    rerun = edited / "rerun.json"  # the same evaluation run again: a new eval_id, the same runs
    shutil.copyfile(original, rerun)
    edit(rerun, lambda log: log["eval"].update(eval_id="another-evaluation"))
    with pytest.raises(InputError, match="16 samples give the same run") as error:
        polyjudge.read_inspect_logs(edited, scorer="judge_score")
    assert str(original) in str(error.value) and str(rerun) in str(error.value)


def test_the_reader_names_the_columns_of_the_verdict_table():
    assert reader.VERDICT_COLUMNS == VERDICT_COLUMNS
    assert list(reader.RUN_FIELDS) + ["score"] == RUNS


# --- the workflow -------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_workflow_reads_an_inspect_panel(pairwise, tmp_path):
    data = tmp_path / "data"
    planted = write_logs(data / "inspect", log_format="eval", grader_as="role", seed=4)
    shutil.copytree(pairwise[0], data / "pairwise")
    planted[RUNS].to_csv(data / "runs.csv", index=False)
    config = {"data_dir": str(data), "simulation": {"scenarios": {}}, "panels": {
        "from_inspect": {"kind": "judge_runs", "analyses": ["cbc"],
                         "runs": {"inspect": "inspect", "scorer": "judge_score"}},
        "from_csv": {"kind": "judge_runs", "runs": "runs.csv", "analyses": ["cbc"]},
        "verdicts": {"kind": "pairwise_verdicts", "source": "table", "reference": "en",
                     "conditions": None, "on_duplicate": "error", "reference_texts": None,
                     "variant_texts": {}, "analyses": ["judge_ls"],
                     "verdicts": {"inspect": "pairwise", "verdict_scorer": "judge_pairwise",
                                  "item": "metadata.item"}},
        "unknown_scorer": {"kind": "judge_runs", "analyses": ["cbc"],
                           "runs": {"inspect": "inspect", "scorer": "judge"}}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    def snakemake(*targets):  # targets before --configfile, which takes several values
        return subprocess.run([sys.executable, "-m", "snakemake", *targets, "-s",
                               str(REPO / "Snakefile"), "--cores", "2", "--configfile",
                               "config.yaml"], cwd=tmp_path, capture_output=True, text=True)

    result = snakemake("results/from_inspect/cbc/beta.csv", "results/from_csv/cbc/beta.csv",
                       "results/verdicts/judge_ls/flips.csv")
    assert result.returncode == 0, result.stderr[-4000:]
    results = tmp_path / "results"
    assert (results / "from_inspect/cbc/beta.csv").read_bytes() == \
        (results / "from_csv/cbc/beta.csv").read_bytes()
    manifest = json.loads((results / "from_inspect/inputs.json").read_text())
    assert manifest["n_runs"] == 48
    flips = pd.read_csv(results / "verdicts/judge_ls/flips.csv")
    assert set(flips["target"]) == {"de", "ja"}
    logs = json.loads((results / "verdicts/judge_ls/inputs.json").read_text())["files"]
    assert sorted((Path(f["path"]).name, f["sha256"]) for f in logs["verdicts"]) == sorted(
        (p.name, sha256(p)) for p in (data / "pairwise").iterdir() if p.is_file())  # each log
    # a bad source stops ingest naming what is wrong, and leaves no partial output
    bad = snakemake("results/unknown_scorer/cbc/beta.csv")
    assert bad.returncode != 0
    assert "no scorer 'judge'; the logs' scorers are" in bad.stdout + bad.stderr
    assert not (results / "unknown_scorer").exists() or not any(
        p.suffix in (".parquet", ".csv", ".json") for p in (results / "unknown_scorer").rglob("*"))


def test_the_documented_example_runs(layouts, pairwise, tmp_path, monkeypatch):
    """The Inspect example of docs/api.md, on real logs (the docs test runs only ```python)."""
    text = (REPO / "docs" / "api.md").read_text()
    blocks = [b for b in re.findall(r"```py\n(.*?)```", text, re.S) if "read_inspect_logs" in b]
    assert len(blocks) == 1
    shutil.copytree(layouts["eval", "model"][0], tmp_path / "logs")
    shutil.copytree(pairwise[0], tmp_path / "pairwise_logs")
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(blocks[0], "docs/api.md", "exec"), namespace)
    assert len(namespace["runs"]) == 48 and namespace["ls_inspect"].n_invalid == 0


def test_an_errored_pairwise_sample_is_an_unparseable_verdict_with_omit(edited):
    path = log_of(edited, "de")
    index = next(i for i, s in enumerate(json.loads(path.read_text())["samples"])
                 if s["epoch"] == 1)

    def fail(log):
        log["samples"][index].update(scores={}, error={
            "message": "RateLimitError", "traceback": "", "traceback_ansi": ""})
    edit(path, fail)
    options = dict(verdict_scorer="judge_pairwise", epoch=1, order="=original")
    with pytest.raises(InputError, match="RateLimitError"):
        polyjudge.read_inspect_logs(edited, **options)
    verdicts = polyjudge.read_inspect_logs(edited, missing="omit", **options)
    assert (verdicts["verdict"] == "").sum() == 1
    assert polyjudge.judge_ls(verdicts, reference="en").n_invalid == 1
