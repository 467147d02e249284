"""The calibrator in the workflow: every cbc panel saves one, a panel applies another's
(`calibrator:`, `unseen:`), a panel adds judges to another (`extends:`), and the README's
example that adds a seventh judge to DevAI runs as written from the repository root."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import DEVAI_DIR, readme_command, run_as_user, start_up_refusal
from polyjudge.analyses import extension
from polyjudge.data.checksums import sha256
from polyjudge.data.errors import InputError
from polyjudge.data.panel import Panel
from polyjudge.data.yamlfile import read_yaml

REPO = Path(__file__).resolve().parents[1]
LANGUAGES = ["English", "Spanish", "Hindi"]
BACKBONES = ["gpt-4o", "gpt-5.4", "qwen3.5-9b"]


def snakemake(workdir, *args):
    """snakemake on the repository's Snakefile in ``workdir`` (targets before --configfile)."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--cores", "2",
               *args]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def devai_subset(tasks=slice(None), backbones=BACKBONES, languages=LANGUAGES) -> pd.DataFrame:
    runs = pd.read_parquet(DEVAI_DIR / "run_level_scores.parquet")
    chosen = sorted(runs["task"].unique())[tasks]
    return runs[runs["task"].isin(chosen) & runs["backbone"].isin(backbones)
                & runs["language"].isin(languages)]


def write_data(root: Path) -> Path:
    """data/: fit.csv (20 devai tasks), new.csv (10 other tasks), new_unseen.csv (those 10
    tasks, with a fourth judge the calibrator never saw)."""
    data = root / "data"
    data.mkdir()
    devai_subset(slice(0, 20)).to_csv(data / "fit.csv", index=False)
    devai_subset(slice(20, 30)).to_csv(data / "new.csv", index=False)
    devai_subset(slice(20, 30), BACKBONES + ["claude-sonnet-4.6"]).to_csv(
        data / "new_unseen.csv", index=False)
    return root


def write_config(workdir, panels, name="config.yaml", **more):
    config = {"data_dir": "data", "panels": panels, "simulation": {"scenarios": {}},
              "rank_intervals": {"replicates": 200, "level": 0.95, "seed": 0}, **more}
    path = workdir / name
    path.write_text(yaml.safe_dump(config))
    return str(path)


FIT = {"kind": "judge_runs", "runs": "fit.csv", "score_range": [0, 100], "analyses": ["cbc"]}


def applying(runs="new.csv", **settings):
    return {"kind": "judge_runs", "runs": runs, "score_range": [0, 100], "calibrator": "fit",
            **settings}


# --- fit in one panel, apply to another's tasks: one project, run once --------------------------

@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """One full run (exit 0) of panels that fit and apply: `new` applies `fit`'s calibrator to
    10 other tasks, `raw` to those with a fourth judge under `unseen: raw`, `file` applies
    data/mine.json, saved by polyjudge's Calibrator on fit.csv (its score column `pct`)."""
    from polyjudge import Calibrator
    root = write_data(tmp_path_factory.mktemp("project"))
    runs = pd.read_csv(root / "data/fit.csv").rename(columns={"score": "pct"})
    Calibrator(score="pct").fit(runs).save(root / "data" / "mine.json")
    config = write_config(root, {"fit": FIT, "new": applying(),
                                 "raw": applying("new_unseen.csv", unseen="raw"),
                                 "file": applying(calibrator="mine.json")})  # under data_dir
    code, text = snakemake(root, "--configfile", config)
    assert code == 0, text[-3000:]
    return root


@pytest.fixture(scope="module")
def failed(project):
    """One --keep-going run, in the project's folder (fit already fitted), of two panels that
    stop in their jobs: `strict` applies fit's calibrator to a judge it never saw (`unseen`
    left at error) and `plus` extends fit with a table that does not match it:
    (folder, exit code, snakemake's output)."""
    new = devai_subset(slice(0, 21), ["gpt-4o", "claude-sonnet-4.6"], ["English", "Spanish"])
    new.to_csv(project / "data" / "judges.csv", index=False)
    panels = {"fit": FIT, "strict": applying("new_unseen.csv"),
              "plus": {"kind": "judge_runs", "extends": "fit", "runs": "judges.csv"}}
    code, text = snakemake(project, "results/strict/applied/summary.json",
                           "results/plus/extend/summary.json", "--keep-going",
                           "--configfile", write_config(project, panels, "failed.yaml"))
    return project, code, text


def rule_message(text, rule, panel):
    """What the run's closing summary says for ``rule`` of ``panel`` (up to the next rule's
    block): each failure's message is checked where it names its own rule and panel."""
    ending = text[text.rindex("polyjudge: the run stopped"):]
    block = ending[ending.index(f"  rule {rule} (results/{panel}/logs/{rule}.log):"):]
    return block.split("\n  rule ")[0]


@pytest.mark.slow
def test_a_panel_applies_another_panels_calibrator_exactly(project):
    beta = pd.read_csv(project / "results/fit/cbc/beta.csv")
    saved = json.loads((project / "results/fit/cbc/calibrator.json").read_text())
    cells = pd.DataFrame(saved["cells"])
    merged = beta.merge(cells, on=["language", "backbone"], suffixes=("", "_file"))
    assert len(merged) == len(beta) == 9 and (merged["beta"] == merged["beta_file"]).all()
    applied = pd.read_parquet(project / "results/new/applied/runs.parquet")
    assert len(applied) == 10 * 3 * 3 * 3 and applied["calibrated"].all()
    check = applied.merge(beta, on=["language", "backbone"], suffixes=("", "_fit"))
    assert len(check) == len(applied)
    assert (check["beta"] == check["beta_fit"]).all()
    assert (check["score_cbc"] == check["score"] - check["beta_fit"]).all()  # exactly
    rankings = pd.read_csv(project / "results/new/applied/rankings.csv")
    assert len(rankings) == 9 and {"rank_low", "rank_high", "p_first"} <= set(rankings.columns)
    assert ((rankings["rank_low"] <= rankings["rank_cbc"])
            & (rankings["rank_cbc"] <= rankings["rank_high"])).all()
    assert (project / "results/new/figures/applied_ranks.png").stat().st_size > 1000
    # the applying panel fits nothing of its own unless asked
    assert not (project / "results/new/cbc").exists()
    summary = json.loads((project / "results/new/applied/summary.json").read_text())
    assert summary["training_sha256"] == saved["training"]["sha256"]
    assert summary["n_calibrated"] == len(applied) and summary["uncalibrated_pairs"] == []


@pytest.mark.slow
def test_an_unseen_backbone_stops_the_applying_panel_unless_unseen_raw(project, failed):
    _, code, text = failed
    assert code != 0
    message = rule_message(text, "apply_calibrator", "strict")
    assert "claude-sonnet-4.6" in message and "not fitted on" in message
    assert "unseen='raw'" in message  # the way to pass them through
    assert not (project / "results/strict/applied").exists()
    applied = pd.read_parquet(project / "results/raw/applied/runs.parquet")
    unseen = applied["backbone"] == "claude-sonnet-4.6"
    assert unseen.sum() == 90 and not applied.loc[unseen, "calibrated"].any()
    assert applied.loc[~unseen, "calibrated"].all()
    assert (applied.loc[unseen, "score_cbc"] == applied.loc[unseen, "score"]).all()
    assert applied.loc[unseen, "beta"].isna().all()
    summary = json.loads((project / "results/raw/applied/summary.json").read_text())
    assert summary["uncalibrated_pairs"] == [[language, "claude-sonnet-4.6"]
                                             for language in sorted(LANGUAGES)]


@pytest.mark.slow
def test_a_calibrator_file_from_polyjudge_fit_is_applied(project):
    applied = pd.read_parquet(project / "results/file/applied/runs.parquet")
    assert applied["calibrated"].all()
    assert np.allclose(applied["score_cbc"], applied["score"] - applied["beta"], rtol=0, atol=0)


# --- bad links stop at start-up, before anything is written ------------------------------------

# `calibrator:` values that are neither a panel nor a calibrator file: the file's content (None:
# no file), the message (a regex; {panels}: the config's panels as the message lists them)
BAD_CALIBRATORS = [
    ("missing.json", None, r"`calibrator: missing.json` is neither a panel of this config "
                           r"\({panels}\) nor a file"),
    ("beta.csv", "language,backbone,beta\nEnglish,gpt-4o,1.0\n",
     r"beta.csv: is not a calibrator file: not JSON"),
    ("other.json", '{"format": "something else"}', r"other.json: is not a calibrator file"),
]
# panels each refused at start-up one way (all but fit): an analysis that refits, both links,
# a calibrator of its own, and each bad calibrator
REFUSED = {"fit": FIT, "new": applying(analyses=["cbc", "heldout"]),
           "both": applying(extends="fit"), "selfish": {**FIT, "calibrator": "selfish"},
           **{f"bad_{Path(name).stem}": applying(calibrator=name)
              for name, _, _ in BAD_CALIBRATORS}}


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """A real run (not a dry run) of a config whose every panel but `fit` is refused at
    start-up, one way each: (folder, exit code, snakemake's output)."""
    root = write_data(tmp_path_factory.mktemp("refused"))
    for name, content, _ in BAD_CALIBRATORS:
        if content is not None:
            (root / "data" / name).write_text(content)
    code, text = snakemake(root, "--configfile", write_config(root, REFUSED))
    return root, code, text


@pytest.mark.slow
@pytest.mark.parametrize("calibrator, content, message", BAD_CALIBRATORS)
def test_a_bad_calibrator_stops_the_run_naming_it_with_no_output(tmp_path, refused, calibrator,
                                                                  content, message):
    # alone in a config, it stops the run (common.smk's check raises) naming it
    (tmp_path / "data").mkdir()
    if content is not None:
        (tmp_path / "data" / calibrator).write_text(content)
    config = write_config(tmp_path, {"fit": FIT, "new": applying(calibrator=calibrator)})
    text = start_up_refusal(read_yaml(config), tmp_path / "data")
    assert "panel 'new'" in text and re.search(message.format(panels="fit, new"), text), text
    # and a real run says so and writes nothing
    root, code, text = refused
    listed = ", ".join(sorted(REFUSED))  # as the config file lists them
    line = f"panel 'bad_{Path(calibrator).stem}': .*" + message.format(panels=listed)
    assert code != 0
    assert re.search(line, text), text[-2000:]
    assert not (root / "results").exists()


@pytest.mark.slow
def test_refused_analyses_and_links_are_named_at_start_up(tmp_path, refused):
    lines = ["panel 'new': analysis 'heldout' measures CBC refitted on this panel's own tasks",
             "panel 'both': sets both `calibrator` and `extends`",
             "panel 'selfish': `calibrator` names the panel itself"]
    root, code, text = refused
    assert code != 0
    assert all(line in text for line in lines), text[-2000:]
    assert not (root / "results").exists()
    # each refused alone too, in this process
    (tmp_path / "data").mkdir()
    for name, line in zip(("new", "both", "selfish"), lines):
        config = write_config(tmp_path, {"fit": FIT, name: REFUSED[name]})
        assert line in start_up_refusal(read_yaml(config), tmp_path / "data")


# --- extends ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_an_extension_that_does_not_match_its_base_stops_ingest_naming_what_differs(failed):
    root, code, text = failed
    assert code != 0
    message = rule_message(text, "ingest", "plus")
    assert "cannot extend panel 'fit'" in message
    assert "languages of panel 'fit' without runs in the new table: 'Hindi'" in message
    assert "tasks in the new table that panel 'fit' does not have: '21_" in message
    assert "backbone(s) 'gpt-4o' are already judges of panel 'fit'" in message
    assert not (root / "results/plus/runs.parquet").exists()
    assert not (root / "results/plus/tensor.parquet").exists()


def test_extension_checks_name_every_difference():
    base = devai_subset(slice(0, 3))
    new = devai_subset(slice(0, 3), ["claude-sonnet-4.6"])
    extension.check_extension(base, new, "base", "new.csv")  # the same tasks and languages
    combined = extension.extend_runs(base, new, "base", "new.csv")
    assert len(combined) == len(base) + len(new)
    with pytest.raises(InputError, match=r"languages of panel 'base' without runs in the new "
                                         r"table: 'Hindi'"):
        extension.check_extension(base, new[new["language"] != "Hindi"], "base", "new.csv")
    with pytest.raises(InputError, match=r"'gpt-4o' are already judges of panel 'base'"):
        extension.check_extension(base, devai_subset(slice(0, 3), ["gpt-4o"]), "base", "new.csv")
    assert extension.backbone_order(["b", "a"], ["z2", "z10", "a"]) == ["b", "a", "z2", "z10"]


def test_beta_shift_of_the_base_judges_is_minus_the_new_judges_beta_over_m():
    rng = np.random.default_rng(0)
    values = rng.normal(50, 10, (12, 4, 4))
    panel = Panel(values, tuple(f"t{i}" for i in range(12)), ("l1", "l2", "l3", "l4"),
                  ("a", "b", "c", "new"))
    from polyjudge.cbc.estimator import double_center
    base = panel.subset(backbones=[0, 1, 2])
    beta_base = base.matrix_frame(double_center(base.cell_means()), "beta")
    beta_combined = panel.matrix_frame(double_center(panel.cell_means()), "beta")
    shift, summary = extension.beta_shift(beta_base, beta_combined)
    new = beta_combined[beta_combined["backbone"] == "new"].set_index("language")["beta"]
    assert np.allclose(shift["shift"], -shift["language"].map(new) / 3)
    assert summary["max_abs_shift"] == pytest.approx(new.abs().max() / 3)
    ranks = extension.rank_intervals(panel, ["new"], n_replicates=100, seed=1)
    assert list(ranks.columns) == extension.RANK_COLUMNS and len(ranks) == 16
    assert ranks.groupby("backbone")["rank_cbc"].nunique().eq(1).all()
    assert ((ranks["rank_cbc_low"] <= ranks["rank_cbc"])
            & (ranks["rank_cbc"] <= ranks["rank_cbc_high"])).all()


# --- the README's example, verbatim, in a copy of the repository --------------------------------

def copy_without_venvs(target: Path) -> Path:
    """The repository's files (tracked, and new ones git does not ignore) without any local
    virtualenv folder (``.venv*``, which a checkout used for development may hold untracked)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if not name.startswith(".venv") and (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


@pytest.mark.slow
def test_readme_extends_example_runs_verbatim_and_shows_the_seventh_judge(tmp_path):
    root = copy_without_venvs(tmp_path / "polyjudge")
    command = readme_command("snakemake --cores 2 --configfile config/examples/extend_devai.yaml")
    # this interpreter's snakemake and polyjudge (test_standalone checks the README's install)
    run_as_user(f'PATH="{Path(sys.executable).parent}:$PATH" {command}', root, timeout=600)
    out = root / "results" / "devai_plus"
    table = pd.read_csv(out / "extend" / "new_judge.csv")
    languages = ["English", "Arabic", "Turkish", "Chinese", "Hindi", "Japanese", "Spanish",
                 "Swahili"]
    assert table["backbone"].unique().tolist() == ["synthetic-judge-7"]
    assert table["language"].tolist() == languages
    assert ((table["rank_raw_low"] <= table["rank_raw"])
            & (table["rank_raw"] <= table["rank_raw_high"])).all()
    shift = pd.read_csv(out / "extend" / "beta_shift.csv")
    assert len(shift) == 48 and "synthetic-judge-7" not in set(shift["backbone"])
    summary = json.loads((out / "extend" / "summary.json").read_text())
    # the numbers the guide states (docs/running.md, where the README points)
    readme = " ".join((REPO / "docs" / "running.md").read_text().split())
    assert f"at most {summary['max_abs_shift']:.2f} points" in readme
    low, high = summary["rank_raw_range"]["synthetic-judge-7"]
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}
    assert f"raw {ordinal.get(low, f'{low}th')} to {ordinal.get(high, f'{high}th')}" in readme
    assert f"{ordinal[summary['rank_cbc']['synthetic-judge-7']]} in every language" in readme
    assert (out / "figures" / "new_judge.png").stat().st_size > 1000
    calibrator = json.loads((out / "cbc" / "calibrator.json").read_text())
    assert "synthetic-judge-7" in calibrator["backbones"]
    # its provenance: its own table and the data files of the panel it extends, not the
    # base's intermediate runs.parquet
    files = json.loads((out / "inputs.json").read_text())["files"]
    base = json.loads((root / "results/devai/inputs.json").read_text())["files"]
    assert files == {"runs": {"path": "data/examples/seventh_judge.csv",
                              "sha256": sha256(root / "data/examples/seventh_judge.csv")},
                     **{f"{name} (panel devai)": entry for name, entry in base.items()}}
    assert base["runs"]["path"] == "data/devai_ml_aaaj/run_level_scores.parquet"
