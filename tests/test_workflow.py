"""End-to-end: real snakemake runs in temporary directories, a dry run of the full DAG, and the
start-up checks that refuse a config before any job."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import DATA, DEVAI_DIR, assert_strict_json, start_up_refusal
from polyjudge.analyses.simulation import RANK_COVERAGE_COLUMNS

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(workdir, *args, check=True):
    """Run snakemake on the repository's Snakefile inside ``workdir``."""
    command = SNAKEMAKE + ["-s", str(REPO / "Snakefile"), "--cores", "2", *args]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def write_config(workdir, config):
    path = Path(workdir) / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def own_data_config(tmp_path):
    """A user's own run table, with their own column names, next to the real devai panel."""
    runs = pd.read_parquet(DEVAI_DIR / "run_level_scores.parquet")
    mine = runs[runs["backbone"].isin(["gpt-4o", "qwen3.5-9b", "gpt-5.4"])
                & runs["language"].isin(["English", "Spanish", "Hindi"])]
    mine = mine.rename(columns={"task": "prompt_id", "score": "pct", "backbone": "judge_model"})
    (tmp_path / "data").mkdir()
    mine.to_csv(tmp_path / "data" / "my_runs.csv", index=False)
    return {
        "data_dir": str(tmp_path / "data"),
        "panels": {
            "mine": {"kind": "judge_runs", "runs": "my_runs.csv",
                     "columns": {"task": "prompt_id", "score": "pct", "backbone": "judge_model"},
                     "score_range": [0, 100], "missing": "error", "analyses": ["cbc"]},
        },
        "simulation": {"scenarios": {}},
    }


def own_runs_config(tmp_path):
    """The user's panel with four analyses, and the same runs of one framework without a
    framework column (one run per cell), in one config: the run the tests below share."""
    config = own_data_config(tmp_path)
    config["panels"]["mine"]["analyses"] = ["cbc", "heldout", "reversal", "information"]
    runs = pd.read_csv(tmp_path / "data" / "my_runs.csv")
    runs[runs["framework"] == "OpenHands"].drop(columns="framework").to_csv(
        tmp_path / "data" / "one_run.csv", index=False)
    config["panels"]["one_run"] = dict(config["panels"]["mine"], runs="one_run.csv",
                                       analyses=["cbc"])
    config.update({"heldout": {"replicates": 50}, "reversal": {"permutations": 49},
                   "information": {"permutations": 30, "shards": 3}})
    return config


@pytest.fixture(scope="module")
def own_runs(tmp_path_factory):
    """The own-data config run once at --cores 2: (folder, config, snakemake's result)."""
    root = tmp_path_factory.mktemp("own_runs")
    config = own_runs_config(root)
    result = snakemake(root, "--configfile", str(write_config(root, config)))
    return root, config, result


@pytest.mark.slow
def test_own_data_end_to_end(own_runs):
    tmp_path, _, result = own_runs
    config = tmp_path / "config.yaml"
    # the run ends with a short summary a person reads; on the user's own panel claims.md says
    # the claims belong to the default reproduction
    summary = result.stderr[result.stderr.index("polyjudge: finished."):].splitlines()
    assert len(summary) <= 6 + 2  # then only snakemake's own "Complete log(s)" and its time
    summary = summary[:6]
    assert "result file(s) written this run, under results/" in summary[0]
    # figures: cbc's heatmap and bump chart for both panels, and one each for heldout, reversal
    # and information
    assert summary[1:] == [
        "  panels: mine (4 analyses), one_run (cbc)",
        "  claims: none checked, as these panels are not the default reproduction's "
        "(results/claims.md)",
        "  figures: 7 in results/<panel>/figures/ (PNG and SVG)",
        "  results page: results/index.html (open it in a browser)",
        "  report: snakemake --report results/report.html"], summary
    assert "claims: {" not in result.stderr  # the claims log line was a Python dict
    claims_md = (tmp_path / "results" / "claims.md").read_text()
    assert "default reproduction" in claims_md and "not computed |" not in claims_md
    out = tmp_path / "results" / "mine"
    beta = pd.read_csv(out / "cbc" / "beta.csv")
    assert list(beta.columns) == ["language", "backbone", "beta"] and len(beta) == 9
    assert np.allclose(beta.groupby("language")["beta"].sum(), 0)
    summary = json.loads((out / "cbc" / "summary.json").read_text())
    assert summary["n_runs"] == 55 * 3 * 3 * 3 and summary["same_order_after_cbc"]
    assert set(summary["inputs"]) == {"runs"} and len(summary["inputs"]["runs"]["sha256"]) == 64
    # calibrated scores outside the panel's score_range [0, 100] are counted, not clipped
    calibrated = pd.read_parquet(out / "cbc" / "calibrated_tensor.parquet")["score"]
    assert summary["calibrated_outside_range"] == {
        "score_range": [0.0, 100.0], "n_scores": len(calibrated),
        "n_outside": int(((calibrated < 0) | (calibrated > 100)).sum()),
        "n_below": int((calibrated < 0).sum()), "n_above": int((calibrated > 100).sum())}
    rankings = pd.read_csv(out / "cbc" / "rankings.csv")
    assert rankings.groupby("backbone")["rank_cbc"].nunique().eq(1).all()
    for log in ["ingest", "cbc"]:
        assert "done" in (out / "logs" / f"{log}.log").read_text()
    assert assert_strict_json(tmp_path / "results") >= 8
    # a second run has nothing to do
    again = snakemake(tmp_path, "--configfile", str(config), "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def planned_jobs(text):
    """The 'Job stats' table of a dry run as {rule: count}."""
    lines = text.split("Job stats:")[1].splitlines()[3:]
    jobs = {}
    for line in lines:
        if not line.strip():
            break
        rule, count = line.split()
        jobs[rule] = int(count)
    jobs.pop("total")
    return jobs


def small_config():
    """A quick config: a small synthetic panel with every analysis, few replicates."""
    defaults = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    synthetic = dict(defaults["panels"]["synthetic"], n_tasks=16, n_languages=4,
                     n_backbones=4, n_frameworks=2, requirements_per_task=0)
    synthetic["analyses"] = sorted(set(synthetic["analyses"]) | {"missing"})
    verdicts = dict(defaults["panels"]["judge_ls_synthetic"], n_items=60)
    return {"data_dir": str(DATA), "panels": {"small": synthetic, "verdicts": verdicts},
            "ablations": {"task_count": {"n_values": [8, 16], "replicates": 20, "seed": 107},
                          "backbone_subsets": {"sizes": None, "replicates": 20, "seed_base": 7},
                          "requirement_type": defaults["ablations"]["requirement_type"]},
            "lolo": {"replicates": 50, "seed": 207},
            "bands": {"replicates": 200, "seed": 0, "level": 0.95},
            "missing": dict(defaults["missing"], replicates=10),
            "heldout": dict(defaults["heldout"], replicates=100),
            "decisions": {"replicates": 100, "seed": 307},
            "reversal": dict(defaults["reversal"], permutations=99),
            "information": dict(defaults["information"], permutations=40, shards=1),
            "simulation": {"scenarios": {"tiny": {"n_tasks": 12, "n_panels": 4}},
                           "band_replicates": 100}}


@pytest.mark.slow
def test_small_synthetic_panel_end_to_end_and_params_tracking(tmp_path):
    config = small_config()
    path = path_config = write_config(tmp_path, config)
    snakemake(tmp_path, "--configfile", str(path))
    out = tmp_path / "results" / "small"
    for name in ["cbc/beta.csv", "cbc/bands.csv", "heldout/tau.csv", "heldout/decisions.json",
                 "reversal/pairs.csv", "information/cmi.json", "ablations/task_count.csv",
                 "ablations/backbone_subsets.csv", "lolo/lolo.csv", "missing/mae.csv",
                 "diagnostics/three_way.json", "synthetic/beta_true.csv"]:
        assert (out / name).stat().st_size > 0, name
    for name in ["accuracy", "flips", "position", "tie_probe", "audit", "recovery"]:
        assert len(pd.read_csv(tmp_path / "results/verdicts/judge_ls" / f"{name}.csv")) > 0, name
    assert "# Judge-LS summary" in (tmp_path / "results/verdicts/judge_ls/summary.md").read_text()
    assert len(pd.read_csv(tmp_path / "results/simulation/summary.csv")) == 1
    ranks = pd.read_csv(tmp_path / "results/simulation/rank_coverage.csv")
    assert list(ranks) == RANK_COVERAGE_COLUMNS
    assert ranks[["scenario", "ranking", "interval"]].values.tolist() == [
        ["tiny", ranking, kind] for ranking in ("raw", "cbc")
        for kind in ("marginal", "simultaneous")]
    assert (ranks["n_replicates"] == 200).all() and (ranks["n_panels"] == 4).all()
    assert ranks["coverage"].between(0, 1).all()
    assert (ranks["coverage_language"] <= ranks["coverage"]).all()
    assert ranks["mean_length"].between(1, ranks["n_backbones"]).all()
    # every figure the panels' analyses allow is drawn, as PNG and SVG, and none is empty
    expected = {"interaction_heatmap", "ranking_bump_chart", "band_vs_radius", "heldout_tau",
                "reversal_strength", "cmi_null", "task_count_curve", "backbone_subsets", "lolo",
                "deletion_mae"}
    verdict_figures = {"judge_ls_flips", "judge_ls_position"}
    for panel, names in (("small", expected), ("verdicts", verdict_figures)):
        drawn = {p.stem for p in (tmp_path / "results" / panel / "figures").glob("*.png")}
        assert drawn == names, panel
        for name in names:
            for suffix in (".png", ".svg"):
                path = tmp_path / "results" / panel / "figures" / f"{name}{suffix}"
                assert path.stat().st_size > 1000, path
    assert (tmp_path / "results/simulation/figures/coverage.png").stat().st_size > 1000
    report = snakemake(tmp_path, "--configfile", str(path_config), "--report", "report.html")
    assert (tmp_path / "report.html").stat().st_size > 100_000, report.stderr[-2000:]
    assert "reproduced" in (tmp_path / "results/claims.csv").read_text() or \
        "not computed" in (tmp_path / "results/claims.csv").read_text()
    summary = json.loads((out / "cbc" / "summary.json").read_text())
    assert summary["seed"] == config["panels"]["small"]["seed"]
    assert summary["beta_error_vs_truth"]["mean_abs"] < summary["radius_total"]
    task_count = pd.read_csv(out / "ablations" / "task_count.csv")
    assert task_count["n_tasks"].tolist() == [8, 16] and "error_true_mean" in task_count
    # editing one ablation's settings reruns only that ablation
    config["ablations"]["backbone_subsets"]["replicates"] = 30
    path = write_config(tmp_path, config)
    plan = snakemake(tmp_path, "--configfile", str(path), "-n")
    # (its panel's figures, and the claims table and the results page, which read every
    # output, are refreshed too)
    assert planned_jobs(plan.stdout + plan.stderr) == {"backbone_subsets": 1, "figures_small": 1,
                                                       "claims": 1, "page": 1, "all": 1}


def result_files(root: Path) -> dict:
    """Every result file's bytes but the logs and benchmarks (which hold times)."""
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {"logs", "benchmarks"} & set(p.relative_to(root).parts)}


# the own-data run's jobs with a seed (cbc's rank intervals, held-out, reversal, the CMI null's
# 3 shards in both conventions), which ran side by side at --cores 2, and those that read them
SEEDED = ("cbc", "heldout", "reversal", "information")
RERUN = {"cbc": 1, "calibrator": 1, "heldout": 1, "reversal": 1, "cmi_null_shard": 6, "cmi": 1,
         "figures_mine": 1, "claims": 1, "page": 1, "all": 1}


@pytest.mark.slow
def test_outputs_are_byte_identical_whatever_the_number_of_cores(own_runs, tmp_path):
    """A copy of the --cores 2 run whose seeded jobs, and every job downstream of them, rerun at
    --cores 1 (one at a time, in another order) holds the same bytes in every result file."""
    shared, copy = own_runs[0], tmp_path / "cores_1"
    shutil.copytree(shared, copy, symlinks=True)  # its config reads the shared folder's data/
    for stage in SEEDED:
        shutil.rmtree(copy / "results" / "mine" / stage)
    rerun = snakemake(copy, "--configfile", str(copy / "config.yaml"), "--cores", "1")
    assert planned_jobs(rerun.stdout + rerun.stderr) == RERUN
    results = {"1": result_files(copy / "results"), "2": result_files(shared / "results")}
    assert results["1"].keys() == results["2"].keys() and len(results["1"]) > 20
    different = [str(p) for p in results["1"] if results["1"][p] != results["2"][p]]
    assert not different


def out_of_range(runs, panel):
    runs.loc[7, "pct"] = 130.0
    return runs


def nan_score(runs, panel):
    runs.loc[3, "pct"] = float("nan")
    return runs


def duplicate_run(runs, panel):
    return pd.concat([runs, runs.iloc[[5]]])


def no_language_column(runs, panel):
    return runs.drop(columns="language")


def missing_cell(runs, panel):
    return runs[~((runs["prompt_id"] == runs["prompt_id"].iloc[0]) & (runs["language"] == "Hindi")
                  & (runs["judge_model"] == "gpt-4o"))]


def column_typo(runs, panel):
    panel["columns"]["task"] = "promptid"  # the file has prompt_id
    return runs


def percent_scores(runs, panel):
    return runs.assign(pct=runs["pct"].map(lambda value: f"{value:.2f}%"))


DAMAGES = {  # each damages the user's table (or its columns mapping) one way, with the message
    "out_of_range": (out_of_range, "my_runs.csv: 1 score(s) outside [0, 100]"),
    "nan_score": (nan_score, "my_runs.csv: 1 missing (NaN) score(s)"),
    "duplicate_run": (duplicate_run, "my_runs.csv: 2 rows share the same"),
    "no_language_column": (no_language_column, "my_runs.csv: missing column(s) ['language']"),
    "missing_cell": (missing_cell,
                     "unbalanced panel: 1 of 495 task x language x backbone cells have no runs"),
    "column_typo": (column_typo, "my_runs.csv: missing column(s) [\"task (your 'promptid')\"]"),
    "percent_scores": (percent_scores, "my_runs.csv: 1485 non-numeric score(s) in column 'pct'"),
}


@pytest.fixture(scope="module")
def damaged_runs(tmp_path_factory):
    """One run (--keep-going) of one panel per damage, each reading its own damaged copy of
    the user's table (data/<case>/my_runs.csv): (folder, snakemake's result)."""
    root = tmp_path_factory.mktemp("damaged")
    config = own_data_config(root)
    good, runs = config["panels"].pop("mine"), pd.read_csv(root / "data" / "my_runs.csv")
    for case, (damage, _) in DAMAGES.items():
        panel = yaml.safe_load(yaml.safe_dump(good))
        (root / "data" / case).mkdir()
        damage(runs.copy(), panel).to_csv(root / "data" / case / "my_runs.csv", index=False)
        config["panels"][case] = dict(panel, runs=f"{case}/my_runs.csv")
    result = snakemake(root, "--configfile", str(write_config(root, config)), "--keep-going",
                       check=False)
    return root, result


@pytest.mark.slow
@pytest.mark.parametrize("case", DAMAGES)
def test_bad_input_stops_with_a_clear_message_and_no_output(damaged_runs, case):
    tmp_path, result = damaged_runs
    message = DAMAGES[case][1]
    assert result.returncode != 0
    # once on the console: in the run's last lines, not also by the rule script on stderr and
    # by Snakemake printing the failed rule's whole log
    assert (result.stdout + result.stderr).count(message) == 1
    log = (tmp_path / f"results/{case}/logs/ingest.log").read_text()
    assert message in log and "Traceback" not in log
    assert not list((tmp_path / "results" / case).glob("*.parquet"))
    # the run ends with each failed rule's message (the Snakefile's onerror), followed only by
    # Snakemake's last lines (its log file, the time, "At least one job did not complete")
    ending = result.stderr[result.stderr.rindex("polyjudge: the run stopped"):].splitlines()
    heading = f"  rule ingest (results/{case}/logs/ingest.log):"
    assert heading in ending and message in ending[ending.index(heading) + 1]
    blocks = [i for i, line in enumerate(ending) if line.startswith("  rule ")]
    assert len(blocks) == len(DAMAGES)
    assert all(b - a <= 1 + 14 + 1 for a, b in zip(blocks, blocks[1:] + [len(ending) - 4]))
    assert "Complete log(s)" in ending[-4] and "did not complete successfully" in ending[-1]


@pytest.mark.slow
def test_run_table_without_framework_column_is_one_run_per_cell(own_runs):
    tmp_path = own_runs[0]
    summary = json.loads((tmp_path / "results/one_run/cbc/summary.json").read_text())
    assert summary["n_runs"] == 55 * 3 * 3


def test_analyses_a_panel_cannot_run_are_refused_at_start(tmp_path):
    config = own_data_config(tmp_path)
    config["panels"]["mine"]["analyses"] = ["cbc", "parse_failures", "judge_ls", "external"]
    text = start_up_refusal(config, config["data_dir"])
    for analysis in ("parse_failures", "judge_ls", "external"):
        assert f"panel 'mine': analysis '{analysis}'" in text
    assert "panel 'mine': analysis 'cbc'" not in text


def test_unknown_panel_kind_is_rejected_by_the_schema(tmp_path):
    config = own_data_config(tmp_path)
    config["panels"]["mine"]["kind"] = "spreadsheet"
    assert "spreadsheet" in start_up_refusal(config, config["data_dir"])


@pytest.mark.slow
def test_full_default_dag_dry_run(default_plan):
    """The default config's whole DAG resolves: the shared dry run from the repository
    (``default_plan``; from another folder with -s: tests/test_config.py)."""
    code, text = default_plan
    assert code == 0, text[-3000:]
    assert "This was a dry-run" in text
    defaults = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for panel, settings in defaults["panels"].items():
        if "cbc" in settings["analyses"]:
            assert f"results/{panel}/cbc/summary.json" in text
