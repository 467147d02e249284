"""Write ``local_pairwise.csv`` and ``local_pointwise.csv``: four short LLMBar items for the local
judge example (``config/examples/local_judge.yaml``; provenance in PROVENANCE.md).

Usage: ``python data/examples/make_local_items.py [LLMBAR_ITEMS] [--out FOLDER]`` (defaults: the
repository's ``data/llmbar/items.parquet`` and this folder). Deterministic.

* pairwise (LLMBar layout): the rows of ``ITEMS`` (subset, item_index), in that order;
* pointwise (M-RewardBench layout): the same items in English and in Simplified Chinese (the
  project's own hand translations in ``CHINESE``), chosen = the gold output, rejected = the other.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
# the shortest LLMBar items (instruction and outputs under 90 characters together)
ITEMS = [("Adversarial/Neighbor", 76), ("Adversarial/Neighbor", 35),
         ("Adversarial/Neighbor", 79), ("Adversarial/GPTOut", 20)]
CHINESE = {
    "Find the 3rd prime number": "求第三个质数",
    "Divide 45 by 9": "用45除以9",
    "The result of 45 divided by 9 is 5.": "45除以9的结果是5。",
    "Add together 3.7 and 6.2.": "把3.7和6.2相加。",
    "The sum of 3.7 and 6.2 is 15.7.": "3.7与6.2的和是15.7。",
    "Compute the derivative of 2x^2 + 5x.": "求2x^2 + 5x的导数。",
    "The derivative of 2x^2 + 5x is 2x + 5.": "2x^2 + 5x的导数是2x + 5。",
}


def pairwise(items: pd.DataFrame) -> pd.DataFrame:
    keyed = items.set_index(["subset", "item_index"])
    rows = keyed.loc[ITEMS].reset_index()
    return rows[["subset", "item_index", "input", "output_1", "output_2", "label"]]


def pointwise(pairs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for language, text in (("en", lambda s: s), ("zh", lambda s: CHINESE.get(s, s))):
        for row in pairs.to_dict(orient="records"):
            gold, other = (1, 2) if int(row["label"]) == 1 else (2, 1)
            rows.append({"subset": row["subset"], "item_index": row["item_index"],
                         "language": language, "input": text(row["input"]),
                         "chosen": text(row[f"output_{gold}"]),
                         "rejected": text(row[f"output_{other}"])})
    return pd.DataFrame(rows)


def write(llmbar_items: Path, out: Path) -> list[Path]:
    pairs = pairwise(pd.read_parquet(llmbar_items))
    paths = [out / "local_pairwise.csv", out / "local_pointwise.csv"]
    pairs.to_csv(paths[0], index=False, lineterminator="\n")
    pointwise(pairs).to_csv(paths[1], index=False, lineterminator="\n")
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", nargs="?", type=Path,
                        default=HERE.parent / "llmbar" / "items.parquet")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    for path in write(args.items, args.out):
        print(path)
