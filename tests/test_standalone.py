"""The README's commands, verbatim, in a copy of the repository with nothing beside it.

The copy holds exactly the files git tracks (and new files it does not ignore), in an otherwise
empty folder, so a path outside the repository, an untracked input or a missing install step
fails here as it would for a new user.
"""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from snapshot import copy_repository
from conftest import readme_command, run_as_user

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def readme_block(start: str) -> str:
    """The fenced block of the README whose first line starts with ``start``."""
    for block in re.findall(r"```\w*\n(.*?)```", README, flags=re.S):
        if block.startswith(start):
            return block
    raise AssertionError(f"the README has no code block starting with {start!r}")


@pytest.mark.slow
def test_readme_first_command_reproduces_the_claims_table(readme_reproduction):
    claims = pd.read_csv(readme_reproduction / "results" / "claims.csv")
    stated = re.search(r"\*\*(\d+) published quantities, (\d+) reproduced, (\d+) differ by design, "
                       r"(\d+) not computed\*\*", README)
    assert stated, "the README states the claims counts"
    total, reproduced, differs, not_computed = map(int, stated.groups())
    counts = claims["status"].value_counts()
    assert len(claims) == total
    assert (counts.get("reproduced", 0), counts.get("differs", 0),
            counts.get("not computed", 0)) == (reproduced, differs, not_computed)


@pytest.mark.slow
def test_readme_own_data_example_computes_only_the_users_panels(readme_reproduction, tmp_path):
    """my.yaml saved from the README and the README's command, from the repository root (a
    second copy, whose results/ holds only what this command makes)."""
    root = copy_repository(tmp_path / "polyjudge")
    example = readme_block("# my.yaml")
    (root / "my.yaml").write_text(example)
    data_dir = root / re.search(r"^data_dir: (\S+)", example, flags=re.M).group(1)
    data_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    index = pd.MultiIndex.from_product(
        [[f"{i:03d}" for i in range(12)], ["en", "de", "sw"], ["judge-a", "judge-b", "judge-c"],
         ["r1", "r2"]], names=["prompt_id", "language", "judge_model", "framework"])
    runs = index.to_frame(index=False)
    runs["pct"] = rng.uniform(0, 100, len(runs)).round(2)
    runs.to_csv(data_dir / "my_runs.csv", index=False)
    command = readme_command("snakemake --cores 4 --configfile my.yaml")
    venv = readme_reproduction / ".venv"  # the one the README's first command installed
    run_as_user(f". {venv}/bin/activate && {command}", root, timeout=900)
    panels = {p.name for p in (root / "results").iterdir() if p.is_dir()} - {"logs", "benchmarks"}
    assert panels == {"mine"}
    beta = pd.read_csv(root / "results/mine/cbc/beta.csv", dtype={"language": str})
    assert len(beta) == 9 and np.allclose(beta.groupby("language")["beta"].sum(), 0)
    tensor = pd.read_parquet(root / "results/mine/tensor.parquet")
    assert sorted(tensor["task"].unique())[:2] == ["000", "001"]  # zero-padded ids kept
