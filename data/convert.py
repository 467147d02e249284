"""Build the repository's compact copy of the default panels' inputs from the origin data folder.

Usage: ``python data/convert.py ORIGIN [--out DIR]`` where ORIGIN holds the origin folders
(devai_ml_aaaj/, devai_original/, mrewardbench_panel/, llmbar/, cbc_paper_artifacts/, as
described in each
folder's PROVENANCE.md) and DIR defaults to this script's folder. Writes every file listed below
and the checksum manifest DIR/SHA256SUMS (``sha256sum`` format, paths relative to DIR).

* Large CSV tables become Parquet (zstd). Identifier columns are read as text, exactly as
  written (nothing like "007" -> 7); the known numeric columns are taken from pandas' default
  CSV reader, so the numbers (int64, or float64 where a column has empty cells) are the ones the
  workflow saw when it read the CSV; an empty cell stays missing (null) in every column.
* Small CSV / JSON files are byte copies at their origin paths.
* LLMBar: the 419 items of the five ``dataset.json`` become one table ``llmbar/items.parquet``
  and the 325 upstream ``statistics.json`` one table ``llmbar/upstream_statistics.csv``.
* ``examples/seventh_judge.csv``, the synthetic judge of the README's ``extends`` example, is
  generated from the converted devai run table by ``examples/make_seventh_judge.py``;
  ``examples/local_pairwise.csv`` and ``examples/local_pointwise.csv`` (the local judge example's
  items) from the converted LLMBar items by ``examples/make_local_items.py``, and
  ``examples/mrewardbench_standin_items.parquet`` (a stand-in item table for plans) by
  ``examples/make_mrewardbench_standin.py``.

The output is deterministic: same origin and same pyarrow version -> byte-identical files
(fixed writer settings, no pandas metadata, rows in origin order). Every conversion is checked
against the origin (row counts, values, nulls) before it is written.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import shutil
import sys
from pathlib import Path

import importlib.util

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

# table (relative to the origin) -> its numeric columns; every other column is an identifier/text
TABLES = {
    "devai_ml_aaaj/run_level_scores.csv": ["n_requirements", "n_satisfied", "score"],
    "devai_ml_aaaj/requirement_judgments.csv": [
        "requirement_index", "satisfied", "input_tokens", "output_tokens", "inference_time",
        "total_time", "reason_chars"],
    **{f"mrewardbench_panel/{name}.csv": ["chosen_score", "rejected_score"]
       for name in ("claude_sonnet_4_6", "deepseek_v3_2", "gemini_3_flash_preview",
                    "gpt4o_2024_08_06", "gpt5_4")},
    "devai_original/requirement_labels_long.csv": ["satisfied"],
    "llmbar/llmbar_judge_verdicts_long.csv": [
        "item_index", "label", "winner_noswap", "winner_swap", "score_1", "score_2"],
}
# byte copies: single files and folders (every file below, recursively), relative to the origin
COPIES = [
    "devai_ml_aaaj/requirement_types.csv",
    "devai_ml_aaaj/raw_samples/benchmark_tests",
    "mrewardbench_panel/human_anchor_sample.csv",
    "cbc_paper_artifacts/paper",
    "cbc_paper_artifacts/data",
]
LLMBAR_SUBSETS = ["Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut",
                  "Adversarial/Manual"]
LLMBAR_ROOT = "llmbar/Dataset/LLMBar"
STATISTICS_KEYS = ["correct_False", "correct_True", "correct_average", "correct_both", "equal",
                   "kappa_False", "kappa_True", "kappa_average", "kappa_agreement"]
# Parquet writer settings, pinned so that a rerun gives the same bytes
PARQUET = dict(compression="zstd", compression_level=19, version="2.6", use_dictionary=True,
               write_statistics=True, data_page_size=1 << 20, row_group_size=1 << 20)
MANIFEST = "SHA256SUMS"


class ConversionError(RuntimeError):
    """The origin is not what the conversion expects (a check failed)."""


def check(condition, message):
    if not condition:
        raise ConversionError(message)


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` with the pinned settings and no pandas metadata (deterministic bytes)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, **PARQUET)


def convert_table(source: Path, numeric: list[str]) -> pd.DataFrame:
    """A CSV as a typed frame: identifiers as the text written, numbers as the default reader's."""
    with open(source, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, cells = rows[0], np.array(rows[1:], dtype=object)
    check(all(len(row) == len(header) for row in rows), f"{source}: ragged rows")
    text = pd.read_csv(source, dtype=str, keep_default_na=False)
    numbers = pd.read_csv(source, low_memory=False)
    check(list(text.columns) == header and len(text) == len(cells), f"{source}: shape")
    frame = {}
    for j, column in enumerate(header):
        empty = cells[:, j] == ""
        if column in numeric:
            values = numbers[column]
            check(pd.api.types.is_numeric_dtype(values), f"{source}: {column} is not numeric")
            parsed = pd.to_numeric(pd.Series(cells[:, j]).replace("", np.nan), errors="raise")
            check(np.array_equal(values.isna().to_numpy(), empty), f"{source}: {column} nulls")
            check(np.allclose(values[~empty], parsed[~empty], rtol=0, atol=0),
                  f"{source}: {column} numbers differ between readers")
        else:
            check((text[column].to_numpy(object) == cells[:, j]).all(),
                  f"{source}: {column} reads differently as text")
            values = pd.Series(np.where(empty, None, cells[:, j]), dtype=object)
        frame[column] = values
    frame = pd.DataFrame(frame)
    for column in header:  # text columns: arrow strings with nulls exactly at the empty cells
        if column not in numeric:
            frame[column] = pd.array(frame[column].tolist(), dtype=pd.ArrowDtype(pa.string()))
    return frame


def llmbar_items(origin: Path) -> pd.DataFrame:
    """The 419 LLMBar items: subset, item_index (position in its dataset.json), texts, label."""
    frames = []
    for subset in LLMBAR_SUBSETS:
        items = json.loads((origin / LLMBAR_ROOT / subset / "dataset.json").read_text("utf-8"))
        for i, item in enumerate(items):
            check(set(item) == {"input", "output_1", "output_2", "label"},
                  f"{subset} item {i}: keys {sorted(item)}")
            check(item["label"] in (1, 2) and all(isinstance(item[k], str)
                                                  for k in ("input", "output_1", "output_2")),
                  f"{subset} item {i}: label or texts")
        frames.append(pd.DataFrame({"subset": subset, "item_index": np.arange(len(items)),
                                    **{k: [item[k] for item in items]
                                       for k in ("input", "output_1", "output_2", "label")}}))
    frame = pd.concat(frames, ignore_index=True).astype({"item_index": "int64", "label": "int64"})
    check(len(frame) == 419, f"LLMBar has {len(frame)} items, expected 419")
    for column in ("subset", "input", "output_1", "output_2"):
        frame[column] = pd.array(frame[column].tolist(), dtype=pd.ArrowDtype(pa.string()))
    return frame


def llmbar_statistics(origin: Path) -> pd.DataFrame:
    """The 325 upstream statistics.json as one table (subset, evaluator, strategy, its keys)."""
    rows = []
    root = origin / LLMBAR_ROOT
    for path in sorted(root.glob("**/evaluators/*/*/statistics.json")):
        stats = json.loads(path.read_text("utf-8"))
        check(list(stats) == STATISTICS_KEYS, f"{path}: keys {list(stats)}")
        subset = path.parent.parent.parent.parent.relative_to(root).as_posix()
        rows.append({"subset": subset, "evaluator": path.parent.parent.name,
                     "strategy": path.parent.name, **stats})
    check(len(rows) == 325, f"{len(rows)} statistics.json files, expected 325")
    return pd.DataFrame(rows)


def check_items_against_verdicts(items: pd.DataFrame, verdicts: pd.DataFrame) -> None:
    """Every verdict row's label is the gold label of its (subset, item_index) item."""
    gold = items.astype({"subset": object}).set_index(["subset", "item_index"])["label"]
    keys = pd.MultiIndex.from_arrays([verdicts["subset"].astype(object), verdicts["item_index"]])
    check(keys.isin(gold.index).all(), "verdicts name items that are not in dataset.json")
    check((gold.reindex(keys).to_numpy() == verdicts["label"].to_numpy()).all(),
          "verdict labels differ from the dataset.json labels")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def seventh_judge(out: Path) -> str:
    """Generate the synthetic seventh devai judge from the converted devai runs."""
    script = Path(__file__).resolve().parent / "examples" / "make_seventh_judge.py"
    spec = importlib.util.spec_from_file_location("make_seventh_judge", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = "examples/seventh_judge.csv"
    module.write(out / "devai_ml_aaaj/run_level_scores.parquet", out / target)
    return target


def local_items(out: Path) -> list[str]:
    """The local judge example's item tables and the M-RewardBench stand-in item table, from
    the converted LLMBar items."""
    paths = []
    for name in ("make_local_items", "make_mrewardbench_standin"):
        script = Path(__file__).resolve().parent / "examples" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        paths += module.write(out / "llmbar/items.parquet", out / "examples")
    return [path.relative_to(out).as_posix() for path in paths]


def convert(origin: Path, out: Path) -> list[str]:
    """Write every output under ``out`` and the manifest; return the written relative paths."""
    written = []
    for relative, numeric in TABLES.items():
        frame = convert_table(origin / relative, numeric)
        target = Path(relative).with_suffix(".parquet").as_posix()
        write_parquet(frame, out / target)
        written.append(target)
        if relative.startswith("llmbar/"):
            verdicts = frame
    for relative in COPIES:
        source = origin / relative
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        check(files, f"{source}: nothing to copy")
        for path in files:
            target = path.relative_to(origin).as_posix()
            (out / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / target)
            written.append(target)
    items = llmbar_items(origin)
    check_items_against_verdicts(items, verdicts)
    write_parquet(items, out / "llmbar/items.parquet")
    written.append("llmbar/items.parquet")
    statistics = llmbar_statistics(origin)
    statistics.to_csv(out / "llmbar/upstream_statistics.csv", index=False, lineterminator="\n")
    check(pd.read_csv(out / "llmbar/upstream_statistics.csv").equals(statistics),
          "upstream_statistics.csv does not read back unchanged")
    written.append("llmbar/upstream_statistics.csv")
    written.append(seventh_judge(out))
    written.extend(local_items(out))
    written.sort()
    lines = [f"{sha256(out / path)}  {path}\n" for path in written]
    (out / MANIFEST).write_text("".join(lines), encoding="utf-8")
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("origin", type=Path, help="origin data folder (holds devai_ml_aaaj/ ...)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="where to write (default: this script's folder)")
    args = parser.parse_args(argv)
    written = convert(args.origin, args.out)
    size = sum((args.out / path).stat().st_size for path in written)
    print(f"wrote {len(written)} files ({size / 1e6:.1f} MB) and {args.out / MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
