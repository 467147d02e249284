"""Write ``mrewardbench_standin_items.parquet``: a stand-in for the M-RewardBench item table, for
plans and forecasts only (``config/collections/mrewardbench_standin.yaml``; provenance in
PROVENANCE.md).

The M-RewardBench texts are not in this repository, but a plan counts tokens, and so needs
texts. This table has the M-RewardBench collection's shape (1,500 items, subsets
``alpacaeval-easy`` 0-804 and ``alpacaeval-hard`` 805-1499, seven languages, columns subset,
item_index, language, input, chosen, rejected) with LLMBar's English texts in their place: item
``i`` is LLMBar item ``i mod 419`` (chosen = the gold output), the same text in every language.
Its token counts are those of English texts of LLMBar's length: an underestimate for Arabic,
Hindi and the CJK scripts. Never collect from it: the stand-in config sets ``max_cost: 0``.

Usage: ``python data/examples/make_mrewardbench_standin.py [LLMBAR_ITEMS] [--out FOLDER]``
(defaults: ``data/llmbar/items.parquet`` and this folder). Deterministic.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
LANGUAGES = ["eng_Latn", "arb_Arab", "tur_Latn", "zho_Hans", "hin_Deva", "jpn_Jpan", "spa_Latn"]
N_ITEMS, N_EASY = 1500, 805
NAME = "mrewardbench_standin_items.parquet"


def standin(llmbar: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for language in LANGUAGES:
        for i in range(N_ITEMS):
            row = llmbar.iloc[i % len(llmbar)]
            gold, other = (1, 2) if int(row["label"]) == 1 else (2, 1)
            rows.append({"subset": "alpacaeval-easy" if i < N_EASY else "alpacaeval-hard",
                         "item_index": str(i), "language": language, "input": row["input"],
                         "chosen": row[f"output_{gold}"], "rejected": row[f"output_{other}"]})
    return pd.DataFrame(rows)


def write(llmbar_items: Path, out: Path) -> list[Path]:
    table = pa.Table.from_pandas(standin(pd.read_parquet(llmbar_items)), preserve_index=False)
    path = out / NAME
    pq.write_table(table.replace_schema_metadata(None), path, compression="zstd")
    return [path]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", nargs="?", type=Path,
                        default=HERE.parent / "llmbar" / "items.parquet")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    for path in write(args.items, args.out):
        print(path)
