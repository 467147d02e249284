"""The results page without a browser: the leaderboard it shows, the self-contained file, the
differences ``polyjudge compare`` finds, the colours. The browser checks are in
tests/test_page_browser.py; both use the ``page_runs`` fixture (tests/conftest.py)."""
from __future__ import annotations

import itertools
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from polyjudge import cli
from polyjudge.analyses.leaderboard import leaderboard
from polyjudge.report.page.verdict import first_sentence, verdict, who_wins_where
from polyjudge.cbc.bootstrap import task_bootstrap
from polyjudge.data import io
from polyjudge.data.panel import Panel
from polyjudge.report.page.results_folder import Results
from polyjudge.report.page import charts
from polyjudge.report.page.sections import panel_data
from polyjudge.report.page.diff import run_diff
from polyjudge.report.palette import OKABE_ITO
from page_results import MARKUP, SCRIPT, SNAPSHOT, unusable_condition


# --- the leaderboard (cbc/leaderboard.csv) -----------------------------------------------------
def loop_leaderboard(values, n_replicates, seed, level=0.95):
    """The leaderboard's bootstrap written as a plain loop over replicates (same task draws)."""
    counts = task_bootstrap(values.shape[0], n_replicates, np.random.default_rng(seed)).counts
    raw, cbc = [], []
    for row in counts:
        means = np.nanmean(values[np.repeat(np.arange(len(row)), row)], axis=0)
        beta = means - means.mean(1, keepdims=True) - means.mean(0) + means.mean()
        raw.append(means)
        cbc.append(means - beta)
    out = {}
    for name, draws in (("raw", np.array(raw)), ("cbc", np.array(cbc))):
        ranks = scipy.stats.rankdata(-draws, method="min", axis=-1)
        out[f"mean_{name}_low"] = np.percentile(draws, 100 * (1 - level) / 2, axis=0).ravel()
        out[f"mean_{name}_high"] = np.percentile(draws, 100 * (1 + level) / 2, axis=0).ravel()
        out[f"rank_{name}_low"] = np.quantile(ranks, (1 - level) / 2, axis=0,
                                              method="lower").ravel()
        out[f"rank_{name}_high"] = np.quantile(ranks, (1 + level) / 2, axis=0,
                                               method="higher").ravel()
    return out


def test_leaderboard_equals_the_rankings_and_a_loop_over_replicates():
    panel = io.read_panel(SNAPSHOT / "devai" / "tensor.parquet")
    frame = leaderboard(panel, n_replicates=120, seed=4)
    rankings = pd.read_csv(SNAPSHOT / "devai" / "cbc" / "rankings.csv")
    pd.testing.assert_frame_equal(frame[rankings.columns], rankings, check_exact=False,
                                  rtol=1e-12)
    for key, expected in loop_leaderboard(panel.values, 120, 4).items():
        np.testing.assert_allclose(frame[key], expected, rtol=1e-10, err_msg=key)
    assert (frame["mean_cbc_low"] <= frame["mean_cbc"]).all()
    assert (frame["rank_cbc_low"] <= frame["rank_cbc"]).all()
    assert (frame["rank_cbc"] <= frame["rank_cbc_high"]).all()


def test_leaderboard_on_an_incomplete_panel_uses_the_available_means():
    rng = np.random.default_rng(1)
    values = rng.normal(50, 10, (30, 3, 4))
    values[rng.random(values.shape) < 0.1] = np.nan
    panel = Panel(values, tuple(map(str, range(30))), ("a", "b", "c"), ("w", "x", "y", "z"))
    frame = leaderboard(panel, "available_means", n_replicates=100, seed=2)
    for key, expected in loop_leaderboard(values, 100, 2).items():
        np.testing.assert_allclose(frame[key], expected, rtol=1e-10, err_msg=key)


@pytest.mark.parametrize("name, pairs, separated", [
    ("devai", 120, 112), ("mrewardbench", 70, 65), ("synthetic", 120, 102)])
def test_groups_agree_with_rank_intervals_and_with_paired_tests(name, pairs, separated):
    """On every default panel with tasks enough to resample (devai_raw has 2 tasks: its
    bootstrap is degenerate), the group is the rank interval's best rank, and the pairs whose
    rank intervals do not overlap are those a paired t-test on the same tasks separates (all of
    them on devai and M-RewardBench; 117 of 120 on the synthetic panel)."""
    board = pd.read_csv(SNAPSHOT / name / "cbc" / "leaderboard.csv")
    for kind in ("raw", "cbc"):
        assert (board[f"rank_ub_{kind}"] == board[f"rank_{kind}_low"]).all()
    panel = io.read_panel(SNAPSHOT / name / "tensor.parquet")
    disjoint = tested = agree = 0
    for k, language in enumerate(panel.languages):
        rows = board[board["language"] == language].set_index("backbone")
        for a, b in itertools.combinations(range(len(panel.backbones)), 2):
            one, two = rows.loc[panel.backbones[a]], rows.loc[panel.backbones[b]]
            apart = (one["rank_raw_high"] < two["rank_raw_low"]
                     or two["rank_raw_high"] < one["rank_raw_low"])
            d = panel.values[:, k, a] - panel.values[:, k, b]
            d = d[~np.isnan(d)]
            significant = bool(d.std() > 0 and scipy.stats.ttest_1samp(d, 0).pvalue < 0.05)
            disjoint, tested = disjoint + apart, tested + significant
            agree += apart == significant
    assert (disjoint, agree) == (separated, pairs if name != "synthetic" else 117)
    assert abs(tested - disjoint) <= 3


def test_the_verdict_is_computed_from_the_panel_s_outputs():
    res = Results(SNAPSHOT)
    sentences = verdict(res, "devai")
    board = pd.read_csv(SNAPSHOT / "devai" / "cbc" / "leaderboard.csv")
    (top,) = set(board.loc[board["rank_ub_cbc"] == 1, "backbone"])
    summary = json.loads((SNAPSHOT / "devai" / "reversal" / "summary.json").read_text())
    tau = pd.read_csv(SNAPSHOT / "devai" / "heldout" / "tau.csv").set_index("method")
    # "first" is the highest mean; on DevAI's pass rates (no reference) the most lenient judge
    assert sentences[0] == (f"After CBC, {top} has the highest mean score in all 8 languages: "
                            "the most lenient judge.")
    assert (f"{summary['n_reversed']} of {summary['n_pairs']} backbone pairs reverse"
            in sentences[1]) and (f"{summary['n_significant']} of them significantly"
                                  in sentences[1])
    assert f"{tau.loc['Raw', 'mean']:.2f}" in sentences[3] and \
        f"{tau.loc['CBC', 'mean']:.2f}" in sentences[3]
    # a top set of two, and tops that differ by language
    board = pd.DataFrame({"language": ["en", "en", "en", "de", "de", "de"],
                          "backbone": ["a", "b", "c"] * 2, "rank_cbc": [2, 1, 3, 1, 2, 3],
                          "rank_ub_cbc": [1, 1, 3, 1, 2, 3]})
    assert first_sentence(board) == ("After CBC, the highest mean score: b and a, not told "
                                     "apart, in en; a in de.")
    assert first_sentence(board[board["language"] == "en"], "the highest accuracy",
                          "the most accurate judge") == (
        "After CBC, b and a cannot be told apart at the top in en (the highest accuracy: the "
        "most accurate judge).")
    # who wins where: one row per language, the top sets with their rank intervals
    shown = who_wins_where(res, "devai")
    rows = [dict(zip(shown["keys"], r)) for r in shown["data"]]
    languages = list(pd.unique(pd.read_csv(SNAPSHOT / "devai/cbc/leaderboard.csv")["language"]))
    assert [r["language"] for r in rows] == languages
    assert all(r["cbc_top"] == f"{top} [1, 1]" for r in rows)


def test_a_condition_without_usable_judgments_gets_a_banner_and_no_empty_points(tmp_path):
    # the local judge example's shape: every zh verdict unparseable
    section = next(s for s in panel_data(Results(unusable_condition(tmp_path)), "ls")["sections"]
                   if s["id"] == "judge_ls")
    assert "No usable judgment for judge_a x zh, judge_b x zh" in section["warning"]
    for chart in section["charts"]:
        values = chart["spec"]["data"]["values"]
        assert values and all(v.get("condition", v.get("target")) != "zh" for v in values)
    flips = dict(zip(section["tables"][1]["keys"], zip(*section["tables"][1]["data"])))
    untested = [p for n, p in zip(flips["n_pairs"], flips["mcnemar_p"]) if n == 0]
    assert untested and all(p is None for p in untested)  # shown empty, not p = 1


@pytest.mark.parametrize("name", ["llmbar", "judge_ls_synthetic"])
def test_judge_ls_charts_name_their_axes_as_the_tables_do_and_fill_the_row(name):
    """Each small multiple's y axis and tooltip carry its table column's label ("accuracy"),
    not the file's field (``strict_accuracy``); LLMBar's six judges fill the page's row (three
    columns of two), not half of it, while three conditions a judge stay narrow."""
    section = next(s for s in panel_data(Results(SNAPSHOT), name)["sections"]
                   if s["id"] == "judge_ls")
    assert len(section["tables"]) == len(section["charts"]) == 3
    for tab, chart in zip(section["tables"], section["charts"]):
        labels = {c["key"]: c["label"] for c in tab["columns"]}
        spec = chart["spec"]
        one = spec["concat"][0]
        point = one["layer"][1]["encoding"]
        y = point["y"]["field"]
        titles = {layer["encoding"]["y"]["title"] for layer in one["layer"]}
        assert titles == {labels[y]} and labels[y] != y, (chart["id"], titles)
        tooltip = {t["field"]: t.get("title") for t in point["tooltip"]}
        assert tooltip[y] == labels[y]
        row = spec["columns"] * (one["width"] + charts.FACET_MARGIN)
        if name == "llmbar":
            assert spec["columns"] == 3 and 0.9 * charts.PAGE_WIDTH <= row <= charts.PAGE_WIDTH
        else:  # two or three conditions a judge: STEP pixels each, not stretched
            values = pd.DataFrame(spec["data"]["values"])
            widest = values.groupby("judge")[one["encoding"]["x"]["field"]].nunique().max()
            assert widest <= 3 and one["width"] == widest * charts.STEP


def test_leaderboard_refuses_too_few_replicates():
    panel = io.read_panel(SNAPSHOT / "devai" / "tensor.parquet")
    with pytest.raises(ValueError, match="at least 100 replicates"):
        leaderboard(panel, n_replicates=10)


# --- the file ----------------------------------------------------------------------------------
def page_json(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def test_the_page_is_one_file_with_nothing_to_fetch_and_labels_as_data(page_runs):
    html = page_runs["page"].read_text(encoding="utf-8")
    assert len(html.encode()) < 1_500_000
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.I)
    assert not re.search(r"<script[^>]*\bsrc=", html) and not re.search(r"<link\b", html)
    assert html.count("<script") == 3
    assert "default-src 'none'" in html  # the page's CSP forbids any load
    # markup labels are in the page only as escaped JSON data
    assert MARKUP not in html and SCRIPT not in html
    data = page_json(html)
    labels = next(p for p in data["panels"] if p["name"] == "labels")
    assert MARKUP in labels["filters"]["language"]["values"]
    assert SCRIPT in labels["filters"]["backbone"]["values"]
    assert [p["name"] for p in data["panels"]] == ["devai", "judge_ls_synthetic", "labels"]


def test_charts_use_colour_blind_safe_colours(page_runs):
    data = page_json(page_runs["page"].read_text(encoding="utf-8"))
    assert data["chart_config"]["range"]["category"] == list(OKABE_ITO)
    text = json.dumps([c for p in data["panels"] for s in p["sections"] for c in s["charts"]])
    colours = set(re.findall(r'"(#[0-9A-Fa-f]{6})"', text))
    assert colours <= set(OKABE_ITO)
    assert set(re.findall(r'"scheme": "(\w+)"', text)) == {"blueorange"}


@pytest.mark.parametrize("scale, label, tip", [
    (0.34, ".2f", ".4f"),    # M-RewardBench margins: |beta| <= 0.34 read 0.34, not 0.3
    (0.034, ".3f", ".5f"), (20.6, ".1f", ".3f"), (2060.0, ".1f", ".3f"), (0.0, ".1f", ".3f")])
def test_heatmap_labels_have_the_decimals_the_panel_s_magnitude_needs(scale, label, tip):
    """The largest |beta| shows 2 significant digits (at least one decimal), the tooltip two
    decimals more, for the beta and its band."""
    from polyjudge.report.page.charts import heatmap
    values = scale * np.array([1.0, -0.5, 0.2, -0.02, 0.6, -1.0])
    beta = pd.DataFrame({"language": ["en", "en", "en", "de", "de", "de"],
                         "backbone": ["a", "b", "c"] * 2, "beta": values,
                         "band_low": values - 0.1, "band_high": values + 0.1})
    layers = heatmap("p.heatmap", beta)["spec"]["layer"]
    assert layers[1]["encoding"]["text"]["format"] == label
    formats = {t["field"]: t.get("format") for t in layers[0]["encoding"]["tooltip"]}
    assert formats == {"language": None, "backbone": None, "beta": tip, "band_low": tip,
                       "band_high": tip}
    largest = f"{scale:{label}}"  # two significant digits (or more, for a large beta)
    assert scale == 0 or len(largest.replace(".", "").lstrip("0")) >= 2


def test_provenance_lists_every_file_of_a_many_file_source(tmp_path):
    from polyjudge.report.page.sections import provenance
    files = [{"path": f"data/judges/gpt/{lang}.jsonl", "sha256": c * 64}
             for lang, c in (("de", "a"), ("en", "b"))]
    for name, runs in (("tree", files), ("one", {"path": "data/one.csv", "sha256": "c" * 64})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "inputs.json").write_text(json.dumps({"files": {"runs": runs}}))
    table = provenance(Results(tmp_path), ["tree", "one"], "0", None)["inputs"]
    assert [row[:3] for row in table["data"]] == [
        ["tree", "runs", "data/judges/gpt/de.jsonl"], ["tree", "runs", "data/judges/gpt/en.jsonl"],
        ["one", "runs", "data/one.csv"]]
    assert table["source"] == "tree/inputs.json, one/inputs.json"


def test_provenance_reads_the_verdict_panels_list_and_names_a_simulated_panels_seed(tmp_path):
    """A verdict panel's inputs are in judge_ls/inputs.json; a simulated panel has no input
    file, its row says which rule made it with which seed; the source line names the files
    read, with no unformatted placeholder."""
    from polyjudge.report.page.sections import provenance
    manifests = {
        "llmbar/judge_ls/inputs.json": {"files": {"verdicts": {"path": "data/v.parquet",
                                                               "sha256": "d" * 64}}},
        "sim/judge_ls/inputs.json": {"files": {}, "simulated": {"rule": "simulate_judge_ls",
                                                                "seed": 5}},
        "synthetic/inputs.json": {"files": {}, "simulated": {"rule": "simulate_panel",
                                                             "seed": 11}}}
    for relative, manifest in manifests.items():
        (tmp_path / relative).parent.mkdir(parents=True)
        (tmp_path / relative).write_text(json.dumps(manifest))
    table = provenance(Results(tmp_path), ["llmbar", "sim", "synthetic"], "0", None)["inputs"]
    assert table["data"] == [
        ["llmbar", "verdicts", "data/v.parquet", "d" * 64],
        ["sim", "none: simulated by rule simulate_judge_ls with seed 5", None, None],
        ["synthetic", "none: simulated by rule simulate_panel with seed 11", None, None]]
    assert table["source"] == ", ".join(manifests)
    shown = [table["title"], table["source"], table["note"],
             *(c["label"] for c in table["columns"])]
    assert not any("{" in text for text in shown)


# --- polyjudge compare --------------------------------------------------------------------------
def test_compare_reports_exactly_the_planted_change(page_runs):
    assert page_runs["exit"] == 0
    assert "1 beta cell(s) shifted, 0 rank(s) changed, 1 claim status(es) changed" in \
        page_runs["message"]
    data = page_json(page_runs["diff"].read_text(encoding="utf-8"))
    assert data["diff"]["highlights"] == {
        "devai.beta": [{"match": dict(zip(("language", "backbone"), page_runs["cell"])),
                        "columns": ["beta"], "before": {"beta": pytest.approx(
                            pd.read_csv(page_runs["a"] / "devai/cbc/beta.csv").set_index(
                                ["language", "backbone"]).loc[page_runs["cell"], "beta"])}}],
        "claims": [{"match": {"id": page_runs["claim"]}, "columns": ["status"],
                    "before": {"status": "reproduced"}}]}


def test_compare_ignores_differences_within_the_snapshot_tolerance_and_sees_rank_changes(
        page_runs, tmp_path):
    run_c = shutil.copytree(page_runs["a"], tmp_path / "c")
    beta = pd.read_csv(run_c / "devai/cbc/beta.csv")
    beta["beta"] *= 1 + 1e-12
    beta.to_csv(run_c / "devai/cbc/beta.csv", index=False)
    board = pd.read_csv(run_c / "devai/cbc/leaderboard.csv")
    board.loc[0, "rank_cbc"] += 1
    board.to_csv(run_c / "devai/cbc/leaderboard.csv", index=False)
    diff = run_diff(Results(page_runs["a"]), Results(run_c), ["devai", "labels"])
    assert diff["counts"] == {"beta": 0, "ranks": 1, "claims": 0}
    assert diff["highlights"]["devai.leaderboard"][0]["columns"] == ["rank_cbc"]


def test_compare_reads_only_the_panels_of_the_run_s_config(page_runs, tmp_path):
    # a folder a user's own config left behind (cbc outputs of a panel not in this config)
    run_c = shutil.copytree(page_runs["a"], tmp_path / "c")
    shutil.copytree(run_c / "devai", run_c / "my_panel")
    current = Results(page_runs["a"]).panels()
    assert "my_panel" in Results(run_c).panels()  # without panels.json: every panel folder
    (run_c / "panels.json").write_text(json.dumps({"panels": current, "config_sha256": "x"}))
    assert Results(run_c).panels() == current
    code = cli.main(["compare", str(page_runs["a"]), str(run_c), "-o", str(tmp_path / "d.html")])
    data = page_json((tmp_path / "d.html").read_text(encoding="utf-8"))
    assert code == 0 and [p["name"] for p in data["panels"]] == current
    assert "only one run" not in data["diff"]["tolerance"]


def test_compare_on_a_folder_without_results_says_so(tmp_path, capsys):
    code = cli.main(["compare", str(tmp_path), str(tmp_path), "-o", str(tmp_path / "d.html")])
    assert code == 2
    assert "no panel outputs found" in capsys.readouterr().err
    assert not (tmp_path / "d.html").exists()


def test_compare_of_runs_without_a_common_panel_names_both_folders_and_their_panels(
        page_runs, tmp_path, capsys):
    """Two runs of different configs: a message naming each folder's panels and exit code 2,
    not pandas' "No objects to concatenate", and no page."""
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(page_runs["a"] / "devai", run_a / "devai")
    shutil.copytree(page_runs["a"] / "labels", run_b / "labels")
    code = cli.main(["compare", str(run_a), str(run_b), "-o", str(tmp_path / "d.html")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "concatenate" not in err
    assert (f"{run_a} and {run_b} have no panel in common, so there is nothing to compare: "
            f"{run_a} has panel devai, {run_b} has panel labels") in err
    assert not (tmp_path / "d.html").exists()
