"""The default configuration's outputs agree with the stored snapshot (that a configuration gives
the same bytes whatever ``--cores`` is checked on a smaller one: tests/test_workflow.py).

The outputs are those of the README's reproduction command, run in a copy of the repository with
nothing beside it (the ``readme_reproduction`` fixture, shared with tests/test_standalone.py).
Store a new snapshot only when an output is meant to change, with the reason in the commit:
``python tests/snapshot.py --update`` (see tests/snapshot.py for what is compared and how).

The other tests check the comparison itself on small results folders made here, never on the
stored snapshot.
"""
import json
import shutil
import zlib
import struct

import numpy as np
import pandas as pd
import pytest

from snapshot import (ATOL, RTOL, SNAPSHOT, byte_differences, compare, compare_json,
                      compared_files, store)


# --- the default run ---------------------------------------------------------------------------
@pytest.mark.slow
def test_default_outputs_match_the_stored_snapshot(readme_reproduction):
    problems = compare(SNAPSHOT, readme_reproduction / "results")
    assert not problems, ("outputs differ from tests/output_snapshot/ (if intended, run "
                          "`python tests/snapshot.py --update` and say why in the commit):\n"
                          + "\n".join(problems[:40]))


def test_the_stored_snapshot_is_complete():
    """Every table, JSON and text output in the manifest has its stored copy, and nothing else is
    stored; figures are described."""
    files = json.loads((SNAPSHOT / "manifest.json").read_text())["files"]
    copied = {p for p, e in files.items() if e["kind"] not in ("png", "svg")}
    assert set(compared_files(SNAPSHOT / "results")) == copied
    assert all(e.get("width") for e in files.values() if e["kind"] == "png")
    assert all(e.get("texts") for e in files.values() if e["kind"] == "svg")


# --- the comparison, on small folders ----------------------------------------------------------
def png(width: int, height: int) -> bytes:
    """A valid grey PNG of this size."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    pixels = zlib.compress(b"".join(b"\0" + b"\x80" * width for _ in range(height)))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))


SVG = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<svg width="432pt" height="288pt" viewBox="0 0 432 288" xmlns="http://www.w3.org/2000/svg">
 <g id="text_1"><!-- 0.65 --><path d="M 1.123456 2 L 3 4"/></g>
 <g id="text_2"><!-- held-out tau --><path d="M 5 6 L 7 8"/></g>
</svg>
"""


@pytest.fixture
def results(tmp_path):
    """A small results folder with every kind of output, and a snapshot stored from it."""
    root = tmp_path / "results"
    (root / "devai" / "cbc").mkdir(parents=True)
    (root / "devai" / "logs").mkdir()
    (root / "devai" / "figures").mkdir()
    beta = pd.DataFrame({"language": ["en", "de", "sw"], "backbone": ["gpt-4o", "gpt-4o", "qwen"],
                         "beta": [0.1234567890123, -20.605825116241785, np.nan],
                         "n_tasks": [55, 55, 54]})
    beta.to_csv(root / "devai" / "cbc" / "beta.csv", index=False)
    tensor = beta.assign(language=pd.Categorical(beta["language"], ["en", "de", "sw"]),
                         count=np.array([1_000_000_000_000, 3, 4], dtype="int64"))
    tensor.to_parquet(root / "devai" / "tensor.parquet", index=False)
    (root / "devai" / "cbc" / "summary.json").write_text(json.dumps(
        {"n_tasks": 55, "sigma_total": 22.2440728211393, "complete": True,
         "order": ["gemini", "gpt-4o"], "inputs": {"runs": {"path": "data/runs.parquet"}}}))
    (root / "claims.md").write_text("# Claims\n\n| quantity | value |\n|---|---|\n"
                                    "| sigma | 22.2440728211393 |\n| tasks | 52 |\n")
    (root / "devai" / "logs" / "cbc.log").write_text("2026-12-01 14:00 done\n")
    (root / "devai" / "figures" / "lolo.png").write_bytes(png(4, 3))
    (root / "devai" / "figures" / "lolo.svg").write_text(SVG)
    store(root, tmp_path / "snapshot")
    return root


def copy_of(results, tmp_path):
    """A copy of the results folder to change (the stored snapshot is never touched)."""
    return shutil.copytree(results, tmp_path / "now")


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_identical_run_agrees(results, tmp_path):
    assert compare(tmp_path / "snapshot", copy_of(results, tmp_path)) == []


def test_a_number_beyond_the_tolerance_names_file_column_row_and_both_values(results, tmp_path):
    now = copy_of(results, tmp_path)
    edit(now / "devai" / "cbc" / "beta.csv", "0.1234567890123", "0.1234569")
    assert compare(tmp_path / "snapshot", now) == [
        "devai/cbc/beta.csv: column 'beta', row 0 (language='en', backbone='gpt-4o'): "
        "stored 0.1234567890123 vs now 0.1234569"]


def test_differences_within_the_tolerance_agree(results, tmp_path):
    """Last-bit changes everywhere (what another CPU's kernels do) pass; NaN equals NaN."""
    now = copy_of(results, tmp_path)
    edit(now / "devai" / "cbc" / "beta.csv", "-20.605825116241785", "-20.605825116241792")
    edit(now / "devai" / "cbc" / "summary.json", "22.2440728211393", "22.244072821139335")
    edit(now / "claims.md", "22.2440728211393", "22.244072821139335")
    tensor = pd.read_parquet(now / "devai" / "tensor.parquet")
    tensor["beta"] *= 1 + 5 * RTOL / 10
    tensor.to_parquet(now / "devai" / "tensor.parquet", index=False)
    assert compare(tmp_path / "snapshot", now) == []


def test_parquet_values_beyond_the_tolerance_and_changed_integers_are_named(results, tmp_path):
    """An integer column compares exactly, even where the tolerance would accept the change."""
    now = copy_of(results, tmp_path)
    tensor = pd.read_parquet(now / "devai" / "tensor.parquet")
    tensor.loc[1, "beta"] += 1e-6
    tensor.loc[0, "count"] += 1
    tensor.to_parquet(now / "devai" / "tensor.parquet", index=False)
    assert compare(tmp_path / "snapshot", now) == [
        "devai/tensor.parquet: column 'beta', row 1 (language='de', backbone='gpt-4o'): "
        f"stored -20.605825116241785 vs now {-20.605825116241785 + 1e-6!r}",
        "devai/tensor.parquet: column 'count', row 0 (language='en', backbone='gpt-4o'): "
        "stored 1000000000000 vs now 1000000000001"]


def test_json_numbers_beyond_the_tolerance_and_int_changes_name_the_key_path(results, tmp_path):
    now = copy_of(results, tmp_path)
    edit(now / "devai" / "cbc" / "summary.json", "22.2440728211393", "22.2441")
    edit(now / "devai" / "cbc" / "summary.json", '"n_tasks": 55', '"n_tasks": 55.0')
    assert compare(tmp_path / "snapshot", now) == [
        "devai/cbc/summary.json: key n_tasks: stored 55 (int) vs now 55.0 (float)",
        "devai/cbc/summary.json: key sigma_total: stored 22.2440728211393 vs now 22.2441"]


def test_changed_labels_and_text_fail(results, tmp_path):
    now = copy_of(results, tmp_path)
    edit(now / "devai" / "cbc" / "beta.csv", "sw,qwen", "sw,qwen3")
    edit(now / "devai" / "cbc" / "summary.json", '"gemini"', '"gemini-3"')
    edit(now / "claims.md", "| tasks |", "| task count |")
    tensor = pd.read_parquet(now / "devai" / "tensor.parquet")
    tensor["language"] = tensor["language"].cat.rename_categories({"sw": "swa"})
    tensor.to_parquet(now / "devai" / "tensor.parquet", index=False)
    problems = compare(tmp_path / "snapshot", now)
    assert problems == [
        "claims.md: line 6: stored '| tasks | 52 |' vs now '| task count | 52 |'",
        "devai/cbc/beta.csv: column 'backbone', row 2 (language='sw', backbone='qwen'): "
        "stored 'qwen' vs now 'qwen3'",
        "devai/cbc/summary.json: key order[0]: stored 'gemini' vs now 'gemini-3'",
        "devai/tensor.parquet: column 'language': categories stored ['en', 'de', 'sw'] vs now "
        "['en', 'de', 'swa']",
        "devai/tensor.parquet: column 'language', row 2 (language='sw', backbone='qwen'): "
        "stored 'sw' vs now 'swa'"]


def test_integers_in_text_and_csv_compare_exactly(results, tmp_path):
    now = copy_of(results, tmp_path)
    edit(now / "claims.md", "| 52 |", "| 53 |")
    edit(now / "devai" / "cbc" / "beta.csv", "0.1234567890123,55", "0.1234567890123,55.0")
    assert compare(tmp_path / "snapshot", now) == [
        "claims.md: line 6, number 1: stored 52 vs now 53",
        "devai/cbc/beta.csv: column 'n_tasks', row 0 (language='en', backbone='gpt-4o'): "
        "stored 55 vs now 55.0"]


def test_a_missing_or_a_new_file_fails(results, tmp_path):
    now = copy_of(results, tmp_path)
    (now / "devai" / "cbc" / "summary.json").unlink()
    (now / "devai" / "cbc" / "extra.csv").write_text("a\n1\n")
    assert compare(tmp_path / "snapshot", now) == [
        "missing: devai/cbc/summary.json (in the snapshot, not in the run)",
        "new: devai/cbc/extra.csv (in the run, not in the snapshot)"]


def test_changed_column_names_fail(results, tmp_path):
    now = copy_of(results, tmp_path)
    edit(now / "devai" / "cbc" / "beta.csv", "language,backbone,beta", "language,judge,beta")
    tensor = pd.read_parquet(now / "devai" / "tensor.parquet").rename(columns={"count": "n"})
    tensor.to_parquet(now / "devai" / "tensor.parquet", index=False)
    assert compare(tmp_path / "snapshot", now) == [
        "devai/cbc/beta.csv: columns: stored ['language', 'backbone', 'beta', 'n_tasks'] vs now "
        "['language', 'judge', 'beta', 'n_tasks']",
        "devai/tensor.parquet: columns: stored ['language', 'backbone', 'beta', 'n_tasks', "
        "'count'] vs now ['language', 'backbone', 'beta', 'n_tasks', 'n']"]


def test_a_changed_column_type_or_row_count_fails(results, tmp_path):
    now = copy_of(results, tmp_path)
    tensor = pd.read_parquet(now / "devai" / "tensor.parquet")
    tensor.astype({"n_tasks": "float64"}).to_parquet(now / "devai" / "tensor.parquet", index=False)
    pd.read_csv(now / "devai" / "cbc" / "beta.csv").head(2).to_csv(
        now / "devai" / "cbc" / "beta.csv", index=False)
    assert compare(tmp_path / "snapshot", now) == [
        "devai/cbc/beta.csv: 3 rows stored vs 2 now",
        "devai/tensor.parquet: column 'n_tasks': type stored int64 vs now double"]


def test_figures_compare_size_and_texts_not_coordinates(results, tmp_path):
    now = copy_of(results, tmp_path)
    edit(now / "devai" / "figures" / "lolo.svg", "1.123456", "1.123457")  # coordinates: ignored
    assert compare(tmp_path / "snapshot", now) == []
    edit(now / "devai" / "figures" / "lolo.svg", "<!-- 0.65 -->", "<!-- 0.66 -->")
    (now / "devai" / "figures" / "lolo.png").write_bytes(png(5, 3))
    assert compare(tmp_path / "snapshot", now) == [
        "devai/figures/lolo.png: width: stored 4 vs now 5",
        "devai/figures/lolo.svg: texts: stored ['0.65', 'held-out tau'] vs now "
        "['0.66', 'held-out tau']"]


def test_logs_are_not_compared_and_bytes_are_compared_between_runs(results, tmp_path):
    now = copy_of(results, tmp_path)
    (now / "devai" / "logs" / "cbc.log").write_text("2026-12-02 09:00 done\n")
    assert compare(tmp_path / "snapshot", now) == []
    assert byte_differences(results, now) == []
    edit(now / "devai" / "cbc" / "beta.csv", "-20.605825116241785", "-20.605825116241792")
    assert byte_differences(results, now) == ["bytes differ: devai/cbc/beta.csv"]


def test_the_tolerance_is_the_stated_one():
    assert (RTOL, ATOL) == (1e-9, 1e-12)


def test_a_calibrator_checksum_of_computed_floats_is_compared_by_form(tmp_path):
    """calibrator.json's self-checksum covers beta: another CPU changes it with beta's last bits.
    Its form is compared, beta itself within the tolerance; any other key stays exact."""
    stored = {"cells": [{"beta": 11.84242724867724}], "training": {"sha256": "a" * 64},
              "checksum": "b" * 64}
    now = {"cells": [{"beta": 11.842427248677245}], "training": {"sha256": "a" * 64},
           "checksum": "c" * 64}
    name = "devai/cbc/calibrator.json"
    assert compare_json(name, json.dumps(stored), json.dumps(now)) == []
    assert compare_json("devai/cbc/summary.json", json.dumps(stored), json.dumps(now)) != []
    now["training"]["sha256"] = "d" * 64   # the training table's digest is of input data: exact
    assert compare_json(name, json.dumps(stored), json.dumps(now)) != []
    now["training"]["sha256"], now["checksum"] = "a" * 64, "not a digest"
    assert compare_json(name, json.dumps(stored), json.dumps(now)) != []
