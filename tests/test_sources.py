"""Table sources (polyjudge.data.sources): many files as one table, fields from the paths, JSON
Lines with nested fields. Each source gives exactly the panel of the same runs in one CSV, through
polyjudge.read_runs here and through the workflow in tests/test_page_sources.py (one run over
every source kind); each bad input stops with the file (and line), also in the workflow."""
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyjudge
from polyjudge.analyses.judge_ls import validate_verdicts
from polyjudge.data import io, sources
from polyjudge.data.errors import InputError

JSON_COLUMNS = {"task": "id", "framework": "meta.repeat", "score": "result.score"}


def runs_table(seed=0, n_tasks=6, languages=("en", "de", "ja"), backbones=("gpt", "claude"),
               frameworks=("f1", "f2", "f3")) -> pd.DataFrame:
    """A complete run table; scores are multiples of 1/4, so sums are exact in any order."""
    grid = pd.MultiIndex.from_product(
        [[f"{i:03d}" for i in range(n_tasks)], list(languages), list(backbones), list(frameworks)],
        names=io.RUN_KEYS).to_frame(index=False)
    grid["score"] = np.random.default_rng(seed).integers(0, 401, len(grid)) / 4
    return grid


def write_jsonl(path: Path, frame: pd.DataFrame, keys=("task", "framework", "score")):
    """Records {"id", "meta": {"repeat"}, "result": {"score"}} plus fields the reader skips."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        for row in frame.itertuples():
            record = {"id": row.task, "meta": {"repeat": row.framework, "seed": 3},
                      "result": {"score": row.score, "tokens": [1, 2]}, "note": "x"}
            for key in ("language", "backbone"):
                if key in keys:
                    record[key] = getattr(row, key)
            handle.write(json.dumps(record) + "\n")


def jsonl_tree(root: Path, frame: pd.DataFrame) -> Path:
    for (backbone, language), part in frame.groupby(["backbone", "language"]):
        write_jsonl(root / "judges" / backbone / f"{language}.jsonl", part)
    return root


def hive_tree(root: Path, frame: pd.DataFrame) -> Path:
    for (backbone, language), part in frame.groupby(["backbone", "language"]):
        folder = root / "hive" / f"backbone={backbone}" / f"language={language}"
        folder.mkdir(parents=True)
        part.drop(columns=["backbone", "language"]).to_parquet(folder / "part-0.parquet",
                                                               index=False)
    return root


def one_csv(root: Path, frame: pd.DataFrame) -> Path:
    frame.to_csv(root / "one.csv", index=False)
    return root / "one.csv"


def assert_same_panel(runs: pd.DataFrame, expected_csv: Path):
    """The same tensor and beta as the one-CSV table, bit for bit."""
    got, want = polyjudge.calibrate(runs), polyjudge.calibrate(polyjudge.read_runs(expected_csv))
    assert (got.panel.tasks, got.panel.languages, got.panel.backbones) == \
        (want.panel.tasks, want.panel.languages, want.panel.backbones)
    assert np.array_equal(got.panel.values, want.panel.values)
    assert np.array_equal(got.panel.n_runs, want.panel.n_runs)
    assert np.array_equal(got.beta["beta"].to_numpy(), want.beta["beta"].to_numpy())


def error_of(function, *args, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


# --- each kind of source gives the one-CSV panel -------------------------------------------------

def test_templated_json_lines_tree_with_nested_fields(tmp_path):
    frame = runs_table()
    jsonl_tree(tmp_path, frame)
    runs = polyjudge.read_runs({"template": "judges/{backbone}/{language}.jsonl"}, JSON_COLUMNS,
                              base_dir=tmp_path)
    assert list(runs.columns) == io.RUN_COLUMNS and len(runs) == len(frame)
    assert set(runs["task"]) == {f"{i:03d}" for i in range(6)}  # ids as written
    assert_same_panel(runs, one_csv(tmp_path, frame))


def test_template_fields_under_their_own_names_are_mapped_by_columns(tmp_path):
    frame = runs_table()
    jsonl_tree(tmp_path, frame)
    runs = polyjudge.read_runs(str(tmp_path / "judges"), {**JSON_COLUMNS, "backbone": "judge"},
                              template="judges/{judge}/{language}.jsonl")
    assert_same_panel(runs, one_csv(tmp_path, frame))


def test_hive_partitioned_parquet_folder(tmp_path):
    frame = runs_table(seed=1)
    hive_tree(tmp_path, frame)
    runs = polyjudge.read_runs(tmp_path / "hive", partitioning="hive")
    assert_same_panel(runs, one_csv(tmp_path, frame))


def test_glob_list_and_folder_of_csv_and_parquet(tmp_path):
    frame = runs_table(seed=2)
    folder = tmp_path / "tables"
    folder.mkdir()
    for i, (backbone, part) in enumerate(frame.groupby("backbone")):
        if i % 2:
            part.to_parquet(folder / f"runs_{backbone}.parquet", index=False)
        else:
            part.to_csv(folder / f"runs_{backbone}.csv", index=False)
    (folder / "_SUCCESS").write_text("")  # marker files are not tables
    expected = one_csv(tmp_path, frame)
    assert_same_panel(polyjudge.read_runs("tables/runs_*", base_dir=tmp_path), expected)
    files = sorted(str(p) for p in folder.glob("runs_*"))
    assert_same_panel(polyjudge.read_runs(files), expected)
    assert_same_panel(polyjudge.read_runs(folder), expected)


def test_json_array_of_records_and_json_lines_named_json(tmp_path):
    frame = runs_table(seed=3)
    records = [{"task": r.task, "language": r.language, "backbone": r.backbone,
                "run": {"framework": r.framework, "score": r.score}} for r in frame.itertuples()]
    (tmp_path / "array.json").write_text(json.dumps(records[:40]))
    (tmp_path / "lines.json").write_text("\n".join(json.dumps(r) for r in records[40:]))
    runs = polyjudge.read_runs([str(tmp_path / "array.json"), str(tmp_path / "lines.json")],
                              {"framework": "run.framework", "score": "run.score"})
    assert_same_panel(runs, one_csv(tmp_path, frame))


def test_values_of_other_types_are_read_as_written(tmp_path):
    """Numbers as task ids, quoted scores: pyarrow's typed reader hands over to the plain one."""
    lines = ['{"task": 7, "language": "en", "backbone": "a", "score": 1}',
             '{"task": "007", "language": "en", "backbone": "b", "score": "2.5"}',
             '{"task": 7, "language": "de", "backbone": "a", "score": 3}',
             '{"task": "007", "language": "de", "backbone": "b", "score": 4}',
             '{"task": 7, "language": "en", "backbone": "b", "score": 5}',
             '{"task": 7, "language": "de", "backbone": "b", "score": 6}',
             '{"task": "007", "language": "en", "backbone": "a", "score": 7}',
             '{"task": "007", "language": "de", "backbone": "a", "score": 8}']
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    runs = polyjudge.read_runs(tmp_path / "runs.jsonl", batch_rows=2)
    assert sorted(runs["task"].astype(str).unique()) == ["007", "7"]
    assert runs["score"].tolist() == [1, 2.5, 3, 4, 5, 6, 7, 8]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), batch_rows=st.sampled_from([1, 2, 5, 64, 10_000]),
       kind=st.sampled_from(["jsonl", "hive", "csv"]), shuffle=st.booleans())
@pytest.mark.slow
def test_any_batch_size_gives_the_same_tensor(tmp_path_factory, seed, batch_rows, kind, shuffle):
    # 36 runs: files of 6 (JSON Lines, Hive) or 18 (CSV) rows, so 1, 2 and 5 rows split every
    # file and 64 and 10,000 read each whole, as with more tasks at a fraction of the batches
    frame = runs_table(seed=seed, n_tasks=2)
    if shuffle:
        frame = frame.sample(frac=1, random_state=seed).reset_index(drop=True)
    root = tmp_path_factory.mktemp("batches")
    if kind == "jsonl":
        jsonl_tree(root, frame)
        runs = polyjudge.read_runs({"template": "judges/{backbone}/{language}.jsonl"},
                                  JSON_COLUMNS, base_dir=root, batch_rows=batch_rows)
    elif kind == "hive":
        hive_tree(root, frame)
        runs = polyjudge.read_runs(root / "hive", partitioning="hive", batch_rows=batch_rows)
    else:
        for backbone, part in frame.groupby("backbone"):
            part.to_csv(root / f"{backbone}.csv", index=False)
        runs = polyjudge.read_runs(f"{root}/*.csv", batch_rows=batch_rows)
    assert_same_panel(runs, one_csv(root, frame))


# --- bad sources: each stops naming the files ----------------------------------------------------

def test_a_pattern_that_matches_nothing(tmp_path):
    message = error_of(polyjudge.read_runs, "judges/*/*.jsonl", base_dir=tmp_path)
    assert "judges/*/*.jsonl: matches no file" in message
    message = error_of(polyjudge.read_runs, {"template": "judges/{backbone}/{language}.jsonl"},
                       base_dir=tmp_path)
    assert "judges/*/*.jsonl: matches no file" in message


def test_a_path_outside_the_template(tmp_path):
    frame = runs_table()
    jsonl_tree(tmp_path, frame)
    stray = tmp_path / "judges" / "gpt" / "old" / "en.jsonl"
    stray.parent.mkdir()
    shutil.copy(tmp_path / "judges" / "gpt" / "en.jsonl", stray)
    message = error_of(polyjudge.read_runs, {"path": "judges/**/*.jsonl",
                                            "template": "judges/{backbone}/{language}.jsonl"},
                       JSON_COLUMNS, base_dir=tmp_path)
    assert f"{stray}: does not fit the template 'judges/{{backbone}}/{{language}}.jsonl'" in \
        message


def test_hive_files_need_key_value_folders(tmp_path):
    runs_table().to_parquet(tmp_path / "flat.parquet")
    message = error_of(polyjudge.read_runs, tmp_path, partitioning="hive")
    assert "flat.parquet: has no key=value folder above it" in message


def test_the_same_run_in_two_files_names_both(tmp_path):
    frame = runs_table()
    jsonl_tree(tmp_path, frame)
    gpt_en = frame[(frame.backbone == "gpt") & (frame.language == "en")]
    write_jsonl(tmp_path / "again" / "gpt" / "en.jsonl", gpt_en.iloc[[1]])  # its line 2 again
    message = error_of(polyjudge.read_runs, {"path": ["judges/*/*.jsonl", "again/*/*.jsonl"],
                                            "template": "{backbone}/{language}.jsonl"},
                       JSON_COLUMNS, base_dir=tmp_path)
    assert ("2 rows share the same ['id', 'language', 'backbone', 'meta.repeat'] (task, "
            "language, backbone, framework)") in message  # the fields as the records name them
    assert "again/gpt/en.jsonl:1 " in message and "judges/gpt/en.jsonl:2 " in message
    assert f"file:line, files under {tmp_path}" in message


def test_a_record_without_a_nested_field_names_file_and_line(tmp_path):
    frame = runs_table()
    jsonl_tree(tmp_path, frame)
    path = tmp_path / "judges" / "claude" / "de.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[5])
    del record["result"]["score"]
    lines[5] = json.dumps(record)
    path.write_text("\n\n".join(lines[:3]) + "\n" + "\n".join(lines[3:]) + "\n")  # blank lines
    source = {"template": "judges/{backbone}/{language}.jsonl"}
    message = error_of(polyjudge.read_runs, source, JSON_COLUMNS, base_dir=tmp_path)
    assert f"{path}: 1 record(s) without a value at 'result.score' (the score): line(s) 8" in \
        message
    # with missing: omit the run is left out instead
    runs = polyjudge.read_runs(source, JSON_COLUMNS, base_dir=tmp_path, missing="omit")
    assert len(runs) == len(frame) - 1
    record = json.loads(lines[6])
    del record["meta"]
    lines[6] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    message = error_of(polyjudge.read_runs, source, JSON_COLUMNS, base_dir=tmp_path,
                       missing="omit")
    assert f"{path}: 1 record(s) without a value at 'meta.repeat' (the framework): line(s) 7" \
        in message


def test_an_unreadable_json_line_names_file_and_line(tmp_path):
    frame = runs_table()
    jsonl_tree(tmp_path, frame)
    path = tmp_path / "judges" / "gpt" / "ja.jsonl"
    lines = path.read_text().splitlines()
    lines[9] = lines[9][:-3]  # cut off: not JSON
    path.write_text("\n".join(lines) + "\n")
    message = error_of(polyjudge.read_runs, {"template": "judges/{backbone}/{language}.jsonl"},
                       JSON_COLUMNS, base_dir=tmp_path)
    assert f"{path}: line 10 is not valid JSON" in message


def test_bad_scores_in_a_later_file_are_named_by_file_and_line(tmp_path):
    frame = runs_table()
    hive_tree(tmp_path, frame)
    path = tmp_path / "hive" / "backbone=gpt" / "language=ja" / "part-0.parquet"
    part = pd.read_parquet(path)
    part.loc[3, "score"] = 150.0
    part.to_parquet(path, index=False)
    message = error_of(polyjudge.read_runs, tmp_path / "hive", partitioning="hive",
                       score_range=[0, 100])
    assert "1 score(s) outside [0, 100]" in message
    assert "backbone=gpt/language=ja/part-0.parquet:5 " in message


def test_files_with_different_columns_and_a_field_given_twice(tmp_path):
    frame = runs_table()
    frame.iloc[:50].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[50:].drop(columns="framework").to_csv(tmp_path / "b.csv", index=False)
    message = error_of(polyjudge.read_runs, [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")])
    assert f"{tmp_path / 'b.csv'}: has the columns" in message and "a.csv has" in message
    folder = tmp_path / "t" / "gpt"
    folder.mkdir(parents=True)
    frame.to_csv(folder / "en.csv", index=False)
    message = error_of(polyjudge.read_runs, {"path": str(tmp_path / "t"),
                                            "template": "{backbone}/{language}.csv"})
    assert "field 'backbone' is 'gpt' in its path" in message  # more: test_path_fields.py


def test_template_fields_are_matched_from_the_end_of_the_path():
    assert sources.template_fields("judges/{backbone}/{language}.jsonl",
                                   "/data/judges/gpt-4o/en.jsonl") == \
        {"backbone": "gpt-4o", "language": "en"}
    assert sources.template_fields("{backbone}/part-{n}.jsonl", "x/a.b/part-07.jsonl") == \
        {"backbone": "a.b", "n": "07"}
    assert sources.template_fields("judges/{backbone}/{language}.jsonl",
                                   "/data/judges/gpt/old/en.jsonl") is None
    assert sources.template_fields("{b}/{b}.csv", "x/y.csv") is None  # the same name twice
    assert sources.template_fields("{b}/{b}.csv", "x/x.csv") == {"b": "x"}
    assert sources.hive_fields("/d/backbone=a%2Fb/language=en/part-0.parquet") == \
        {"backbone": "a/b", "language": "en"}


# --- requirement and verdict tables from many files ----------------------------------------------

def test_requirement_table_from_a_glob_equals_the_one_file(tmp_path):
    table = pd.read_parquet(Path(__file__).resolve().parents[1] / "data" / "devai_ml_aaaj"
                            / "requirement_judgments.parquet")
    table = table[table["backbone"].isin(["gpt-4o", "qwen3.5-9b"])]
    for backbone, part in table.groupby("backbone"):
        folder = tmp_path / f"backbone={backbone}"
        folder.mkdir()
        part.drop(columns="backbone").to_parquet(folder / "part.parquet", index=False)
    value = {"path": ".", "partitioning": "hive"}
    files = sources.source_inputs(value, tmp_path)
    frame = sources.read_source(value, files, fields=sources.REQUIREMENT_FIELDS)
    got = io.runs_from_requirements(frame, "glob").sort_values(io.RUN_KEYS, ignore_index=True)
    table.to_parquet(tmp_path / "one.parquet", index=False)
    want = io.runs_from_requirements(io.read_table(tmp_path / "one.parquet"), "one")
    pd.testing.assert_frame_equal(got, want.sort_values(io.RUN_KEYS, ignore_index=True),
                                  check_dtype=False, check_categorical=False)


def test_verdict_table_from_json_lines_names_file_and_line(tmp_path):
    rows = [{"item": i, "subset": "s", "judge": j, "condition": "en", "order": o,
             "verdict": "A", "gold": 1} for i in range(3) for j in ("x", "y")
            for o in ("original", "swapped")]
    for judge in ("x", "y"):
        with open(tmp_path / f"{judge}.jsonl", "w") as handle:
            for row in rows:
                if row["judge"] == judge:
                    handle.write(json.dumps({k: v for k, v in row.items() if k != "judge"})
                                 + "\n")
    value = {"path": "*.jsonl", "template": "{judge}.jsonl"}
    files = sources.source_inputs(value, tmp_path)
    frame = sources.read_source(value, files, fields=sources.VERDICT_FIELDS)
    checked = validate_verdicts(frame, sources.describe(value))
    assert len(checked) == 12 and set(checked["gold"]) == {"1"}
    with open(tmp_path / "y.jsonl", "a") as handle:
        handle.write(json.dumps({**rows[2], "order": "sideways"}) + "\n")  # judge y
    frame = sources.read_source(value, sources.source_inputs(value, tmp_path),
                                fields=sources.VERDICT_FIELDS)
    message = error_of(validate_verdicts, frame, sources.describe(value))
    assert "`order` values ['sideways']" in message and "y.jsonl:7 " in message


# --- the workflow: a bad `runs:` source stops ingest and leaves nothing --------------------------

def workflow_config(data: Path, panels: dict) -> dict:
    common = {"kind": "judge_runs", "score_range": [0, 100], "analyses": ["cbc"]}
    return {"data_dir": str(data), "panels": {name: {**common, **panel}
                                              for name, panel in panels.items()},
            "simulation": {"scenarios": {}}}


# problem -> where the workflow finds it: reading the files (ingest) or listing them, at
# start-up (the config's check, tests/test_missing_sources.py), before any job starts
BAD_SOURCES = {"duplicate": "ingest", "field": "ingest", "json": "ingest", "label": "ingest",
               "header_only": "ingest", "no_match": "start-up"}


def bad_source(data: Path, problem: str) -> tuple[dict, list[str]]:
    """The runs under ``data/<problem>/`` with one problem planted: the panel (its `runs`
    source and columns) and the texts its message must hold. Each is a JSON Lines tree, but
    `header_only`: a user's own run table (tests/test_workflow.py) cut to its header line."""
    if problem == "header_only":
        from test_workflow import own_data_config
        (data / problem).mkdir()
        mine = own_data_config(data / problem)["panels"]["mine"]
        path = data / problem / "data" / mine["runs"]
        path.write_text(path.read_text().splitlines()[0] + "\n")
        return ({**mine, "runs": f"{problem}/data/{mine['runs']}"},
                ["my_runs.csv: has a header but no rows: no runs"])
    frame = runs_table()
    jsonl_tree(data / problem, frame)
    panel = {"runs": {"template": f"{problem}/judges/{{backbone}}/{{language}}.jsonl"},
             "columns": JSON_COLUMNS}
    path = data / problem / "judges" / "gpt" / "de.jsonl"
    lines = path.read_text().splitlines()
    if problem == "duplicate":
        write_jsonl(data / problem / "more" / "gpt" / "de.jsonl", frame.iloc[[frame.index[
            (frame.backbone == "gpt") & (frame.language == "de")][0]]])
        panel["runs"] = {"path": [f"{problem}/judges/*/*.jsonl", f"{problem}/more/*/*.jsonl"],
                         "template": "{backbone}/{language}.jsonl"}
        return panel, ["2 rows share the same", "judges/gpt/de.jsonl:1", "more/gpt/de.jsonl:1"]
    if problem == "no_match":
        panel["runs"] = {"template": f"{problem}/judge/{{backbone}}/{{language}}.jsonl"}
        return panel, ["judge/*/*.jsonl: matches no file"]
    if problem == "field":
        record = json.loads(lines[2])
        del record["meta"]["repeat"]
        path.write_text("\n".join(lines[:2] + [json.dumps(record)] + lines[3:]) + "\n")
        return panel, [f"{path}: 1 record(s) without a value at 'meta.repeat'", "line(s) 3"]
    if problem == "label":  # a record naming another judge than its folder
        record = {**json.loads(lines[2]), "backbone": "claude"}
        path.write_text("\n".join(lines[:2] + [json.dumps(record)] + lines[3:]) + "\n")
        return panel, [f"{path}: field 'backbone' is 'gpt' in its path", "1 of its 18 records "
                       "(line(s) 3)", "`path_fields: record` in the source"]
    path.write_text("\n".join(lines[:4] + ["{not json"] + lines[4:]) + "\n")
    return panel, [f"{path}: line 5 is not valid JSON"]


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory) -> dict:
    """problem -> (workdir, its snakemake run, the texts its message must hold), one panel
    `bad_<problem>` per problem. The problems ingest finds share one run with --keep-going (each
    panel's ingest runs and fails on its own; one workflow start instead of one per problem);
    one found at start-up stops the whole run, so it has a run of its own."""
    from test_workflow import snakemake, write_config
    runs = {}
    for stage in ("ingest", "start-up"):
        workdir = tmp_path_factory.mktemp(f"bad_sources_{stage}")
        data = workdir / "data"
        data.mkdir()
        panels, expected = {}, {}
        for problem in [p for p, where in BAD_SOURCES.items() if where == stage]:
            panels[f"bad_{problem}"], expected[problem] = bad_source(data, problem)
        config = write_config(workdir, workflow_config(data, panels))
        result = snakemake(workdir, *[f"results/{name}/cbc/beta.csv" for name in panels],
                           "--keep-going", "--configfile", str(config), check=False)
        runs.update({problem: (workdir, result, texts) for problem, texts in expected.items()})
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("problem", list(BAD_SOURCES))
def test_workflow_stops_on_a_bad_source_and_leaves_no_output(bad_runs, problem):
    workdir, result, expected = bad_runs[problem]
    assert result.returncode != 0
    results = workdir / "results" / f"bad_{problem}"
    for text in expected:
        assert text in result.stdout + result.stderr, (text, result.stderr[-3000:])
    if BAD_SOURCES[problem] == "ingest":  # the message is this panel's own, in its own log
        log = (results / "logs" / "ingest.log").read_text()
        assert f"(rule ingest, panel bad_{problem})" in log
        assert all(text in log for text in expected) and "Traceback" not in log, log
    for name in ("runs.parquet", "runs.parquet.part", "tensor.parquet", "cell_means.csv",
                 "inputs.json"):
        assert not (results / name).exists(), name
    assert not list(results.rglob("*.parquet")) and not (results / "cbc").exists()

