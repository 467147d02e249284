"""A source's `constants`: a field every row shares, for files that do not hold it (the
language of a tool's output, most often)."""
import pandas as pd

import polyjudge
from test_sources import (JSON_COLUMNS, assert_same_panel, error_of, one_csv, runs_table,
                          write_jsonl)


def test_constants_set_the_language_of_files_that_do_not_hold_it(tmp_path):
    frame = runs_table(languages=("bn", "en"))
    for language, part in frame.groupby("language"):
        for backbone, rows in part.groupby("backbone"):
            write_jsonl(tmp_path / language / f"{backbone}.jsonl", rows)
    several = [{"template": f"{language}/{{backbone}}.jsonl", "constants": {"language": language}}
               for language in ("bn", "en")]  # a list of sources: one table
    runs = polyjudge.read_runs(several, JSON_COLUMNS, base_dir=tmp_path)
    assert set(runs["language"]) == {"bn", "en"} and len(runs) == len(frame)
    assert_same_panel(runs, one_csv(tmp_path, frame))


def test_a_file_named_by_two_sources_of_a_list_is_refused(tmp_path):
    write_jsonl(tmp_path / "en" / "gpt.jsonl", runs_table(languages=("en",), backbones=("gpt",)))
    several = [{"path": "en", "constants": {"language": "en"}},
               {"path": "en/*.jsonl", "constants": {"language": "bn"}}]
    message = error_of(polyjudge.read_runs, several, JSON_COLUMNS, base_dir=tmp_path)
    assert "gpt.jsonl" in message and "sources 1 and 2" in message


def test_a_constant_that_the_records_contradict_names_file_and_value(tmp_path):
    frame = runs_table(languages=("en",))
    write_jsonl(tmp_path / "runs.jsonl", frame, keys=("language", "backbone"))
    source = {"path": "runs.jsonl", "constants": {"language": "bn"}}
    message = error_of(polyjudge.read_runs, source, JSON_COLUMNS, base_dir=tmp_path)
    assert "runs.jsonl" in message and "constants" in message and "en" in message


def test_constants_must_be_one_value_per_field(tmp_path):
    one_csv(tmp_path, runs_table())
    for bad in ({"language": ["bn", "en"]}, "bn"):
        message = error_of(polyjudge.read_runs, {"path": "one.csv", "constants": bad},
                           base_dir=tmp_path)
        assert "constants" in message and "language: bn" in message
    message = error_of(polyjudge.read_runs, {"template": "{language}/x.jsonl",
                                             "constants": {"language": "bn"}}, base_dir=tmp_path)
    assert "both `constants` and the template" in message
