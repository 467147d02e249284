"""Declared resources cover the measured ones: every job's benchmark ``max_rss`` is at most the
``mem_mb`` its rule declared for it (docs/performance.md, "Declared resources").

Two runs: the README's full default reproduction (every default panel and analysis; the shared
``readme_reproduction`` fixture, so it costs nothing here), and the heavy run-level rules
(ingest, the CMI null and test, the ANOVA with replication) on a judge-runs panel of 57,600 runs,
where the requests computed from the input's size (``scaled`` in rules/common.smk) are used.
"""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_workflow import snakemake

REPO = Path(__file__).resolve().parents[1]


def load_scale_benchmark():
    spec = importlib.util.spec_from_file_location("analyses_scale",
                                                  REPO / "benchmarks" / "analyses_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def jobs_over_their_declaration(workdir: Path) -> tuple[list[dict], list[str]]:
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    jobs = [job for log in logs for job in load_scale_benchmark().measured(workdir / "results",
                                                                            log)
            if job["mem_mb"] is not None]
    over = [f"{job['benchmark']}: max_rss {job['max_rss_mb']:.0f} MB > mem_mb {job['mem_mb']}"
            for job in jobs if job["max_rss_mb"] > job["mem_mb"]]
    return jobs, over


@pytest.mark.slow
def test_default_run_jobs_stay_within_their_declared_memory(readme_reproduction):
    jobs, over = jobs_over_their_declaration(readme_reproduction)
    assert len({job["rule"] for job in jobs}) >= 10, "benchmark files or their log not found"
    assert not over, "\n".join(over)


@pytest.mark.slow
def test_heavy_rules_declare_memory_from_their_input(tmp_path):
    rng = np.random.default_rng(29)
    grid = pd.MultiIndex.from_product(
        [[f"t{i:03d}" for i in range(240)], [f"l{i}" for i in range(6)],
         [f"b{i}" for i in range(4)], [f"r{i}" for i in range(10)]],
        names=["task", "language", "backbone", "framework"]).to_frame(index=False)
    grid["score"] = 10.0 * rng.integers(0, 11, len(grid))
    (tmp_path / "data").mkdir()
    grid.to_parquet(tmp_path / "data" / "runs.parquet")
    config = {"data_dir": str(tmp_path / "data"),
              "information": {"permutations": 20, "shards": 1, "conventions": ["protocol"]},
              "panels": {"big": {"kind": "judge_runs", "runs": "runs.parquet",
                                 "score_range": [0, 100], "analyses": ["information",
                                                                       "diagnostics"]}}}
    (tmp_path / "config.yaml").write_text(json.dumps(config))
    snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"), "--cores", "2",
              "results/big/information/cmi.json", "results/big/diagnostics/three_way.json")
    jobs, over = jobs_over_their_declaration(tmp_path)
    assert {job["rule"] for job in jobs} >= {"ingest", "cmi_null_shard", "cmi", "three_way"}
    assert not over, "\n".join(over)
