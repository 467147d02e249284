"""Reading a user's run table: identifiers as text, tolerated CSV dialects, and generated
corruptions that must either read correctly or stop with one InputError (never a traceback)."""
import csv
import io as stdio
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_workflow import own_data_config, snakemake, write_config

from polyjudge.data import io
from polyjudge.data.errors import InputError

HEADER = ["task", "language", "backbone", "framework", "score"]


def runs_table(tasks=("007", "07", "7"), languages=("en", "sw"), backbones=("j1", "j2"),
               frameworks=("a", "b")) -> pd.DataFrame:
    """A balanced run table with text identifiers and scores that are exact decimals."""
    index = pd.MultiIndex.from_product([tasks, languages, backbones, frameworks], names=HEADER[:4])
    frame = index.to_frame(index=False)
    frame["score"] = (np.arange(len(frame)) * 7.25) % 100
    return frame


def to_csv_bytes(frame, delimiter=",", bom=False, crlf=False, quote_all=False,
                 padded_names=False) -> bytes:
    buffer = stdio.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n" if crlf else "\n",
                        quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow([f"  {c} " if padded_names else c for c in frame.columns])
    writer.writerows(frame.astype(str).itertuples(index=False))
    return ("\ufeff" if bom else "").encode() + buffer.getvalue().encode()


def read_runs(path):
    return io.validate_runs(io.read_table(path, io.RUN_COLUMNS), path)


def test_zero_padded_identifiers_stay_distinct_and_unchanged(tmp_path):
    path = tmp_path / "runs.csv"
    runs_table().to_csv(path, index=False)
    runs = read_runs(path)
    assert sorted(runs["task"].unique()) == ["007", "07", "7"]
    panel = io.build_panel(runs, path)
    assert panel.tasks == ("007", "07", "7")  # natural order, ties broken by the text
    assert panel.shape == (3, 2, 2)


def test_identifiers_from_parquet_are_text(tmp_path):
    frame = runs_table(tasks=("1", "2"))
    frame["task"] = frame["task"].astype(int)  # a Parquet file may store ids as integers
    frame["language"] = frame["language"].replace({"en": "NA"})  # Namibia's code, not missing
    path = tmp_path / "runs.parquet"
    frame.to_parquet(path)
    runs = read_runs(path)
    assert set(runs["task"]) == {"1", "2"} and set(runs["language"]) == {"NA", "sw"}


def test_na_like_labels_in_csv_are_labels_not_missing(tmp_path):
    frame = runs_table(languages=("NA", "null"))
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    assert set(read_runs(path)["language"]) == {"NA", "null"}


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delimiter=st.sampled_from([",", ";", "\t", "|"]), bom=st.booleans(), crlf=st.booleans(),
       quote_all=st.booleans(), padded_names=st.booleans(),
       tasks=st.lists(st.from_regex(r"0{0,3}[1-9][0-9]?|[a-z]{1,3}_[0-9]{2}", fullmatch=True),
                      min_size=2, max_size=4, unique=True))
def test_csv_dialects_read_exactly(tmp_path, delimiter, bom, crlf, quote_all, padded_names, tasks):
    """Delimiter, byte-order mark, CRLF, quoted numbers, spaces around names: same table."""
    expected = runs_table(tasks=tuple(tasks))
    path = tmp_path / "runs.csv"
    path.write_bytes(to_csv_bytes(expected, delimiter, bom, crlf, quote_all, padded_names))
    runs = read_runs(path)
    pd.testing.assert_frame_equal(
        runs.astype({k: str for k in HEADER[:4]}).sort_values(HEADER[:4]).reset_index(drop=True),
        expected.sort_values(HEADER[:4]).reset_index(drop=True), check_dtype=False)


def _header_only(data: bytes, draw) -> bytes:
    return data.split(b"\n", 1)[0] + b"\n"


def _empty(data: bytes, draw) -> bytes:
    return b""


def _truncate(data: bytes, draw) -> bytes:
    return data[:draw(st.integers(0, len(data)))]


def _drop_byte(data: bytes, draw) -> bytes:
    i = draw(st.integers(0, len(data) - 1))
    return data[:i] + data[i + 1:]


def _replace_byte(data: bytes, draw) -> bytes:
    i = draw(st.integers(0, len(data) - 1))
    byte = draw(st.sampled_from([b",", b";", b"\n", b"\"", b" ", b"x", b"\xff", b"\x00", b"9"]))
    return data[:i] + byte + data[i + 1:]


def _duplicate_line(data: bytes, draw) -> bytes:
    lines = data.splitlines(keepends=True)
    i = draw(st.integers(1, len(lines) - 1))
    return b"".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])


def _latin1(data: bytes, draw) -> bytes:
    return data.replace(b"sw", "sw\u00e9".encode("latin-1"))


CORRUPTIONS = [_header_only, _empty, _truncate, _drop_byte, _replace_byte, _duplicate_line,
               _latin1]


@pytest.mark.slow
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corrupt=st.sampled_from(CORRUPTIONS), data=st.data())
def test_corrupted_tables_read_or_fail_with_one_input_error(tmp_path, corrupt, data):
    """Whatever the corruption, ingest either succeeds or raises InputError naming the file."""
    path = tmp_path / "runs.csv"
    path.write_bytes(corrupt(to_csv_bytes(runs_table()), data.draw))
    try:
        runs = read_runs(path)
        io.build_panel(runs, path, allow_missing_cells=False)
    except InputError as error:
        assert str(error).startswith(str(path))
        assert "expected:" in str(error)


# the workflow stops in ingest on a header-only table, with no output: the bad-source run of
# tests/test_sources.py (one run for every bad source)
@pytest.mark.parametrize("content, message", [
    (b"", "is empty: no header line"),
    (b"task,language,backbone,framework,score\n", "has a header but no rows: no runs"),
    (b"task,language,backbone,framework,score\r\n", "has a header but no rows: no runs"),
    ("task,language,backbone,framework,score\nt1,caf\u00e9,b,f,1\n".encode("latin-1"),
     "is not UTF-8 text"),
    (b"task,task,backbone,framework,score\nt,l,b,f,1\n", "column name(s) ['task'] appear more"),
])
def test_unreadable_tables_have_one_clear_message(tmp_path, content, message):
    path = tmp_path / "runs.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match="runs.csv") as error:
        read_runs(path)
    assert message in str(error.value)


def test_all_scores_missing_with_omit_is_an_error_not_an_empty_panel(tmp_path):
    frame = runs_table().assign(score=np.nan)
    with pytest.raises(InputError, match="all 24 scores are missing"):
        io.validate_runs(frame, "runs.csv", missing="omit")


@pytest.mark.slow
def test_zero_padded_task_ids_are_distinct_tasks_end_to_end(tmp_path):
    """Tasks 007, 07 and 7 stay three tasks through the workflow and appear as written. The run
    builds what the test reads (ingest's tensor and CBC's summary), not the page and figures."""
    config = own_data_config(tmp_path)
    path = tmp_path / "data" / "my_runs.csv"
    runs = pd.read_csv(path, dtype=str)
    first = sorted(runs["prompt_id"].unique())[:3]
    runs["prompt_id"] = runs["prompt_id"].replace(dict(zip(first, ["007", "07", "7"])))
    runs.to_csv(path, index=False)
    snakemake(tmp_path, "results/mine/cbc/summary.json", "--configfile",
              str(write_config(tmp_path, config)))
    tensor = pd.read_parquet(tmp_path / "results/mine/tensor.parquet")
    assert {"007", "07", "7"} <= set(tensor["task"])
    summary = json.loads((tmp_path / "results/mine/cbc/summary.json").read_text())
    assert summary["n_tasks"] == 55


def test_a_language_whose_every_score_is_missing_stops_both_readers(tmp_path):
    """With `missing: omit` a language (or backbone) with runs but no score would vanish from
    the panel unnoticed: both the whole-table and the streaming reader stop, with one message."""
    from polyjudge.data import streaming
    frame = runs_table(languages=("en", "ja"))
    frame.loc[frame["language"] == "ja", "score"] = np.nan
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    messages = []
    for read in (lambda: io.validate_runs(io.read_table(path), path, missing="omit"),
                 lambda: streaming.scan_file(path, missing="omit", batch_rows=5)):
        with pytest.raises(InputError, match=r"language\(s\) \['ja'\] have runs but every "
                                                r"score is missing") as error:
            read()
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_unused_parquet_dictionary_labels_are_not_languages(tmp_path):
    """A Parquet dictionary may list labels no row uses: they are neither languages nor
    'languages whose every score is missing'."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from polyjudge.data import streaming
    frame = runs_table()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    languages = pa.DictionaryArray.from_arrays(
        pa.array(frame["language"].map({"en": 0, "sw": 1}).to_numpy(np.int32)),
        ["en", "sw", "unused"])
    table = table.set_column(1, "language", languages)
    path = tmp_path / "runs.parquet"
    pq.write_table(table, path)
    stats = streaming.scan_file(path, missing="omit")
    assert stats.panel().languages == ("en", "sw")
