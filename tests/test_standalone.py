"""The README's commands, verbatim, in a copy of the repository with nothing beside it.

The copy holds exactly the files git tracks (and new files it does not ignore), in an otherwise
empty folder, so a path outside the repository, an untracked input or a missing install step
fails here as it would for a new user.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def readme_block(start: str) -> str:
    """The fenced block of the README whose first line starts with ``start``."""
    for block in re.findall(r"```\w*\n(.*?)```", README, flags=re.S):
        if block.startswith(start):
            return block
    raise AssertionError(f"the README has no code block starting with {start!r}")


def readme_command(prefix: str) -> str:
    """The README's first command line starting with ``prefix``."""
    for line in README.splitlines():
        if line.startswith(prefix):
            return line
    raise AssertionError(f"the README has no command starting with {prefix!r}")


def user_environment():
    """The environment of a new shell: no project virtualenv, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                      if not p.startswith(venv))
    return env


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The repository's files alone in an empty folder (nothing beside it, no results)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode()
    target = tmp_path_factory.mktemp("fresh") / "judgecal"
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    assert sorted(p.name for p in target.parent.iterdir()) == ["judgecal"]
    return target


@pytest.fixture(scope="module")
def reproduction(clone) -> Path:
    """The README's first command (install and full reproduction), run as written."""
    command = readme_command("python3 -m venv .venv && . .venv/bin/activate && pip install -q -r "
                             "requirements.txt")
    result = subprocess.run(["bash", "-c", command], cwd=clone, env=user_environment(),
                            capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return clone


@pytest.mark.slow
def test_readme_first_command_reproduces_the_claims_table(reproduction):
    claims = pd.read_csv(reproduction / "results" / "claims.csv")
    stated = re.search(r"\*\*(\d+) published quantities, (\d+) reproduced, (\d+) differ by design, "
                       r"(\d+) not computed\*\*", README)
    assert stated, "the README states the claims counts"
    total, reproduced, differs, not_computed = map(int, stated.groups())
    counts = claims["status"].value_counts()
    assert len(claims) == total
    assert (counts.get("reproduced", 0), counts.get("differs", 0),
            counts.get("not computed", 0)) == (reproduced, differs, not_computed)


@pytest.mark.slow
def test_readme_own_data_example_computes_only_the_users_panels(reproduction):
    """my.yaml saved from the README and the README's command, from the repository root."""
    root = reproduction
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
    shutil.rmtree(root / "results")
    command = readme_command("snakemake --cores 4 --configfile my.yaml")
    result = subprocess.run(["bash", "-c", f". .venv/bin/activate && {command}"], cwd=root,
                            env=user_environment(), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    panels = {p.name for p in (root / "results").iterdir() if p.is_dir()} - {"logs", "benchmarks"}
    assert panels == {"mine"}
    beta = pd.read_csv(root / "results/mine/cbc/beta.csv", dtype={"language": str})
    assert len(beta) == 9 and np.allclose(beta.groupby("language")["beta"].sum(), 0)
    tensor = pd.read_parquet(root / "results/mine/tensor.parquet")
    assert sorted(tensor["task"].unique())[:2] == ["000", "001"]  # zero-padded ids kept
