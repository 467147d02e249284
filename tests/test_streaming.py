"""Streaming ingest: the same panel, R^2 and error messages as the in-memory reader, in batches
of any size, and memory that does not grow with the rows."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_reading import CORRUPTIONS, runs_table, to_csv_bytes

from polyjudge.cbc import estimator
from polyjudge.data import io, streaming
from polyjudge.data.errors import InputError

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def in_memory(path, score_range=(0, 100), missing="error", allow_missing_cells=False):
    """Today's reader: the whole table in pandas."""
    runs = io.validate_runs(io.read_table(path), path, score_range, missing)
    return runs, io.build_panel(runs, path, allow_missing_cells=allow_missing_cells)


def streamed(path, batch_rows, score_range=(0, 100), missing="error", allow_missing_cells=False,
             runs_out=None):
    stats = streaming.scan_file(path, score_range=score_range, missing=missing,
                                runs_out=runs_out, batch_rows=batch_rows)
    return stats, stats.panel(allow_missing_cells=allow_missing_cells)


def outcome(function, *args, **kwargs):
    """("ok", result) or ("error", message) of a read."""
    try:
        return "ok", function(*args, **kwargs)
    except InputError as error:
        return "error", str(error)


@st.composite
def run_tables(draw):
    """A shuffled run table with some missing runs, NaN scores, strata and integer ids."""
    shape = [draw(st.integers(1, n)) for n in (6, 3, 3, 3)]
    tasks = [f"{i:0{draw(st.integers(1, 3))}d}" for i in range(shape[0])]
    index = pd.MultiIndex.from_product(
        [tasks, [f"l{i}" for i in range(shape[1])], [f"b{i}" for i in range(shape[2])],
         [f"f{i}" for i in range(shape[3])]], names=io.RUN_KEYS)
    frame = index.to_frame(index=False)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frame["score"] = rng.integers(0, 4000, len(frame)) / 40.0
    keep = rng.random(len(frame)) >= draw(st.sampled_from([0.0, 0.0, 0.2]))
    frame = frame[keep].sample(frac=1, random_state=rng.integers(1000)).reset_index(drop=True)
    if draw(st.booleans()) and len(frame):
        frame.loc[rng.random(len(frame)) < 0.1, "score"] = np.nan
    if draw(st.booleans()):
        frame["stratum"] = "s" + (frame["task"].str[-1].astype(int) % 2).astype(str)
    return frame


@FAST
@given(frame=run_tables(), batch_rows=st.sampled_from([1, 2, 5, 64]),
       suffix=st.sampled_from([".csv", ".parquet"]))
@pytest.mark.slow
def test_streamed_panel_and_r_squared_equal_the_whole_table_ones(tmp_path, frame, batch_rows,
                                                              suffix):
    """Bit-identical tensor and counts, the same validated runs, R^2 to 1e-10."""
    path = tmp_path / f"runs{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    kwargs = dict(missing="omit", allow_missing_cells=True)
    expected = outcome(in_memory, path, **kwargs)
    out = tmp_path / "validated.parquet"
    out.unlink(missing_ok=True)  # tmp_path is shared by the examples: none left from another
    got = outcome(streamed, path, batch_rows, runs_out=out, **kwargs)
    assert got[0] == expected[0]
    if expected[0] == "error":
        assert got[1] == expected[1]
        assert not out.exists()
        return
    (runs, panel), (stats, again) = expected[1], got[1]
    assert (again.tasks, again.languages, again.backbones, again.strata) == \
        (panel.tasks, panel.languages, panel.backbones, panel.strata)
    np.testing.assert_array_equal(again.values, panel.values)
    np.testing.assert_array_equal(again.n_runs, panel.n_runs)
    assert stats.n_runs == len(runs)
    written = io.read_table(out)
    pd.testing.assert_frame_equal(written, runs.astype({k: object for k in io.RUN_KEYS}),
                                  check_dtype=False)
    if runs[io.RUN_KEYS].nunique().min() > 1 and runs["score"].nunique() > 1:
        for full, terms in ((False, estimator.TWO_WAY_TERMS), (True, estimator.FULL_TERMS)):
            assert estimator.r_squared_from_stats(**stats.model_stats(), full=full) == \
                pytest.approx(estimator.ols_r_squared(runs, terms), abs=1e-10)


@pytest.mark.parametrize("row", [0, 9, 23])
@pytest.mark.parametrize("bad", [
    {"score": "abc"}, {"score": "150"}, {"score": "inf"}, {"score": ""}, {"language": " "},
    {"task": ""}, {"framework": "other"},  # the last: a duplicate run
])
@pytest.mark.parametrize("batch_rows", [1, 4, 1000])
def test_bad_rows_in_later_batches_give_the_same_message(tmp_path, row, bad, batch_rows):
    frame = runs_table().astype({"score": object})
    for column, value in bad.items():
        if value == "other":  # the other framework of the same cell: a duplicate run
            value = {"a": "b", "b": "a"}[frame.loc[row, column]]
        frame.loc[row, column] = value
    frame.loc[row + 1 if row < 23 else 0, "score"] = "nan" if "task" in bad else \
        frame.loc[row + 1 if row < 23 else 0, "score"]  # a second problem, reported later
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    expected = outcome(in_memory, path)
    got = outcome(streamed, path, batch_rows)
    assert expected[0] == "error" and got == expected


def test_counts_and_first_rows_across_batches(tmp_path):
    """Seven bad rows spread over batches: the total, the first five and '... and 2 more'."""
    frame = runs_table().astype({"score": object})
    frame.loc[[1, 5, 8, 13, 17, 20, 22], "score"] = "x"
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    expected = outcome(in_memory, path)
    assert "7 non-numeric" in expected[1] and "... and 2 more" in expected[1]
    assert outcome(streamed, path, 3) == expected


@pytest.mark.slow
@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corrupt=st.sampled_from(CORRUPTIONS), data=st.data(),
       batch_rows=st.sampled_from([2, 7, 100]))
def test_corrupted_tables_stream_exactly_as_they_read(tmp_path, corrupt, data, batch_rows):
    """The corruptions of test_reading: the same table or the same message, batch by batch."""
    path = tmp_path / "runs.csv"
    path.write_bytes(corrupt(to_csv_bytes(runs_table()), data.draw))
    expected = outcome(in_memory, path)
    got = outcome(streamed, path, batch_rows)
    assert got[0] == expected[0]
    if expected[0] == "error":
        assert got[1] == expected[1]
    else:
        np.testing.assert_array_equal(got[1][1].values, expected[1][1].values)


@pytest.mark.parametrize("content, message", [
    (b"task,language,backbone,framework,score\n", "has a header but no rows: no runs"),
    (b"task,language,backbone,score\nt,l,b,1\n", None),  # no framework column: "single"
    (b"task,language,framework,score\nt,l,f,1\n", "missing column(s) ['backbone']"),
    # a reading error later in the file comes before the missing column, as in memory
    (b"task,language,framework,score\nt,l,f,1\nt,l,f,1,2,3\n", "cannot be read as a table"),
])
def test_header_cases(tmp_path, content, message):
    path = tmp_path / "runs.csv"
    path.write_bytes(content)
    expected, got = outcome(in_memory, path), outcome(streamed, path, 1)
    assert got[0] == expected[0] == ("ok" if message is None else "error")
    if message:
        assert message in got[1] and got[1] == expected[1]


def test_configured_orders_and_parquet_ids(tmp_path):
    frame = runs_table(tasks=("1", "2"))
    frame["task"] = frame["task"].astype(int)
    path = tmp_path / "runs.parquet"
    frame.to_parquet(path)
    stats = streaming.scan_file(path, batch_rows=5)
    panel = stats.panel(languages=["sw", "en"])
    assert panel.tasks == ("1", "2") and panel.languages == ("sw", "en")
    with pytest.raises(InputError, match=r"language\(s\) \['fr'\] are configured"):
        stats.panel(languages=["sw", "en", "fr"])


def write_large(path, n_tasks, chunk_tasks=250):
    """A balanced run table of ``n_tasks`` x 2,000 runs, written in chunks (never whole)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    grid = [axis.ravel().astype(np.int32) for axis in np.indices((10, 10, 20))]
    label = pa.dictionary(pa.int32(), pa.string())
    schema = pa.schema([(key, label) for key in io.RUN_KEYS] + [("score", pa.float64())])
    rng = np.random.default_rng(0)
    with pq.ParquetWriter(path, schema) as writer:
        for first in range(0, n_tasks, chunk_tasks):
            k = min(chunk_tasks, n_tasks - first)
            columns = [pa.DictionaryArray.from_arrays(
                np.repeat(np.arange(k, dtype=np.int32), 2000),
                [f"t{first + i}" for i in range(k)])]
            columns += [pa.DictionaryArray.from_arrays(np.tile(codes, k),
                                                       [str(c) for c in range(20)])
                        for codes in grid]
            columns.append(pa.array(rng.uniform(0, 100, k * 2000)))
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))


MEASURE = textwrap.dedent("""
    import json, resource, sys
    from polyjudge.data import streaming
    stats = streaming.scan_file(sys.argv[1], runs_out=sys.argv[2])
    panel = stats.panel()
    print(json.dumps({"n_runs": stats.n_runs, "shape": list(panel.shape),
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")


@pytest.mark.slow
def test_memory_does_not_grow_with_the_rows(tmp_path):
    """4 million runs stream in about the memory of 1 million: one byte per run (the duplicate
    counter) and the per-cell arrays grow, the batches do not."""
    def peak(n_tasks):
        path = tmp_path / f"runs_{n_tasks}.parquet"
        write_large(path, n_tasks)
        out = subprocess.run([sys.executable, "-c", MEASURE, str(path),
                              str(tmp_path / "v.parquet")],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    small, large = peak(500), peak(2000)
    assert large["n_runs"] == 4_000_000 and large["shape"] == [2000, 10, 10]
    # a whole pandas table would add about 1.2 GB for these 3 million runs
    assert large["peak_mb"] - small["peak_mb"] < 100, (small, large)


def test_r_squared_from_stats_matches_lstsq_and_is_one_on_an_exact_fit():
    """Known answers: least squares on the one-hot design (numpy), and R^2 = 1 when the
    scores are exactly task + language x backbone + framework."""
    rng = np.random.default_rng(5)
    frame = runs_table(tasks=tuple(f"t{i}" for i in range(6)), languages=("a", "b", "c"),
                       frameworks=("f", "g", "h"))
    frame = frame.sample(frac=0.8, random_state=2).reset_index(drop=True)  # unbalanced
    frame["score"] = rng.normal(50, 10, len(frame))
    stats = streaming.scan_runs(lambda: [frame], "runs")
    for full, terms in ((False, estimator.TWO_WAY_TERMS), (True, estimator.FULL_TERMS)):
        blocks = [pd.get_dummies(frame[list(t)].astype(str).agg("|".join, axis=1)) for t in terms]
        design = np.column_stack([np.ones(len(frame))] + [b.to_numpy(float) for b in blocks])
        y = frame["score"].to_numpy()
        fitted = design @ np.linalg.lstsq(design, y, rcond=None)[0]
        expected = 1 - ((y - fitted) ** 2).sum() / ((y - y.mean()) ** 2).sum()
        assert estimator.r_squared_from_stats(**stats.model_stats(), full=full) == \
            pytest.approx(expected, abs=1e-10)
    codes = {k: pd.factorize(frame[k])[0] for k in io.RUN_KEYS}
    exact = frame.assign(score=10.0 * codes["task"] + 3.0 * codes["language"] * codes["backbone"]
                         + 7.0 * codes["framework"])
    stats = streaming.scan_runs(lambda: [exact], "runs")
    assert estimator.r_squared_from_stats(**stats.model_stats(), full=False) == \
        pytest.approx(1.0, abs=1e-12)
