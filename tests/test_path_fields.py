"""A field a file's path gives that its records hold too (polyjudge.data.path_fields): the two
must agree, or the source says which to trust (`path_fields: check | path | record`).

The planted case is upstream AlpacaEval's layout, results/<model>/<annotator>/annotations.json
(a JSON array of records that name their own `annotator` and `generator_2`), one tree per
language, with one folder holding another annotator's records: taken from the folder silently,
that annotator would be counted twice, under two names. The same message comes from the reader
in memory and the streamed one (small batches, so a file's disagreeing records are counted
across batches), and from JSON Lines, CSV and Hive-partitioned Parquet. The workflow's case
(a real `snakemake` run) is in tests/test_sources.py's bad sources.
"""
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import polyjudge
from polyjudge.data import sources
from polyjudge.data.errors import InputError

ANNOTATORS = ("alpaca_eval_gpt4_turbo_fn", "alpaca_eval_cot_gpt4_turbo_fn",
              "weighted_alpaca_eval_gpt4_turbo")
GENERATORS = ("gpt-4o-2024-05-13", "Meta-Llama-3-70B-Instruct")
INSTRUCTIONS = ("What are the names of some famous actors that started their careers on "
                "Broadway?", "How did US states get their names?")
TEMPLATE = "{language}/results/{generator_2}/{annotator}/annotations.json"
COLUMNS = {"task": "instruction", "backbone": "annotator", "framework": "generator_2",
           "score": "preference"}
WRONG = Path("en/results/gpt-4o-2024-05-13/alpaca_eval_gpt4_turbo_fn/annotations.json")
RIGHT = Path("en/results/gpt-4o-2024-05-13/alpaca_eval_cot_gpt4_turbo_fn/annotations.json")


def annotations(language: str, generator: str, annotator: str) -> list[dict]:
    """Records as AlpacaEval writes them (the fields it writes, not all of them read here)."""
    shift = ANNOTATORS.index(annotator) + 3 * GENERATORS.index(generator) + (language == "de")
    return [{"instruction": text, "output_1": "(the reference's answer)",
             "generator_1": "gpt4_1106_preview", "dataset": "helpful_base",
             "output_2": "(the model's answer)", "generator_2": generator,
             "annotator": annotator, "preference": 1 + ((i + shift) % 5) / 4,
             "price_per_example": 0.0128, "time_per_example": 1.31,
             "raw_completion": {"logprobs": None}} for i, text in enumerate(INSTRUCTIONS)]


def alpaca_tree(root: Path, mixed_up: bool = True) -> Path:
    """en/ and de/ AlpacaEval results trees; ``mixed_up``: the en gpt-4o folder of
    alpaca_eval_gpt4_turbo_fn holds a copy of alpaca_eval_cot_gpt4_turbo_fn's annotations."""
    for language in ("en", "de"):
        for generator in GENERATORS:
            for annotator in ANNOTATORS:
                folder = root / language / "results" / generator / annotator
                folder.mkdir(parents=True)
                (folder / "annotations.json").write_text(
                    json.dumps(annotations(language, generator, annotator), indent=2))
    if mixed_up:
        shutil.copy(root / RIGHT, root / WRONG)
    return root


def error_of(function, *args, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def test_a_folder_holding_another_annotators_records_stops_naming_both(tmp_path):
    root = alpaca_tree(tmp_path)
    source = {"template": TEMPLATE}
    streamed = error_of(polyjudge.read_runs, source, COLUMNS, base_dir=root, batch_rows=2)
    assert streamed.startswith(
        f"{root / WRONG}: field 'annotator' (the backbone) is 'alpaca_eval_gpt4_turbo_fn' in "
        f"its path (the template '{TEMPLATE}') but 'alpaca_eval_cot_gpt4_turbo_fn' in field "
        "'annotator' of 2 of its 2 records (record(s) 1, 2)\n"), streamed
    assert "`path_fields: path` in the source (the path's value for every row)" in streamed
    assert "`path_fields: record` in the source (each record's own value" in streamed
    assert "field 'generator_2'" not in streamed  # that field agrees
    # the reader in memory (requirement and verdict tables, the console script): the same
    in_memory = error_of(sources.read_source, source, sources.source_inputs(source, root),
                         COLUMNS)
    assert in_memory == streamed


def test_trusting_the_path_counts_one_annotator_twice(tmp_path):
    """`path`: the folder names the judge, as the reader did before it compared: the cot
    annotator's scores come back under the folder's name too."""
    runs = polyjudge.read_runs({"template": TEMPLATE, "path_fields": "path"}, COLUMNS,
                               base_dir=alpaca_tree(tmp_path))
    assert len(runs) == 2 * 2 * 3 * 2 and set(runs["backbone"]) == set(ANNOTATORS)
    en_gpt4o = runs[(runs["language"] == "en") & (runs["framework"] == GENERATORS[0])]
    scores = en_gpt4o.pivot(index="task", columns="backbone", values="score")
    assert scores["alpaca_eval_gpt4_turbo_fn"].equals(scores["alpaca_eval_cot_gpt4_turbo_fn"])


def test_trusting_the_records_finds_the_copy(tmp_path):
    """`record` (the keyword of read_runs): the copied records are the cot annotator's runs a
    second time, and the run stops naming both files."""
    message = error_of(polyjudge.read_runs, {"template": TEMPLATE}, COLUMNS,
                       base_dir=alpaca_tree(tmp_path), path_fields="record", batch_rows=3)
    assert "4 rows share the same ['instruction', 'language', 'annotator', 'generator_2']" \
        in message
    assert f"{WRONG.as_posix()}:1 " in message and f"{RIGHT.as_posix()}:1 " in message


def test_agreeing_folders_read_alike_under_every_setting(tmp_path):
    root = alpaca_tree(tmp_path, mixed_up=False)
    read = [polyjudge.read_runs({"template": TEMPLATE}, COLUMNS, base_dir=root,
                                path_fields=setting, batch_rows=4)
            for setting in (None, "check", "path", "record")]
    assert len(read[0]) == 24 and set(read[0]["backbone"]) == set(ANNOTATORS)
    for other in read[1:]:
        pd.testing.assert_frame_equal(other, read[0])


def write_lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(json.dumps(r) for r in records)
    path.write_text(text.replace("\n", "\n\n", 1) + "\n")  # a blank line: lines != records
    return path


def test_json_lines_count_disagreeing_records_across_batches(tmp_path):
    """7 records, 2 of another judge (lines 4 and 8: a blank line after the first), one
    without the field (it takes the path's); batches of 2: counted in the whole file."""
    records = [{"id": f"t{i}", "lang": "en", "judge": "gpt-4o", "score": float(i)}
               for i in range(7)]
    records[2]["judge"] = records[6]["judge"] = " claude-3-opus "  # stripped as labels are
    del records[4]["judge"]
    path = write_lines(tmp_path / "judges" / "gpt-4o" / "en.jsonl", records)
    write_lines(tmp_path / "judges" / "claude-3-opus" / "en.jsonl",  # all but t2, t6
                [{**records[i], "judge": "claude-3-opus"} for i in (0, 1, 3, 5)])
    source = {"template": "judges/{judge}/{lang}.jsonl"}
    columns = {"task": "id", "language": "lang", "backbone": "judge"}
    for batch_rows in (2, 100):
        message = error_of(polyjudge.read_runs, source, columns, base_dir=tmp_path,
                           batch_rows=batch_rows)
        assert message.startswith(f"{path}: field 'judge' (the backbone) is 'gpt-4o' in its "
                                  "path (the template 'judges/{judge}/{lang}.jsonl') but "
                                  "'claude-3-opus' in field 'judge' of 2 of its 7 records "
                                  "(line(s) 4, 8)\n"), message
    runs = polyjudge.read_runs(source, columns, base_dir=tmp_path, path_fields="record",
                               missing="omit", batch_rows=2)
    judged = runs.groupby("backbone", observed=True)["task"].agg(sorted).to_dict()
    assert judged == {"gpt-4o": ["t0", "t1", "t3", "t4", "t5"],  # t4: the path's label
                      "claude-3-opus": ["t0", "t1", "t2", "t3", "t5", "t6"]}


def test_a_hive_folder_and_a_column_of_the_same_name(tmp_path):
    """pyarrow keeps a partition column inside the files when asked to: the two must agree."""
    for backbone in ("gpt-4o", "claude-3-opus"):
        for language in ("en", "de"):
            folder = tmp_path / f"backbone={backbone}" / f"language={language}"
            folder.mkdir(parents=True)
            pd.DataFrame({"task": ["t1", "t2", "t3"], "backbone": backbone,
                          "score": [1.0, 2.0, 3.0]}).to_parquet(folder / "part-0.parquet")
    assert len(polyjudge.read_runs(tmp_path, partitioning="hive")) == 12
    bad = tmp_path / "backbone=gpt-4o" / "language=de" / "part-0.parquet"
    pd.DataFrame({"task": ["t1", "t2", "t3"], "backbone": ["gpt-4o", "gpt-4o-mini", "gpt-4o"],
                  "score": [1.0, 2.0, 3.0]}).to_parquet(bad)
    message = error_of(polyjudge.read_runs, tmp_path, partitioning="hive")
    assert message.startswith(f"{bad}: field 'backbone' is 'gpt-4o' in its path (its key=value "
                              "folders) but 'gpt-4o-mini' in column 'backbone' of 1 of its 3 "
                              "rows (row(s) 3)\n"), message
    assert "fix the rows" in message


def test_the_setting_is_checked_where_sources_are(tmp_path):
    message = error_of(sources.spec_of, {"template": TEMPLATE, "path_fields": "folder"})
    assert "path_fields 'folder'" in message and "['check', 'path', 'record']" in message
    message = error_of(sources.spec_of, {"path": "runs/", "path_fields": "path"})
    assert "path_fields without fields from the paths" in message


def test_the_console_script_names_its_flag(tmp_path, capsys):
    from test_cli import in_process
    alpaca_tree(tmp_path)
    flags = ["--task", "instruction", "--backbone", "annotator", "--framework", "generator_2",
             "--score", "preference", "--template", TEMPLATE, "--band-replicates", "0"]
    result = in_process("fit", ".", "-o", "c.json", *flags, cwd=tmp_path, capsys=capsys)
    assert result.returncode == 2 and "--path-fields path (the path's value" in result.stderr
    assert "Traceback" not in result.stderr
    result = in_process("fit", ".", "-o", "c.json", *flags, "--path-fields", "path",
                        cwd=tmp_path, capsys=capsys)
    assert result.returncode == 0, result.stderr
