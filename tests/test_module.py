"""The workflow as a Snakemake module of another workflow, with its own config and a prefix."""
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

import polyjudge
from polyjudge.analyses.synthetic import simulate_panel
from polyjudge.scripting import write_csv

REPO = Path(__file__).resolve().parents[1]

HOST_SNAKEFILE = f'''\
configfile: "config.yaml"


module polyjudge:
    snakefile:
        "{REPO / "Snakefile"}"
    config:
        config["polyjudge"]
    prefix:
        "polyjudge"


use rule * from polyjudge as polyjudge_*


rule all:
    default_target: True
    input:
        rules.polyjudge_all.input,
        "summary.txt",


rule host_step:
    input:
        "polyjudge/results/mine/cbc/beta.csv",
    output:
        "summary.txt",
    shell:
        "wc -l < {{input}} > {{output}}"
'''


@pytest.mark.slow
def test_another_workflow_uses_ours_as_a_module(tmp_path):
    """A host workflow in its own folder gets our outputs under its prefix, from its own config:
    a synthetic panel (inputs made by our rules) and a run table under a relative data_dir."""
    (tmp_path / "data").mkdir()
    runs = simulate_panel(seed=8, n_tasks=8, n_languages=3, n_backbones=3, n_frameworks=1).runs
    runs.rename(columns={"score": "pct"}).to_csv(tmp_path / "data" / "runs.csv", index=False)
    config = {"polyjudge": {
        "data_dir": "data",
        "panels": {
            "small": {"kind": "synthetic", "seed": 3, "n_tasks": 6, "n_languages": 3,
                      "n_backbones": 3, "n_frameworks": 1, "analyses": ["cbc"]},
            "mine": {"kind": "judge_runs", "runs": "runs.csv", "columns": {"score": "pct"},
                     "analyses": ["cbc"]},
        },
        "simulation": {"scenarios": {}},
    }}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(HOST_SNAKEFILE)
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]

    again = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "-n"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout[-3000:]

    out = tmp_path / "polyjudge" / "results"
    assert not (tmp_path / "results").exists()          # nothing outside the prefix
    for panel in ("small", "mine"):
        for name in ("cbc/beta.csv", "cbc/summary.json", "figures/interaction_heatmap.png"):
            assert (out / panel / name).is_file(), name
    assert (out / "claims.csv").is_file()
    assert (tmp_path / "summary.txt").read_text().strip() == "10"   # header + 3 x 3 cells

    # the module's beta is the API's on the same data
    synthetic = pd.read_parquet(out / "small" / "synthetic" / "runs.parquet")
    for panel, table, columns in (("small", synthetic, {}),
                                  ("mine", pd.read_csv(tmp_path / "data" / "runs.csv"),
                                   {"score": "pct"})):
        write_csv(polyjudge.calibrate(table, **columns).beta, tmp_path / "api_beta.csv")
        assert (tmp_path / "api_beta.csv").read_bytes() == \
            (out / panel / "cbc" / "beta.csv").read_bytes(), panel
