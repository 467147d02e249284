"""A panel's shape decides which analyses run: one judge, one language, too few tasks or a cell
short of repeated runs skip the analyses they rule out (named, with the reason, in the log, the
skipped results and the page) and the run goes on; items missing a score are left out of the
band only when the panel says `incomplete_items: drop`; a user's own panels run no simulation
study unless they list scenarios."""
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from polyjudge import scripting, workflow_config
from polyjudge.data import shape
from polyjudge.data.errors import InputError
from polyjudge.data.panel import Panel
from polyjudge.data.yamlfile import read_yaml

REPO = Path(__file__).resolve().parents[1]
TASKS = [f"t{i}" for i in range(12)]


def reasons_of(n_runs, languages=("en", "bn", "de"), backbones=("j1", "j2", "j3"), tasks=TASKS):
    return shape.analysis_reasons(np.asarray(n_runs), tasks, list(languages), list(backbones))


# --- the pure verdict: known answers ------------------------------------------------------------

def test_one_judge_leaves_only_the_analyses_without_an_interaction():
    reasons = reasons_of(np.full((12, 3, 1), 2), backbones=["j1"])
    runs = {name for name, reason in reasons.items() if reason is None}
    assert runs == {"information", "parse_failures"}
    assert "1 backbone (j1)" in reasons["cbc"] and "3 languages (en, bn, de)" in reasons["cbc"]
    lines = shape.skipped_summary("mt_bench", {a: reasons[a] for a in ("cbc", "information")})
    assert lines == [f"panel 'mt_bench': analysis 'cbc' skipped: {reasons['cbc']}",
                     "panel 'mt_bench': still runs: information, the raw mean score of each "
                     "backbone in each language (results/mt_bench/cell_means.csv)"]


def test_one_language_skips_the_cmi_test_too_and_lolo_needs_three():
    one = reasons_of(np.full((12, 1, 3), 2), languages=["en"])
    assert all(one[name] for name in shape.TWO_WAY) and "1 language (en)" in one["information"]
    two = reasons_of(np.full((12, 2, 3), 2), languages=["en", "bn"])
    assert [name for name, reason in two.items() if reason] == ["lolo"]
    assert "at least 3 languages" in two["lolo"]


def test_a_cell_short_of_one_repeat_is_named_with_its_count():
    n_runs = np.full((12, 3, 3), 2)
    n_runs[3, 1, 2] = 1
    reasons = reasons_of(n_runs)
    assert [name for name, reason in reasons.items() if reason] == ["information", "diagnostics"]
    assert "1 cell(s) have fewer than the others' 2: (t3, bn, j3) with 1" in reasons["diagnostics"]
    single = reasons_of(np.ones((12, 3, 3)))
    assert "one run per cell" in single["information"] and single["cbc"] is None


def test_too_few_tasks():
    reasons = reasons_of(np.full((2, 3, 3), 2), tasks=["a", "b"])
    assert reasons["task_count"] == "needs at least 3 tasks; this panel has 2"
    assert reasons["cbc"] is None
    assert reasons_of(np.full((1, 3, 3), 2), tasks=["a"])["heldout"].endswith("has 1")


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet", ".md"])
def test_a_skipped_result_is_written_in_its_own_format_and_read_as_skipped(tmp_path, suffix):
    assert scripting.SKIPPED == shape.SKIPPED  # the writer's columns are the readers'
    path = tmp_path / f"out{suffix}"
    scripting.write_skipped([path], "bands", "needs at least 2 languages")
    if suffix == ".md":
        assert path.read_text() == "bands skipped: needs at least 2 languages\n"
        return
    read = {".csv": pd.read_csv, ".parquet": pd.read_parquet,
            ".json": lambda p: json.loads(p.read_text())}[suffix](path)
    assert shape.is_skipped(read)
    assert not shape.is_skipped(pd.DataFrame({"analysis": ["x"]}))


# --- items missing a score ----------------------------------------------------------------------

def panel_with_a_hole() -> Panel:
    values = np.random.default_rng(1).uniform(0, 100, (40, 2, 2))
    values[17, 1, 0] = np.nan
    return Panel(values, tuple(f"item{i}" for i in range(40)), ("en", "bn"), ("j1", "j2"))


def test_an_item_missing_a_score_stops_the_band_naming_it_and_the_option():
    with pytest.raises(InputError) as caught:
        shape.complete_items(panel_with_a_hole(), "error", "the simultaneous band", "runs.csv",
                             "alpaca")
    text = str(caught.value)
    assert "1 item(s) miss a score: item17 in (bn, j1)" in text
    assert "`incomplete_items: drop` in panel 'alpaca'" in text


def test_drop_leaves_out_exactly_the_incomplete_items():
    panel = panel_with_a_hole()
    kept, dropped = shape.complete_items(panel, "drop", "the band", "runs.csv", "alpaca")
    assert dropped == ["item17"] and kept.is_complete
    assert kept.tasks == tuple(t for t in panel.tasks if t != "item17")
    np.testing.assert_array_equal(kept.values, np.delete(panel.values, 17, axis=0))
    same, none = shape.complete_items(kept, "error", "the band", "runs.csv", "alpaca")
    assert same is kept and none == []


# --- the simulation study: the reproduction's, not a user's run --------------------------------

def test_own_panels_run_no_simulation_scenario_unless_listed():
    defaults = read_yaml(REPO / "config" / "config.yaml")
    panel = {"kind": "judge_runs", "runs": "my.csv"}
    assert workflow_config.complete({}, defaults)["simulation"]["scenarios"] == \
        defaults["simulation"]["scenarios"]
    own = workflow_config.complete({"panels": {"mine": panel}}, defaults)["simulation"]
    assert own["scenarios"] == {} and own["base"] == defaults["simulation"]["base"]
    asked = {"panels": {"mine": panel}, "simulation": {"scenarios": {"s": {"n_panels": 2}}}}
    assert workflow_config.complete(asked, defaults)["simulation"]["scenarios"] == \
        {"s": {"n_panels": 2}}


@pytest.mark.slow
def test_a_users_run_schedules_no_simulation_job_the_reproduction_does(shapes_run, default_plan):
    """The user's run is the shared one of the four panels below (``shapes_run``), the
    reproduction's plan the shared dry run in the repository (``default_plan``)."""
    result, _, _ = shapes_run
    assert result.returncode == 0, result.stderr[-3000:]
    text = result.stdout + result.stderr
    assert "rule cbc:" in text and "simulation" not in text
    code, default = default_plan
    assert code == 0, default[-3000:]
    assert "rule simulation_scenario:" in default


# --- the workflow: three panels whose shape rules analyses out, and one with a null score -------

def user_runs(rng, languages=("en", "bn", "de"), backbones=("j1", "j2", "j3"),
              frameworks=("f1", "f2"), n_tasks=12) -> pd.DataFrame:
    rows = [(f"t{t}", lang, judge, frame, float(rng.uniform(0, 100)))
            for t, lang, judge, frame in itertools.product(range(n_tasks), languages,
                                                           backbones, frameworks)]
    return pd.DataFrame(rows, columns=["task", "language", "backbone", "framework", "score"])


ANALYSES = ["cbc", "bands", "heldout", "information", "lolo", "diagnostics"]


def shapes_config(data: Path) -> dict:
    rng = np.random.default_rng(7)
    user_runs(rng, backbones=["j1"]).to_csv(data / "one_judge.csv", index=False)
    user_runs(rng, languages=["en"]).to_csv(data / "one_language.csv", index=False)
    short = user_runs(rng)
    short = short.drop(short.index[(short["task"] == "t3") & (short["language"] == "bn")
                                   & (short["backbone"] == "j2") & (short["framework"] == "f2")])
    short.to_csv(data / "missing_repeat.csv", index=False)
    holed = user_runs(rng, frameworks=["f1"], n_tasks=30).drop(columns="framework")
    holed.loc[40, "score"] = np.nan  # one null score among 270, as AlpacaEval's annotations
    holed.to_csv(data / "null_score.csv", index=False)
    panel = {"kind": "judge_runs", "score_range": [0, 100], "analyses": ANALYSES}
    return {"data_dir": str(data), "heldout": {"replicates": 20}, "lolo": {"replicates": 20},
            "bands": {"replicates": 200, "seed": 0, "level": 0.95},
            "information": {"permutations": 20, "shards": 1},
            "panels": {"one_judge": {**panel, "runs": "one_judge.csv"},
                       "one_language": {**panel, "runs": "one_language.csv"},
                       "missing_repeat": {**panel, "runs": "missing_repeat.csv"},
                       "null_score": {**panel, "runs": "null_score.csv", "missing": "omit",
                                      "incomplete_items": "drop",
                                      "analyses": ["cbc", "bands"]}}}


@pytest.fixture(scope="module")
def shapes_run(tmp_path_factory):
    """The four panels run once as a user's own config, the whole default target (snakemake's
    result, folder, config): the one real run of this file but the band's refusal below."""
    from test_workflow import snakemake
    root = tmp_path_factory.mktemp("shapes")
    (root / "data").mkdir()
    config = shapes_config(root / "data")
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return snakemake(root, "--configfile", "config.yaml", check=False), root, config


def strict_json(path: Path):
    def refuse(constant):
        raise ValueError(f"{path}: {constant} is not JSON")
    return json.loads(path.read_text(), parse_constant=refuse)


@pytest.mark.slow
def test_every_panel_runs_to_the_end_naming_what_it_skipped(shapes_run):
    result, root, config = shapes_run
    assert result.returncode == 0, result.stderr[-4000:]
    results = root / "results"
    for path in results.rglob("*.json"):
        strict_json(path)
    expected = {"one_judge": {"cbc", "bands", "heldout", "lolo", "diagnostics"},
                "one_language": set(ANALYSES), "missing_repeat": {"information", "diagnostics"},
                "null_score": set()}
    for name, skipped in expected.items():
        verdict = strict_json(results / name / "shape.json")["analyses"]
        assert {a for a in config["panels"][name]["analyses"] if verdict[a]} == skipped
        log = (results / name / "logs" / "ingest.log").read_text()
        for analysis in skipped:
            # the panel, the run table it was read from, the analysis and why
            assert re.search(rf"panel '{name}' \(\S+\.csv\): analysis '{analysis}' "
                             r"skipped: ", log), log
        if skipped:
            assert f"panel '{name}': still runs: " in log
    assert "(t3, bn, j2) with 1" in (results / "missing_repeat" / "logs" / "cmi.log").read_text()
    assert "1 backbone (j1)" in (results / "one_judge" / "logs" / "cbc.log").read_text()
    beta = pd.read_csv(results / "one_judge" / "cbc" / "beta.csv")
    assert shape.is_skipped(beta) and "1 backbone (j1)" in beta["skipped"][0]
    assert not shape.is_skipped(pd.read_csv(results / "missing_repeat" / "cbc" / "beta.csv"))
    assert strict_json(results / "one_judge" / "information" / "cmi.json")["n_strata"] > 0
    assert "one_judge (6 analyses, 5 skipped: cbc, bands, heldout, lolo, diagnostics" \
        in result.stderr


@pytest.mark.slow
def test_the_page_names_what_was_skipped(shapes_run):
    from polyjudge.report.page.build import page_data
    _, root, config = shapes_run
    data = page_data(root / "results", list(config["panels"]))
    panels = {p["name"]: p for p in data["panels"]}
    lines = {name: dict(p["sections"][0]["facts"]["items"]) for name, p in panels.items()
             if p["sections"][0]["id"] == "skipped"}
    assert set(lines["missing_repeat"]) == {"information", "diagnostics"}
    assert "(t3, bn, j2) with 1" in lines["missing_repeat"]["information"]
    assert set(lines["one_language"]) == set(ANALYSES)
    assert "beta" in [s["id"] for s in panels["missing_repeat"]["sections"]]
    assert lines["null_score"] == {"bands": "left out 1 item(s) with a missing score "
                                            "(incomplete_items: drop): t4"}
    html = (root / "results" / "index.html").read_text()
    assert "Analyses not run on this panel" in html


@pytest.mark.slow
def test_a_null_score_is_left_out_of_the_band_only_when_asked(shapes_run):
    from test_workflow import snakemake
    _, root, config = shapes_run
    results = root / "results" / "null_score"
    assert strict_json(results / "cbc" / "bands.json")["dropped_items"] == ["t4"]
    log = (results / "logs" / "bands.log").read_text()
    assert "left out 1 item(s) with a missing score (incomplete_items: drop): t4" in log
    # the option off (its default): the band stops, naming the item, its cell and the option
    config["panels"] = {"null_off": {**config["panels"]["null_score"], "incomplete_items":
                                     "error"}}
    (root / "off.yaml").write_text(yaml.safe_dump(config))
    off = snakemake(root, "results/null_off/cbc/bands.json", "--configfile", "off.yaml",
                    check=False)
    assert off.returncode != 0
    text = (root / "results" / "null_off" / "logs" / "bands.log").read_text()
    assert "1 item(s) miss a score: t4 in (bn, j2)" in text, text
    assert "`incomplete_items: drop` in panel 'null_off'" in text
