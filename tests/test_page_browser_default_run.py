"""The default reproduction's results page in a real browser: the page the README's command
wrote (the ``readme_reproduction`` fixture, made once per test run), opened from disk in
headless Chromium with every http(s) request aborted: every panel renders offline, each
panel's first screen holds its verdict (and a score panel's top sets), the layout holds at
1,280 px, and the provenance names every panel's input files in data/ with their SHA-256.
Needs what tests/test_page_browser.py needs (tests/page_browser.py says what)."""
from __future__ import annotations

import hashlib

import pandas as pd
import pytest
import yaml

from polyjudge.report.page.card import card_sentences
from polyjudge.report.page.results_folder import Results
from polyjudge.report.page.verdict import judge_ls_verdict
from page_browser import Opened, browser  # noqa: F401 (browser: a fixture)


@pytest.mark.slow
def test_the_default_runs_page_renders_every_panel_offline(browser, readme_reproduction):
    """Acceptance: `snakemake --cores 2` on the default config (the README's command) wrote
    results/index.html; opened from disk with the network blocked, every section renders."""
    results = readme_reproduction / "results"
    default = Opened(browser, results / "index.html")
    try:
        panels = default.page.eval_on_selector_all("nav button",
                                                   "bs => bs.map(b => b.dataset.panel)")
        assert panels == ["devai", "devai_raw", "synthetic", "mrewardbench", "llmbar",
                          "judge_ls_synthetic"]
        expected = {"devai": {"leaderboard", "beta", "heldout", "decisions", "reversal", "cmi"},
                    "mrewardbench": {"leaderboard", "beta", "heldout", "reversal"},
                    "llmbar": {"judge_ls"}}
        for name in panels:
            default.panel(name)
            sections = set(default.page.eval_on_selector_all(
                "#panel [data-section]", "s => s.map(x => x.dataset.section)"))
            assert expected.get(name, set()) <= sections, name
            marks = default.page.eval_on_selector_all(
                ".chart", "cs => cs.map(c => c.querySelectorAll('svg path, svg text').length)")
            assert marks and min(marks) > 10, (name, marks)
        claims = pd.read_csv(results / "claims.csv")
        assert len(default.visible("claims")) == len(claims)
        assert default.requests == [] and default.errors == [] and default.dialogs == []
    finally:
        default.close()


@pytest.mark.slow
def test_each_panel_s_first_screen_has_the_verdict_and_the_top_sets(browser, readme_reproduction):
    """Acceptance: at 1,280 x 800, each score panel of the default run opens on its verdict
    sentences and the table of each language's top set, raw and CBC, with rank intervals; each
    Judge-LS panel on its verdict (computed from judge_ls/, checked against those files in
    tests/test_page_verdict.py), above the filter bar and the charts."""
    results = readme_reproduction / "results"
    default = Opened(browser, results / "index.html")
    try:
        default.page.set_viewport_size({"width": 1280, "height": 800})
        for name in ("devai", "mrewardbench", "synthetic"):
            default.panel(name)
            default.page.evaluate("window.scrollTo(0, 0)")
            text = default.page.text_content("#verdict")
            assert "After CBC" in text and "Held-out rank consistency" in text, name
            # what "first" means, before any ranking: on DevAI's pass rates the most lenient
            ranked = default.page.text_content("#verdict p.ranked")
            assert ranked.startswith("Ranked: each backbone's mean"), (name, ranked)
            assert ("most lenient" in ranked) == (name == "devai"), (name, ranked)
            box = default.page.locator(f"table[data-table='{name}.top']").bounding_box()
            assert box is not None and box["y"] + box["height"] <= 800, (name, box)
            rows = default.visible(f"{name}.top")
            board = pd.read_csv(results / name / "cbc" / "leaderboard.csv")
            assert [r["language"] for r in rows] == list(pd.unique(board["language"]))
            first = board[board["rank_ub_cbc"] == 1]
            for row in rows:
                tops = first.loc[first["language"] == row["language"], "backbone"]
                assert all(b in row["cbc_top"] for b in tops), (name, row)
            bold = default.page.eval_on_selector_all(
                f"table[data-table='{name}.leaderboard'] tr.top-set", "rs => rs.length")
            assert bold == len(first)
            # the leaderboard: languages in file order, each by CBC rank, the top set first
            shown = pd.DataFrame(default.visible(f"{name}.leaderboard"))
            assert list(pd.unique(shown["language"])) == list(pd.unique(board["language"]))
            for _, ranks in shown.groupby("language", sort=False)["rank_cbc"]:
                assert list(ranks.astype(int)) == sorted(ranks.astype(int))
        # devai_raw runs no reversal test: its first screen still says who leads raw, and that
        # it is not tested
        default.panel("devai_raw")
        text = default.page.text_content("#verdict")
        assert "In the raw scores" in text and "is not tested here" in text, text
        box = default.page.locator("#verdict").bounding_box()
        assert box["y"] + box["height"] <= 800, box
        for name in ("llmbar", "judge_ls_synthetic"):
            default.panel(name)
            default.page.evaluate("window.scrollTo(0, 0)")
            shown = default.page.eval_on_selector_all("#verdict p:not(.ranked)",
                                                      "ps => ps.map(p => p.textContent)")
            # the judge card's sentence first where the panel has a card (llmbar), then
            # the Judge-LS verdict
            card = card_sentences(Results(results), name)
            assert shown == card + judge_ls_verdict(Results(results), name), name
            assert len(card) == (name == "llmbar")
            assert "accuracy against" in default.page.text_content("#verdict p.ranked")
            shown = shown[len(card):]
            assert "most accurate judge" in shown[0] and "Position bias" in shown[2], shown
            box = default.page.locator("#verdict").bounding_box()
            bar = default.page.locator("#panel .filters").bounding_box()
            assert box["y"] + box["height"] <= min(bar["y"], 800), (name, box, bar)
        assert default.errors == []
    finally:
        default.close()


TOUCHING_LABELS = """() => [...document.querySelectorAll('.role-axis')].flatMap(axis => {
    const boxes = [...axis.querySelectorAll('.role-axis-label text')]
        .filter(t => !/rotate\\((?!0\\))/.test(t.getAttribute('transform') || ''))
        .map(t => [t.getBoundingClientRect(), t.textContent]).filter(([r]) => r.width > 0);
    return boxes.flatMap(([a, ta], i) => boxes.slice(i + 1).filter(([b]) =>
        Math.max(b.left - a.right, a.left - b.right) < 2 &&
        Math.max(b.top - a.bottom, a.top - b.bottom) < 0).map(([, tb]) => ta + ' | ' + tb));
})"""
"""Pairs of upright labels of one axis less than 2 px apart (rotated labels' boxes overlap
without the text touching, so they are left out)."""


@pytest.mark.slow
def test_layout_at_1280_px_headings_with_their_charts_no_overflow_no_warning(
        browser, readme_reproduction):
    """On the default run's page: every chart heading sits directly above its own chart, no
    panel is wider than a 1,280 px viewport, no table's text is cut off in its scroll box, no
    small multiple or slopegraph facet is drawn without data, no two axis labels touch, and the
    console stays quiet."""
    page = Opened(browser, readme_reproduction / "results" / "index.html")
    warnings = []
    page.page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else 0)
    try:
        page.page.set_viewport_size({"width": 1280, "height": 800})
        names = page.page.eval_on_selector_all("nav button", "bs => bs.map(b => b.dataset.panel)")
        for name in names:
            page.panel(name)
            width = page.page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 1280, (name, width)
            # no text runs out of a table's scroll box (long descriptions and notes wrap)
            cut = page.page.evaluate("""() => [...document.querySelectorAll('.table-wrap')]
                .filter(w => w.scrollWidth > w.clientWidth + 1)
                .map(w => w.querySelector('table').dataset.table)""")
            assert cut == [], (name, cut)
            pairs = page.page.evaluate("""() => [...document.querySelectorAll('.figure')]
                .map(f => {
                const h = f.querySelector(':scope > h3'), c = f.querySelector('.chart');
                if (!h) return null;
                const a = h.getBoundingClientRect(), b = c.getBoundingClientRect();
                return [a.bottom <= b.top + 1, a.left < b.right && b.left < a.right,
                        b.top - a.bottom];
            }).filter(x => x)""")
            assert pairs and all(below and overlap and gap < 40
                                 for below, overlap, gap in pairs), (name, pairs)
            # no two upright axis labels touch (at 0.1 steps, held-out tau's -0.2 and -0.1 did)
            touching = page.page.evaluate(TOUCHING_LABELS)
            assert touching == [], (name, touching)
            # no facet without data is drawn: one x axis per language of the slopegraph (a
            # wrapped facet drew a column's axis under the empty 8th cell of M-RewardBench)
            slope = f"[data-chart='{name}.slopegraph']"
            if page.page.query_selector(slope):
                facets = page.page.eval_on_selector_all(  # a wrapped facet titles each cell
                    f"{slope} .cell .role-title-text text", "ts => ts.map(t => t.textContent)")
                axes = page.page.eval_on_selector_all(
                    f"{slope} .role-axis-label text",
                    "ts => ts.filter(t => t.textContent === 'raw').length")
                assert facets and axes == len(facets), (name, facets, axes)
        # the small multiples of LLMBar: each judge's panel has only conditions with data
        page.panel("llmbar")
        spec = page.page.evaluate("() => JSON.parse(document.getElementById('page-data')"
                                  ".textContent).panels.find(p => p.name === 'llmbar').sections"
                                  ".find(s => s.id === 'judge_ls').charts[2].spec")
        values = pd.DataFrame(spec["data"]["values"])
        drawn = page.page.eval_on_selector_all(
            "[data-chart='llmbar.position_chart'] .role-axis-label text",
            "ts => ts.map(t => t.textContent)")
        # one x label per (judge, condition) with data: a shared x axis drew all 16 per judge
        labels = [t for t in drawn if t in set(values["condition"])]
        assert len(labels) == len(values) < 6 * values["condition"].nunique()
        # the y axes are named as the tables' columns, and the small multiples fill the row
        section = page.page.evaluate("() => JSON.parse(document.getElementById('page-data')"
                                     ".textContent).panels.find(p => p.name === 'llmbar')"
                                     ".sections.find(s => s.id === 'judge_ls')")
        names = {c["key"]: c["label"] for t in section["tables"] for c in t["columns"]}
        for chart, field in (("accuracy", "strict_accuracy"), ("flips", "flip_rate"),
                             ("position", "position_inconsistency")):
            selector = f"[data-chart='llmbar.{chart}_chart']"
            titles = page.page.eval_on_selector_all(
                f"{selector} .role-axis-title text", "ts => [...new Set(ts.map(t => "
                "t.textContent))]")
            assert titles == [names[field]] != [field], (chart, titles)
            width = page.page.locator(selector).bounding_box()["width"]
            row = page.page.locator("#panel .filters").bounding_box()["width"]
            assert width > 0.85 * row, (chart, width, row)
        assert warnings == [] and page.errors == []
    finally:
        page.close()


def expected_inputs(root, panel: dict) -> set[str] | None:
    """The files in data/ a default panel is read from (None: a simulated panel, which has
    none), as the config names them."""
    if panel["kind"] == "synthetic" or panel.get("source") == "synthetic":
        return None
    named = {"judge_runs": lambda: [panel["runs"], panel["requirements"]],
             "preference_margins": lambda: panel["files"].values(),
             "pairwise_verdicts": lambda: [panel["verdicts"]],
             "judgment_tree": lambda: [p.relative_to(root / "data").as_posix() for p in
                                       (root / "data" / panel["root"]).rglob("*.json")]}
    return {f"data/{path}" for path in named[panel["kind"]]()}


@pytest.mark.slow
def test_provenance_lists_every_panels_data_files_with_their_sha256(browser,
                                                                    readme_reproduction):
    """Acceptance: the Provenance table of the default run's page lists, for every panel, the
    files in data/ it was read from (a judgment tree's raw JSON files, not their flattened
    table; LLMBar's verdicts) with the SHA-256 hashlib gives; a simulated panel says its seed;
    no unformatted placeholder (`{panel}`) is left in any panel's view."""
    root = readme_reproduction
    panels = yaml.safe_load((root / "config" / "config.yaml").read_text())["panels"]
    page = Opened(browser, root / "results" / "index.html")
    try:
        shown = pd.DataFrame(page.visible("inputs"))
        assert set(shown["panel"]) == set(panels)
        for name, panel in panels.items():
            rows = shown[shown["panel"] == name]
            expected = expected_inputs(root, panel)
            if expected is None:
                (said,), (path,) = rows["input"], rows["path"]
                assert said.startswith("none: simulated by rule ") and path == "", name
                assert said.endswith(f" with seed {panel['seed']}"), (name, said)
                continue
            assert set(rows["path"]) == expected and len(rows) == len(expected), name
            for path, sha in zip(rows["path"], rows["sha256"]):
                assert hashlib.sha256((root / path).read_bytes()).hexdigest() == sha, path
        for name in panels:
            page.panel(name)
            text = page.page.evaluate("() => document.body.innerText")
            assert "{" not in text and "}" not in text, (name, text[text.find("{") - 80:][:160])
        assert page.errors == []
    finally:
        page.close()


@pytest.mark.slow
def test_calibrated_scores_outside_the_score_range_are_counted_and_flagged(
        browser, readme_reproduction):
    """DevAI's calibrated scores cross [0, 100] near its bounds (a cell with beta > 0 pushes a 0
    below it): the beta section's banner counts them as cbc/summary.json does, and a cell's
    task-by-task detail flags each one, as calibrated_tensor.parquet has them."""
    results = readme_reproduction / "results"
    cal = pd.read_parquet(results / "devai/cbc/calibrated_tensor.parquet")
    cal["outside"] = (cal["score"] < 0) | (cal["score"] > 100)
    counts = cal.groupby(["language", "backbone"], sort=False)["outside"].sum()
    language, backbone = counts.idxmax()
    assert counts.max() > 0
    opened = Opened(browser, results / "index.html",
                    f"#panel=devai&cell_language={language}&cell_backbone={backbone}")
    try:
        banner = opened.page.text_content("#section-beta .banner")
        assert banner.startswith(f"{int(cal['outside'].sum()):,} of the {len(cal):,} calibrated "
                                 "task-level scores lie outside the score range [0, 100]")
        shown = opened.visible("devai.cell")
        cell = cal[(cal["language"] == language) & (cal["backbone"] == backbone)]
        assert [r["outside"] == "yes" for r in shown] == cell["outside"].tolist()
        assert opened.errors == []
    finally:
        opened.close()
