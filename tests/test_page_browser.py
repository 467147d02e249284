"""The results page in a real browser: headless Chromium opens it from disk (file://) with every
http(s) request aborted and counted.

Checked: no network request and no page error; every chart renders a non-empty SVG; sorting and
filtering a table shows the rows pandas gives for the same query, and its CSV download holds
them; a deep link restores the view; every number shown equals its result file (tables, facts,
a heatmap cell's per-task detail); labels that are markup show as text and nothing runs; non-Latin
labels render; the compare page outlines exactly a planted beta shift and claim status change.
Needs the system Chromium (``apt-get install -y chromium fonts-noto-core fonts-noto-cjk``) and
``playwright``; skipped, with that hint, where either is missing (tests/page_browser.py). The
default reproduction's own page is checked in tests/test_page_browser_default_run.py.
"""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from page_browser import Opened, browser  # noqa: F401 (browser: a fixture)
from page_results import BACKBONES, LANGUAGES, MARKUP


@pytest.fixture(scope="module")
def results(page_runs):
    return page_runs["a"]


@pytest.fixture(scope="module")
def opened(browser, results):
    page = Opened(browser, results / "index.html")
    yield page
    page.close()


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def assert_shown(text: str, value, where: str):
    """``text`` is how the page shows ``value`` of a result file (rounded as it prints it)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        assert text in ("\u2014", ""), where
    elif isinstance(value, (bool, str)) or text in ("yes", "no"):
        expected = {"True": "yes", "False": "no", True: "yes", False: "no"}.get(value, str(value))
        assert text == expected, f"{where}: shows {text!r}, file has {value!r}"
    elif "e" in text:  # small p-values: 3 significant digits
        assert math.isclose(float(text), float(value), rel_tol=5.01e-3), where
    else:
        tolerance = 0.5 * 10 ** -decimals(text) + 1e-9
        assert abs(float(text) - float(value)) <= tolerance, \
            f"{where}: shows {text}, file has {value!r}"


def read(results, source):
    """A table's source: a CSV file, or ``a.csv and b.csv`` (b's columns joined on a's rows)."""
    first, _, second = source.partition(" and ")
    frame = pd.read_csv(results / first, keep_default_na=False, na_values=[""])
    if second:
        other = pd.read_csv(results / Path(first).parent / second)
        frame = frame.merge(other.drop(columns=[c for c in other if c in frame and c not in
                                                ("language", "backbone")]),
                            on=["language", "backbone"], how="left")
    return frame


def check_table(opened, results, table_id, source):
    """Every cell of the (unsorted, unfiltered) table equals row i of its CSV file(s); the
    table names its file(s) as the page does."""
    assert opened.page.get_attribute(f"table[data-table='{table_id}']", "data-source") == source
    frame = read(results, source)
    shown = opened.visible(table_id)
    assert len(shown) == len(frame), table_id
    if table_id.endswith(".leaderboard"):  # shown by rank within each language: match by cell
        keys = [(r["language"], r["backbone"]) for r in shown]
        frame = frame.set_index(["language", "backbone"]).loc[keys].reset_index()
    intervals = opened.page.evaluate("""id => Object.fromEntries(
        [...document.querySelectorAll(`table[data-table="${id}"] thead th`)].map(
            th => [th.dataset.key, th.textContent]))""", table_id)
    assert intervals
    columns = {c["key"]: c for c in table_columns(opened, table_id)}
    checked = 0
    for i, row in enumerate(shown):
        for key, text in row.items():
            column = columns[key]
            if column["type"] == "interval":
                low, high = re.fullmatch(r"\[(.+), (.+)\]", text).groups()
                assert_shown(low, frame[column["low"]].iloc[i], f"{table_id}[{i}].{key} low")
                assert_shown(high, frame[column["high"]].iloc[i], f"{table_id}[{i}].{key} high")
            elif key in frame.columns:
                assert_shown(text, frame[key].iloc[i], f"{table_id}[{i}].{key}")
            else:
                continue
            checked += 1
    assert checked >= len(frame)
    return checked


def table_columns(opened, table_id):
    return opened.page.evaluate("""id => {
        const data = JSON.parse(document.getElementById('page-data').textContent);
        const all = data.panels.flatMap(p => p.sections.flatMap(s => s.tables))
            .concat([data.claims]);
        return all.find(t => t.id === id).columns;
    }""", table_id)


def test_opens_offline_with_no_request_and_no_error(opened):
    assert opened.requests == []
    assert opened.errors == []
    assert opened.dialogs == []
    sections = opened.page.eval_on_selector_all("[data-section]",
                                                "s => s.map(x => x.dataset.section)")
    assert sections == ["leaderboard", "beta", "heldout", "decisions", "reversal", "cmi",
                        "claims", "provenance"]


def test_every_chart_of_every_panel_renders(opened):
    seen = {}
    for panel in ("devai", "judge_ls_synthetic", "labels"):
        opened.panel(panel)
        for chart, marks in opened.page.eval_on_selector_all(
                ".chart", "cs => cs.map(c => [c.dataset.chart, "
                "c.querySelectorAll('svg path, svg text, svg line').length])"):
            seen[chart] = marks
    assert set(seen) >= {"devai.slopegraph", "devai.heatmap", "devai.tau_chart",
                         "judge_ls_synthetic.accuracy_chart", "judge_ls_synthetic.flips_chart",
                         "judge_ls_synthetic.position_chart", "labels.heatmap"}
    assert all(marks > 10 for marks in seen.values()), seen
    assert opened.requests == [] and opened.errors == []
    opened.panel("devai")


def test_every_number_shown_equals_its_result_file(opened, results):
    opened.panel("devai")
    checked = 0
    for table_id, source in [("devai.leaderboard", "devai/cbc/leaderboard.csv"),
                             ("devai.beta", "devai/cbc/beta.csv and bands.csv"),
                             ("devai.tau", "devai/heldout/tau.csv"),
                             ("devai.paired", "devai/heldout/paired.csv"),
                             ("devai.pairs", "devai/reversal/pairs.csv"),
                             ("claims", "claims.csv")]:
        checked += check_table(opened, results, table_id, source)
    # JSON results: decisions (pooled rows) and CMI
    decisions = pd.read_json(results / "devai/heldout/decisions.json", typ="series")["methods"]
    for row in opened.visible("devai.decisions"):
        overall = decisions[row["method"]]["overall"]
        assert_shown(row["accuracy"], overall["accuracy"], "decisions")
        assert_shown(row["n_correct"], overall["n_correct"], "decisions")
        assert_shown(row["regret_mean"], overall["regret_mean"], "decisions")
    cmi = pd.read_json(results / "devai/information/cmi.json", typ="series")
    for row in opened.visible("devai.cmi"):
        assert_shown(row["debiased"], cmi[row["convention"]]["debiased"], "cmi")
        assert_shown(row["p_value"], cmi[row["convention"]]["p_value"], "cmi")
    opened.panel("judge_ls_synthetic")
    for name in ("accuracy", "flips", "position"):
        checked += check_table(opened, results, f"judge_ls_synthetic.{name}",
                               f"judge_ls_synthetic/judge_ls/{name}.csv")
    assert checked > 2000
    opened.panel("devai")


def test_sort_and_filter_match_pandas_and_the_csv_download(opened, results):
    opened.panel("devai")
    opened.page.select_option("select[data-filter='language']", "Hindi")
    header = "table[data-table='devai.leaderboard'] th[data-key='mean_cbc'] button"
    opened.page.click(header)
    opened.page.click(header)  # second click: descending
    shown = opened.visible("devai.leaderboard")
    frame = pd.read_csv(results / "devai/cbc/leaderboard.csv")
    expected = frame.query("language == 'Hindi'").sort_values("mean_cbc", ascending=False)
    assert [r["backbone"] for r in shown] == expected["backbone"].tolist()
    assert all(r["language"] == "Hindi" for r in shown)
    # a pooled table says the language filter does not apply and keeps every row
    assert len(opened.visible("devai.tau")) == len(pd.read_csv(results / "devai/heldout/tau.csv"))
    scope = opened.page.text_content("#table-devai\\.tau .scope")
    assert "pooled" in scope and "does not apply" in scope
    with opened.page.expect_download() as download:
        opened.page.click("#table-devai\\.leaderboard button.download-csv")
    text = open(download.value.path(), encoding="utf-8").read()
    downloaded = pd.read_csv(io.StringIO(text))
    pd.testing.assert_frame_equal(downloaded.reset_index(drop=True),
                                  expected[downloaded.columns].reset_index(drop=True))
    assert set(downloaded.columns) == set(frame.columns)
    # the claims table filters by status and by panel
    opened.page.select_option("select[data-filter='status']", "not computed")
    claims = pd.read_csv(results / "claims.csv", keep_default_na=False)
    assert [r["id"] for r in opened.visible("claims")] == \
        claims.loc[claims["status"] == "not computed", "id"].tolist()
    opened.page.select_option("select[data-filter='status']", "")
    opened.page.select_option("select[data-filter='cpanel']", "mrewardbench")
    assert [r["id"] for r in opened.visible("claims")] == \
        claims.loc[claims["output"].str.startswith("results/mrewardbench/"), "id"].tolist()
    assert "cpanel=mrewardbench" in opened.page.url and "language=Hindi" in opened.page.url
    opened.page.select_option("select[data-filter='cpanel']", "")
    opened.page.select_option("select[data-filter='language']", "")


def test_a_deep_link_restores_the_view(browser, results):
    fragment = ("#panel=devai&language=Spanish&sort.devai.beta=beta:asc"
                "&cell_language=Spanish&cell_backbone=gpt-4o")
    linked = Opened(browser, results / "index.html", fragment)
    try:
        assert linked.page.input_value("select[data-filter='language']") == "Spanish"
        shown = linked.visible("devai.beta")
        bands = pd.read_csv(results / "devai/cbc/bands.csv").query("language == 'Spanish'")
        assert [r["backbone"] for r in shown] == \
            bands.sort_values("beta")["backbone"].tolist()
        assert "Spanish" in linked.page.text_content("#cell-detail h3.cell-title")
        # the click detail: raw and calibrated scores over tasks from the two tensors
        detail = linked.visible("devai.cell")
        raw = pd.read_parquet(results / "devai/tensor.parquet").query(
            "language == 'Spanish' and backbone == 'gpt-4o'")
        cal = pd.read_parquet(results / "devai/cbc/calibrated_tensor.parquet").query(
            "language == 'Spanish' and backbone == 'gpt-4o'")
        assert [r["task"] for r in detail] == raw["task"].astype(str).tolist()
        for row, a, b in zip(detail, raw["score"], cal["score"]):
            assert_shown(row["raw"], a, "detail raw")
            assert_shown(row["cbc"], b, "detail calibrated")
        assert linked.requests == [] and linked.errors == []
    finally:
        linked.close()


def test_clicking_a_heatmap_cell_shows_its_detail_and_the_band_tooltip(opened):
    opened.panel("devai")
    cells = opened.page.locator("[data-chart='devai.heatmap'] svg path[aria-roledescription]")
    if not cells.count():
        cells = opened.page.locator("[data-chart='devai.heatmap'] svg g.mark-rect path")
    assert cells.count() == 48
    cells.nth(0).hover()
    tip = opened.page.text_content("#tooltip")
    assert "band low" in tip and "band high" in tip and "English" in tip
    cells.nth(0).click()
    opened.page.wait_for_selector("table[data-table='devai.cell']")
    assert "English" in opened.page.text_content("#cell-detail h3.cell-title")
    assert "cell_language=English" in opened.page.url
    # the click answers: the tooltip is gone, and the cell's title is written once
    assert not opened.page.is_visible("#tooltip")
    titles = opened.page.eval_on_selector_all("#cell-detail h3",
                                              "hs => hs.map(h => h.textContent)")
    assert len(titles) == len(set(titles)) and sum("English" in t for t in titles) == 1


def test_markup_labels_show_as_text_and_non_latin_labels_render(opened):
    opened.panel("labels")
    page = opened.page
    assert page.evaluate("window.__xss") is None and opened.dialogs == []
    assert page.evaluate("document.querySelectorAll('img, main b, main script').length") == 0
    assert page.evaluate("document.scripts.length") == 3  # data, Vega, the page's own
    cells = [r["language"] for r in opened.visible("labels.leaderboard")]
    assert set(cells) == set(LANGUAGES)
    assert {r["backbone"] for r in opened.visible("labels.leaderboard")} == set(BACKBONES)
    texts = page.eval_on_selector_all("[data-chart='labels.heatmap'] svg text",
                                      "ts => ts.map(t => [t.textContent, t.getBBox().width])")
    shown = dict(texts)
    for label in LANGUAGES + BACKBONES:
        assert shown.get(label, 0) > 0, (label, texts[:20])
    assert page.evaluate("document.fonts.check('12px \"Noto Sans CJK SC\"', '中文ジャッジ')")
    assert MARKUP in page.text_content("select[data-filter='language']")
    assert opened.errors == []


def test_compare_outlines_exactly_the_planted_change(browser, page_runs):
    (language, backbone), claim = page_runs["cell"], page_runs["claim"]
    diff = Opened(browser, page_runs["diff"], "#panel=devai")
    try:
        marked = diff.page.eval_on_selector_all("td.changed", """tds => tds.map(td => [
            td.closest('table').dataset.table, td.dataset.key, td.parentElement.textContent])""")
        assert len(marked) == 2, marked
        (beta_table, beta_key, beta_row), (claims_table, claims_key, claims_row) = marked
        assert (beta_table, beta_key) == ("devai.beta", "beta")
        assert language in beta_row and backbone in beta_row
        assert (claims_table, claims_key) == ("claims", "status") and claim in claims_row
        outlined = diff.page.eval_on_selector_all(
            "[data-chart='devai.heatmap'] svg path[stroke-width='3']", "ps => ps.length")
        assert outlined == 1
        rows = {t: diff.visible(t) for t in ("diff.beta", "diff.ranks", "diff.claims")}
        assert [(r["language"], r["backbone"]) for r in rows["diff.beta"]] == [
            (language, backbone)]
        assert_shown(rows["diff.beta"][0]["shift"], 0.5, "shift")
        assert rows["diff.ranks"] == [] and [r["id"] for r in rows["diff.claims"]] == [claim]
        # run B's own numbers are shown: the shifted beta
        beta_b = pd.read_csv(page_runs["b"] / "devai/cbc/beta.csv").query(
            "language == @language and backbone == @backbone")["beta"].item()
        shown = [r for r in diff.visible("devai.beta")
                 if (r["language"], r["backbone"]) == (language, backbone)]
        assert_shown(shown[0]["beta"], beta_b, "run B's beta")
        assert diff.requests == [] and diff.errors == []
    finally:
        diff.close()


def test_copy_csv_puts_the_visible_rows_on_the_clipboard(opened, results):
    opened.view("panel=devai&language=Arabic")
    page = opened.page
    assert page.input_value("select[data-filter='language']") == "Arabic"
    page.click("#table-devai\\.leaderboard button.copy-csv")
    page.wait_for_function("document.querySelector('#table-devai\\\\.leaderboard "
                           "button.copy-csv').textContent === 'Copied'")
    rows = list(csv.DictReader(io.StringIO(page.evaluate("navigator.clipboard.readText()"))))
    frame = pd.read_csv(results / "devai/cbc/leaderboard.csv").query("language == 'Arabic'")
    frame = frame.sort_values(["rank_cbc", "rank_raw"], kind="stable")  # shown by rank
    assert [r["backbone"] for r in rows] == frame["backbone"].tolist()
    assert [float(r["mean_cbc"]) for r in rows] == frame["mean_cbc"].tolist()  # full precision
    opened.view("panel=devai")


def test_the_language_filter_applies_to_the_slopegraph_and_its_tooltip_has_the_interval(
        opened, results):
    opened.panel("devai")
    chart = "[data-chart='devai.slopegraph']"
    languages = list(pd.unique(pd.read_csv(results / "devai/cbc/leaderboard.csv")["language"]))
    assert all(lang in opened.page.text_content(chart) for lang in languages)
    opened.page.select_option("select[data-filter='language']", "Hindi")
    opened.page.wait_for_selector(f"{chart}[data-rendered='true']")
    text = opened.page.text_content(chart)
    assert "Hindi" in text and not any(lang in text for lang in languages if lang != "Hindi")
    spec = opened.page.evaluate("() => JSON.parse(document.getElementById('page-data')"
                                ".textContent).panels.find(p => p.name === 'devai').sections"
                                ".find(s => s.id === 'leaderboard').charts[0].spec")
    label = "rank set (simultaneous)"  # the page's default kind of rank interval
    assert {"field": label} in spec["spec"]["encoding"]["tooltip"]  # facet's layer
    row = spec["data"]["values"][0]  # the raw stage of a cell
    board = pd.read_csv(results / "devai/cbc/leaderboard.csv").set_index(
        ["language", "backbone"]).loc[(row["language"], row["backbone"])]
    assert row["stage"] == "raw"
    low, high = (int(board[f"rank_raw_simultaneous_{end}"]) for end in ("low", "high"))
    assert row[label] == f"[{low}, {high}]"
    opened.page.select_option("select[data-filter='language']", "")
    opened.page.wait_for_selector(f"{chart}[data-rendered='true']")
    assert all(lang in opened.page.text_content(chart) for lang in languages)


def test_a_condition_without_usable_judgments_shows_a_banner_and_no_warning(browser,
                                                                           tmp_path):
    """The local judge example's shape (every zh verdict unparseable): the page says so in a
    banner, draws no empty chart, shows no p-value for untested pairs, and logs no warning (it
    logged 'Infinite extent for field "flip_rate"')."""
    from polyjudge.report.page import build_page
    from page_results import unusable_condition
    root = unusable_condition(tmp_path)
    page = Opened(browser, build_page(root, root / "index.html"))
    warnings = []
    page.page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else 0)
    try:
        page.page.reload()
        page.wait()
        banner = page.page.text_content("#panel-ls .banner, .banner")
        assert "No usable judgment for judge_a x zh, judge_b x zh" in banner
        charts = page.page.eval_on_selector_all(
            "[data-chart]", "cs => cs.map(c => [c.dataset.rendered, c.querySelectorAll("
                            "'.role-axis-label text').length])")
        assert charts and all(rendered == "true" and labels for rendered, labels in charts)
        flips = page.visible("ls.flips")
        untested = [r for r in flips if r["n_pairs"] == "0"]
        assert untested and all(r["mcnemar_p"] in ("", "\u2014") for r in untested)
        assert not any("zh" == r.get("condition", r.get("target")) and r["n_pairs"] != "0"
                       for r in flips)
        assert warnings == [] and page.errors == []
    finally:
        page.close()


LINE_BREAKS = """table => {
    // each line break inside a cell of the table: [cell key, text before it, text after it]
    const breaks = [];
    for (const td of document.querySelectorAll(`table[data-table="${table}"] td.t`)) {
        const chars = [];  // [character, top of its box or null when it has none]
        const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        for (let node = walk.nextNode(); node; node = walk.nextNode()) {
            for (let i = 0; i < node.data.length; i++) {
                const range = document.createRange();
                range.setStart(node, i); range.setEnd(node, i + 1);
                const box = [...range.getClientRects()].find(r => r.width > 0);
                chars.push([node.data[i], box ? box.top : null]);
            }
        }
        const text = chars.map(c => c[0]).join("");
        let top = null;
        chars.forEach(([, y], i) => {
            if (y === null) return;
            if (top !== null && y > top + 2) breaks.push([td.dataset.key, text.slice(0, i),
                                                          text.slice(i)]);
            top = y;
        });
    }
    return breaks;
}"""


def test_claims_cells_wrap_only_at_spaces_and_after_break_characters(opened, results):
    """Long identifiers in the claims table (ids, output paths, results folders) wrap after
    _ / . or -, never inside a word ("radius_residual_sigm|a", "mrewardbenc|h"); the cells'
    text stays the file's (no zero-width characters), and the table fits its scroll box."""
    opened.panel("devai")
    breaks = opened.page.evaluate(LINE_BREAKS, "claims")
    assert breaks, "no claims cell wraps: the check would pass vacuously"
    inside = [b for b in breaks if not (b[1][-1] in " _/.-" or b[2][0] == " ")]
    assert inside == [], inside[:5]
    assert any(b[0] in ("id", "output") and b[1][-1] in "_/." for b in breaks)
    claims = pd.read_csv(results / "claims.csv", keep_default_na=False)
    shown = opened.visible("claims")
    assert [r["id"] for r in shown] == claims["id"].tolist()
    assert [r["output"] for r in shown] == claims["output"].tolist()
    assert not any("\u200b" in v or "\u00ad" in v for r in shown for v in r.values())
    assert opened.page.evaluate("""() => { const w = document.querySelector(
        '#table-claims .table-wrap'); return w.scrollWidth <= w.clientWidth + 1; }""")
    # the claims' filter is named for what it holds: the results folder of each claim's output
    label = opened.page.text_content("label.filter:has(select[data-filter='cpanel'])")
    assert label.startswith("results folder")
    folders = opened.page.eval_on_selector_all("select[data-filter='cpanel'] option",
                                               "os => os.map(o => o.value).filter(v => v)")
    assert folders == list(pd.unique(claims["output"].str.split("/").str[1]))
