"""The public API: same numbers as the workflow, same errors, the documented example runs."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import DATA, DEVAI_DIR

import polyjudge
from polyjudge.analyses.synthetic import simulate_panel
from polyjudge.data import io
from polyjudge.data.errors import InputError
from polyjudge.scripting import write_csv

REPO = Path(__file__).resolve().parents[1]


def csv_bytes(frame, tmp_path, name):
    """The bytes the workflow would write for ``frame``."""
    path = tmp_path / name
    write_csv(frame, path)
    return path.read_bytes()


def unusual_runs() -> pd.DataFrame:
    """A complete synthetic run table whose labels are unicode, spaced, punctuated, zero-padded
    ("007", "07", "7": three tasks) or missing-value words ("NA"), with the user's own column
    names."""
    runs = simulate_panel(seed=4, n_tasks=12, n_languages=4, n_backbones=3, n_frameworks=2).runs
    rename = {
        "task": {f"t{i:02d}": name for i, name in enumerate(
            ["tâche 1", "task 2", "task 10", "任务 3", "t-4 (hard)", "007", "07", "7",
             "x,8", "ünïcödé 9", "task 11", "NA"], start=1)},
        "language": dict(zip(["L1", "L2", "L3", "L4"], ["Français", "中文", "हिन्दी",
                                                        "Kiswahili (sw)"])),
        "backbone": dict(zip(["B1", "B2", "B3"], ["gpt 4o", "Claude/Sonnet 4.6", "qwen-3,5"])),
    }
    frame = pd.DataFrame({axis: runs[axis].astype(str).map(mapping)
                          for axis, mapping in rename.items()})
    assert frame.notna().all().all()
    return pd.DataFrame({"prompt id": frame["task"], "lang": frame["language"],
                         "judge model": frame["backbone"],
                         "framework": runs["framework"].astype(str),
                         "pct": runs["score"].to_numpy()})


UNUSUAL_COLUMNS = {"task": "prompt id", "language": "lang", "backbone": "judge model",
                   "score": "pct"}


@pytest.fixture(scope="module")
def workflow_cbc(tmp_path_factory):
    """One workflow run of the cbc target on the default devai and mrewardbench panels and on
    the unusual run table."""
    workdir = tmp_path_factory.mktemp("workflow")
    (workdir / "data").mkdir()
    unusual_runs().to_csv(workdir / "data" / "unusual.csv", index=False)
    defaults = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["panels"]
    panels = {name: {**defaults[name], "analyses": ["cbc"]}
              for name in ("devai", "mrewardbench")}
    panels["unusual"] = {"kind": "judge_runs", "runs": str(workdir / "data" / "unusual.csv"),
                         "columns": UNUSUAL_COLUMNS, "analyses": ["cbc"]}
    config = {"data_dir": str(DATA), "panels": panels, "simulation": {"scenarios": {}}}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    targets = [f"results/{name}/cbc/{file}" for name in panels
               for file in ("beta.csv", "rankings.csv", "summary.json")]
    command = [sys.executable, "-m", "snakemake", *targets, "-s", str(REPO / "Snakefile"),
               "--cores", "2", "--configfile", "config.yaml"]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir / "results", panels


def check_same_as_workflow(result, folder: Path, tmp_path):
    assert csv_bytes(result.beta, tmp_path, "beta.csv") == (folder / "beta.csv").read_bytes()
    assert csv_bytes(result.rankings, tmp_path, "rankings.csv") == \
        (folder / "rankings.csv").read_bytes()
    summary = yaml.safe_load((folder / "summary.json").read_text())
    for key, value in result.summary.items():
        if key.startswith("r2_") and isinstance(value, float):
            # the last bits of R^2 (a BLAS dot product) depend on the thread count, which
            # Snakemake sets to the rule's threads
            assert summary[key] == pytest.approx(value, rel=1e-12, abs=0), key
        else:
            assert summary[key] == value, key


@pytest.mark.slow
def test_calibrate_equals_the_workflow_on_devai(workflow_cbc, devai_runs, tmp_path):
    results, panels = workflow_cbc
    result = polyjudge.calibrate(pd.read_parquet(DEVAI_DIR / "run_level_scores.parquet"),
                                languages=panels["devai"]["languages"],
                                backbones=panels["devai"]["backbones"], score_range=(0, 100))
    check_same_as_workflow(result, results / "devai" / "cbc", tmp_path)
    assert result.estimator == "plain"
    assert result.radius_total == pytest.approx(9.96, abs=0.005)      # the paper's "about 10"
    assert result.r2_two_way == pytest.approx(0.6905, abs=5e-5)


@pytest.mark.slow
def test_calibrate_equals_the_workflow_on_an_incomplete_preference_panel(workflow_cbc, tmp_path):
    results, panels = workflow_cbc
    panel = panels["mrewardbench"]
    margins = io.load_preference_margins(panel["files"], DATA)
    result = polyjudge.calibrate(margins, languages=panel["languages"],
                                backbones=panel["backbones"], missing="omit",
                                estimator="available_means")
    check_same_as_workflow(result, results / "mrewardbench" / "cbc", tmp_path)
    assert not result.summary["complete"] and result.estimator == "available_means"


@pytest.mark.slow
def test_calibrate_equals_the_workflow_with_unusual_names(workflow_cbc, tmp_path):
    results, _ = workflow_cbc
    result = polyjudge.calibrate(unusual_runs(), **UNUSUAL_COLUMNS)
    check_same_as_workflow(result, results / "unusual" / "cbc", tmp_path)
    assert set(result.beta["language"]) == {"Français", "中文", "हिन्दी", "Kiswahili (sw)"}
    assert set(result.beta["backbone"]) == {"gpt 4o", "Claude/Sonnet 4.6", "qwen-3,5"}
    assert result.summary["n_tasks"] == 12  # "007", "07" and "7" stay three tasks, "NA" one
    assert {"007", "07", "7", "NA"} <= set(result.calibrated["task"])


def test_calibrate_recovers_the_planted_interaction_and_its_identities():
    synthetic = simulate_panel(seed=9, n_tasks=400, n_languages=3, n_backbones=4,
                               n_frameworks=1, noise_sd=2.0, task_language_sd=0.0)
    result = polyjudge.calibrate(synthetic.runs)
    merged = result.beta.merge(synthetic.beta_frame(), on=["language", "backbone"])
    assert np.abs(merged["beta"] - merged["beta_true"]).max() < 0.5
    beta = result.beta.pivot(index="language", columns="backbone", values="beta")
    assert np.allclose(beta.sum(axis=0), 0) and np.allclose(beta.sum(axis=1), 0)
    ranks = result.rankings.pivot(index="language", columns="backbone", values="rank_cbc")
    assert (ranks.nunique(axis=0) == 1).all()   # after CBC every language ranks alike
    # calibrated scores are T - beta, cell by cell
    calibrated = result.calibrated.merge(result.beta, on=["language", "backbone"])
    raw = result.panel.to_frame().merge(calibrated, on=["task", "language", "backbone"])
    assert np.allclose(raw["score_x"] - raw["beta"], raw["score_y"])


def test_incomplete_panel_uses_least_squares_by_default():
    synthetic = simulate_panel(seed=2, n_tasks=20, n_languages=3, n_backbones=3,
                               missing_fraction=0.1)
    with pytest.raises(InputError, match="unbalanced panel"):
        polyjudge.calibrate(synthetic.runs)
    result = polyjudge.calibrate(synthetic.runs, missing="omit")
    assert result.estimator == "least_squares" and not result.summary["complete"]


@pytest.mark.parametrize("damage, message", [
    (lambda runs: runs.assign(pct=runs["pct"].astype(object).where(runs.index != 3, "n/a")),
     "1 non-numeric score(s)"),
    (lambda runs: pd.concat([runs, runs.iloc[[0]]], ignore_index=True), "rows share the same"),
    (lambda runs: runs.drop(columns="lang"), "missing column(s) [\"language (your 'lang')\"]"),
])
def test_bad_input_gives_the_workflows_message(damage, message):
    """The same validation as the workflow's ingest, the table named by ``source``: the same
    problem, worded for the API (its arguments, the DataFrame's index)."""
    from polyjudge.data.errors import messages_for
    bad = damage(unusual_runs())
    with pytest.raises(InputError) as raised:
        polyjudge.calibrate(bad, source="my_runs.csv", **UNUSUAL_COLUMNS)
    with pytest.raises(InputError) as workflow:
        io.validate_runs(io.rename_columns(bad, UNUSUAL_COLUMNS), "my_runs.csv",
                         mapping=UNUSUAL_COLUMNS)
    with messages_for("api"), pytest.raises(InputError) as api:
        io.validate_runs(io.rename_columns(bad, UNUSUAL_COLUMNS), "my_runs.csv",
                         mapping=UNUSUAL_COLUMNS)
    assert str(raised.value) == str(api.value)
    problem = lambda error: str(error.value).splitlines()[0].split(" (after renaming")[0]
    assert problem(raised) == problem(workflow)
    assert str(raised.value).startswith("my_runs.csv: ") and message in str(raised.value)
    assert "panel" not in str(raised.value) and "file row" not in str(raised.value)


def test_public_functions_are_not_shadowed_by_their_analysis_modules():
    import inspect

    from polyjudge.analyses import heldout as heldout_module
    from polyjudge.analyses import judge_ls, reversal
    for name in ["calibrate", "heldout", "reversal", "cmi_test", "judge_ls", "prepare_runs"]:
        assert inspect.isfunction(getattr(polyjudge, name)), name
    assert callable(heldout_module.summarise_tau) and callable(reversal.rank_reversal)
    assert callable(judge_ls.flip_table)
    # importing the analysis modules leaves the public functions in place
    assert inspect.isfunction(polyjudge.heldout) and inspect.isfunction(polyjudge.judge_ls)
    runs = simulate_panel(seed=3, n_tasks=8, n_languages=3, n_backbones=3, n_frameworks=1).runs
    first = polyjudge.reversal(runs, permutations=19)
    assert first.summary["seed"] == 507
    assert set(polyjudge.__all__) <= set(dir(polyjudge))
    for name in polyjudge.__all__:
        assert getattr(polyjudge, name) is not None


def test_import_is_light():
    code = ("import sys, polyjudge; "
            "print(sorted(m for m in ('scipy', 'matplotlib', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_heldout_cmi_and_judge_ls_results():
    runs = simulate_panel(seed=6, n_tasks=15, n_languages=3, n_backbones=3, n_frameworks=2).runs
    held = polyjudge.heldout(runs, methods=["Raw", "CBC", "Dawid-Skene (requirement)"],
                            replicates=30, seed=1)
    # a method the data cannot support keeps its row, with the reason
    assert list(held.tau["method"]) == ["Raw", "CBC", "Dawid-Skene (requirement)"]
    assert held.skipped == ("Dawid-Skene (requirement)",)
    assert held.tau["reason"].tolist()[:2] == ["", ""]
    assert held.tau["reason"].iloc[2].startswith("not run: no requirement table")
    assert (held.tau.set_index("method").loc["CBC", "full_fit"]) == 1.0
    cmi = polyjudge.cmi_test(runs, permutations=12, shards=3, seed=2)
    assert len(cmi.null) == 24 and set(cmi.null["shard"]) == {0, 1, 2}
    # the workflow's route: shards drawn separately, then merged, gives the same test
    checked, panel = polyjudge.prepare_runs(runs)
    strata = polyjudge.api.cmi_strata(checked, panel)
    shards = pd.concat([polyjudge.api.cmi_null_shard(strata, c, s, permutations=12, shards=3,
                                                    seed=2)
                        for s in range(3) for c in ("sklearn", "protocol")])
    assert polyjudge.cmi_test(runs, permutations=12, shards=3, seed=2,
                             null=shards).summary == cmi.summary
    single = runs[runs["framework"] == runs["framework"].iloc[0]]
    with pytest.raises(InputError, match="repeated runs"):
        polyjudge.cmi_test(single)

    from polyjudge.analyses.judge_ls import simulate_judge_ls
    verdicts, truth = simulate_judge_ls(seed=5, n_items=120)
    renamed = verdicts.rename(columns={"judge": "model"})
    result = polyjudge.judge_ls(renamed, columns={"judge": "model"}, truth=truth)
    assert result.recovery["covered"].mean() > 0.8
    assert result.n_judgments == len(verdicts)
    assert list(result.tables()) == list(polyjudge.JudgeLS.TABLES)


def test_plots_are_the_workflow_figures():
    from matplotlib.figure import Figure
    runs = simulate_panel(seed=6, n_tasks=10, n_languages=3, n_backbones=3, n_frameworks=2).runs
    cbc = polyjudge.calibrate(runs)
    figures = [cbc.plot(), cbc.plot("ranking_bump_chart"),
               polyjudge.heldout(runs, methods=["Raw", "CBC"], replicates=20).plot(),
               polyjudge.reversal(runs, permutations=9).plot(),
               polyjudge.cmi_test(runs, permutations=8, shards=1).plot()]
    assert all(isinstance(figure, Figure) for figure in figures)
    with pytest.raises(ValueError, match="unknown figure"):
        cbc.plot("nope")


@pytest.mark.parametrize("document", ["docs/api.md", "docs/running.md"])
def test_the_documented_example_runs(document, tmp_path, monkeypatch):
    """Every ```python block of the document that is not a Snakefile runs, in order."""
    text = (REPO / document).read_text()
    blocks = [block for block in re.findall(r"```python\n(.*?)```", text, re.S)
              if "module polyjudge:" not in block]
    assert blocks
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").symlink_to(REPO / "data")  # the examples run from the repository root
    namespace = {}
    for block in blocks:
        exec(compile(block, str(REPO / document), "exec"), namespace)
    assert namespace["cbc"].estimator == "plain" and (tmp_path / "beta.png").is_file()
    if document == "docs/api.md":
        assert (tmp_path / "position.png").is_file()
        assert namespace["kappa"]["estimate"].abs().max() < 0.06  # the devai judges at chance


def test_api_messages_name_the_dataframe_index_and_the_arguments(monkeypatch):
    """A DataFrame has no panel config and no file rows: API errors name the function's
    arguments and the DataFrame's own index."""
    from polyjudge.analyses.synthetic import simulate_panel
    runs = simulate_panel(1, n_tasks=6, n_languages=2, n_backbones=2).runs
    runs.index = range(100, 100 + len(runs))
    runs.loc[104, "score"] = 150.0
    with pytest.raises(InputError) as error:
        polyjudge.calibrate(runs, score_range=(0, 100))
    text = str(error.value)
    assert "(the score_range argument)" in text and "the DataFrame's index" in text
    assert "\n    104 " in text and "file row" not in text and "panel" not in text
    runs.loc[104, "score"] = np.nan
    with pytest.raises(InputError, match=r"or missing='omit' to leave them out") as error:
        polyjudge.calibrate(runs)
    assert "panel config" not in str(error.value)
    polyjudge.calibrate(runs, missing="omit")  # the fix the message names works
    with pytest.raises(InputError) as error:
        polyjudge.Calibrator().fit(runs.rename(columns={"score": "rating"}))
    text = str(error.value)
    assert "the column arguments (task=, language=, backbone=, score=, framework=)" in text
    assert "score='pct'" in text and "`columns`" not in text
    seeds = runs.rename(columns={"framework": "seed"}).dropna()
    with pytest.raises(InputError, match=r"column 'seed' tells these rows apart: name it as the "
                                         r"framework \(framework='seed'\)"):
        polyjudge.calibrate(seeds)
    polyjudge.calibrate(seeds, framework="seed")
    # inside a rule script (run_step sets the variable) the same call words it for the workflow
    monkeypatch.setenv("POLYJUDGE_MESSAGES", "workflow")
    with pytest.raises(InputError, match=r"`missing: omit` in the panel config") as error:
        polyjudge.calibrate(runs)
    assert "file row numbers" in str(error.value) and "\n    6 " in str(error.value)
