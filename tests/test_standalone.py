"""The README's commands, verbatim, in a copy of the repository with nothing beside it.

The copy holds exactly the files git tracks (and new files it does not ignore), in an otherwise
empty folder, so a path outside the repository, an untracked input or a missing install step
fails here as it would for a new user.
"""
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from snapshot import copy_repository
from conftest import assert_strict_json, readme_command, run_as_user

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
GUIDE = (REPO / "docs" / "running.md").read_text()


def readme_block(start: str, text: str = GUIDE) -> str:
    """The fenced block of docs/running.md (the README's own-data section points there) whose
    first line starts with ``start``."""
    for block in re.findall(r"```\w*\n(.*?)```", text, flags=re.S):
        if block.startswith(start):
            return block
    raise AssertionError(f"docs/running.md has no code block starting with {start!r}")


@pytest.mark.slow
def test_readme_first_command_reproduces_the_claims_table(readme_reproduction):
    claims = pd.read_csv(readme_reproduction / "results" / "claims.csv")
    stated = re.search(r"\*\*(\d+) published quantities, (\d+) reproduced, "
                       r"(\d+) differ by design, (\d+) not computed\*\*", README)
    assert stated, "the README states the claims counts"
    total, reproduced, differs, not_computed = map(int, stated.groups())
    counts = claims["status"].value_counts()
    assert len(claims) == total
    assert (counts.get("reproduced", 0), counts.get("differs", 0),
            counts.get("not computed", 0)) == (reproduced, differs, not_computed)


@pytest.mark.slow
def test_every_json_of_the_reproduction_is_strict_json(readme_reproduction):
    # the ANOVA's untested rows were NaN; now null, with the reason under "undefined"
    assert assert_strict_json(readme_reproduction / "results") >= 20
    anova = json.loads((readme_reproduction / "results/devai/diagnostics/three_way.json")
                       .read_text())
    assert anova["table"][-1]["f"] is None
    assert anova["undefined"]["table[7].f"].startswith("no F test")


@pytest.mark.slow
def test_the_reproductions_page_says_the_devai_judges_do_not_agree_with_humans(
        readme_reproduction):
    card = pd.read_csv(readme_reproduction / "results/devai/card/agreement.csv")
    kappa = card[(card["measure"] == "cohen_kappa") & (card["versus"] == "reference")]
    panel = kappa[(kappa["judge"] != "agent_gray_box") & (kappa["language"] != "all languages")]
    assert len(panel) == 48 and panel["estimate"].abs().max() < 0.06
    original = kappa[kappa["judge"] == "agent_gray_box"]["estimate"]
    assert original.iloc[0] == pytest.approx(0.778, abs=0.001)
    page = (readme_reproduction / "results/index.html").read_text()
    assert ("in the 48 language x judge cells, every interval at or below 0.20: no judge agrees "
            "with it beyond chance, so the ranking is one of leniency") in page


def sha256(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_readme_own_data_commands_are_the_guides():
    """The README's own-data block is docs/running.md's, which the slow test below runs."""
    block = readme_block("mkdir ../my_project", README)
    assert block == readme_block("mkdir ../my_project")
    assert "--snakefile ../polyjudge/Snakefile --configfile my.yaml" in block


@pytest.mark.slow
def test_own_panels_in_their_own_folder_leave_the_reproduction_as_it_was(readme_reproduction):
    """The default reproduction (the shared fixture), then a user's panel the documented way
    (my.yaml and the commands of docs/running.md, in a folder beside the clone), then the
    default reproduction's command again: the default results page and claims table are
    unchanged, the user's outputs are all in the user's folder, and its page shows only the
    user's panel."""
    results = readme_reproduction / "results"
    before = {name: sha256(results / name) for name in ("index.html", "claims.csv")}
    default_panels = {p.name for p in results.iterdir() if p.is_dir()}

    commands = readme_block("mkdir ../my_project").splitlines()
    assert commands[0].startswith("mkdir ../my_project && cd ../my_project")
    project = readme_reproduction.parent / "my_project"
    if project.exists():  # a rerun on the same basetemp
        import shutil
        shutil.rmtree(project)
    project.mkdir()
    example = readme_block("# my.yaml")
    (project / "my.yaml").write_text(example)
    data_dir = project / re.search(r"^data_dir: (\S+)", example, flags=re.M).group(1)
    data_dir.mkdir(parents=True)
    rng = np.random.default_rng(0)
    index = pd.MultiIndex.from_product(
        [[f"{i:03d}" for i in range(12)], ["en", "de", "sw"], ["judge-a", "judge-b", "judge-c"],
         ["r1", "r2"]], names=["prompt_id", "language", "judge_model", "framework"])
    runs = index.to_frame(index=False)
    runs["pct"] = rng.uniform(0, 100, len(runs)).round(2)
    runs.to_csv(data_dir / "my_runs.csv", index=False)
    venv = readme_reproduction / ".venv"  # the one the README's first command installed
    result = run_as_user(f". {venv}/bin/activate && {commands[-1]}", project, timeout=900)

    panels = {p.name for p in (project / "results").iterdir() if p.is_dir()} - {"logs",
                                                                                 "benchmarks"}
    assert panels == {"mine"}
    assert "panels: mine (7 analyses)" in result.stderr and "figures:" in result.stderr
    page = (project / "results" / "index.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="page-data">(.*?)</script>',
                                page, flags=re.S).group(1))
    assert [panel["name"] for panel in data["panels"]] == ["mine"]
    beta = pd.read_csv(project / "results/mine/cbc/beta.csv", dtype={"language": str})
    assert len(beta) == 9 and np.allclose(beta.groupby("language")["beta"].sum(), 0)
    tensor = pd.read_parquet(project / "results/mine/tensor.parquet")
    assert sorted(tensor["task"].unique())[:2] == ["000", "001"]  # zero-padded ids kept

    assert {p.name for p in results.iterdir() if p.is_dir()} == default_panels
    again = run_as_user(f". {venv}/bin/activate && snakemake --cores 2", readme_reproduction,
                        timeout=900)
    assert "Nothing to be done" in again.stdout + again.stderr
    assert {name: sha256(results / name) for name in before} == before
