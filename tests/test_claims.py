"""The claims table reads reproduced values from outputs and compares them with the published."""
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import DATA

from polyjudge.report import claims

REPO = Path(__file__).resolve().parents[1]


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def outputs(tmp_path):
    write(tmp_path / "r/summary.json", json.dumps({"a": {"b": 2.5}, "order": ["x", "y"]}))
    pd.DataFrame({"language": ["en", "en", "zh"], "backbone": ["p", "q", "p"],
                  "beta": [1.0, -1.0, 0.5]}).to_csv(tmp_path / "r/beta.csv", index=False)
    return tmp_path


def claim(id, published, tolerance, output, select):
    return {"id": id, "section": "s", "quantity": id, "published": published,
            "tolerance": tolerance, "output": output, "select": select, "source": "test"}


def test_json_csv_and_missing_outputs(outputs):
    table = claims.evaluate_claims([
        claim("nested", 2.5, 0, "r/summary.json", {"key": "a.b"}),
        claim("list", 1, 0, "r/summary.json", {"key": "order", "equals": ["x", "y"]}),
        claim("row", 0.4, 0.2, "r/beta.csv", {"where": {"language": "zh", "backbone": "p"},
                                              "column": "beta"}),
        claim("far", 0.0, 0.1, "r/beta.csv", {"where": {"language": "zh"}, "column": "beta"}),
        claim("count", 2, 0, "r/beta.csv", {"where": {"language": "en"}, "aggregate": "count"}),
        claim("absent", 1, 0, "r/none.csv", {"column": "beta"}),
        {**claim("below", 0.6, 0, "r/beta.csv", {"where": {"language": "zh"}, "column": "beta"}),
         "bound": "upper"},
        {**claim("above", 0.6, 0, "r/beta.csv", {"where": {"language": "zh"}, "column": "beta"}),
         "bound": "lower"},
        claim("no key", 1, 0, "r/summary.json", {"key": "a.c"}),
    ], root=outputs)
    assert table.set_index("id")["status"].to_dict() == {
        "nested": "reproduced", "list": "reproduced", "row": "reproduced", "far": "differs",
        "count": "reproduced", "absent": "not computed", "no key": "not computed",
        "below": "reproduced", "above": "differs"}
    assert table.set_index("id").loc["far", "difference"] == pytest.approx(0.5)


def test_compare_with_a_wide_published_matrix(outputs):
    published = outputs / "data/beta_hat.csv"
    write(published, "language,P,Q\nen,1.0,-1.0\nzh,0.5,0.0\n")
    pd.DataFrame({"language": ["en", "en", "zh", "zh"], "backbone": ["p", "q", "p", "q"],
                  "beta": [1.0, -1.0, 0.5, 0.25]}).to_csv(outputs / "r/beta.csv", index=False)
    spec = {"compare": {"published": "beta_hat.csv", "wide_index": "language",
                        "keys": ["language", "backbone"],
                        "labels": {"backbone": {"P": "p", "Q": "q"}}, "column": "beta"}}
    table = claims.evaluate_claims([claim("matrix", 0, 0.1, "r/beta.csv", spec)], outputs,
                                   data_dir=outputs / "data")
    assert (table.loc[0, "reproduced"] == pytest.approx(0.25)
            and table.loc[0, "status"] == "differs")
    spec["compare"]["labels"] = {}
    with pytest.raises(claims.ClaimError, match="0 of 4 published rows"):
        claims.evaluate_claims([claim("matrix", 0, 0.1, "r/beta.csv", spec)], outputs,
                               data_dir=outputs / "data")


def test_every_published_claim_is_well_formed():
    entries = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids))
    for entry in entries:
        assert {"id", "section", "quantity", "published", "tolerance", "output", "select",
                "source"} <= set(entry), entry["id"]
        assert entry["output"].startswith("results/") and entry["tolerance"] >= 0


def test_changing_a_reproduced_value_flips_its_status(tmp_path):
    """On a copy of real outputs: the devai beta reproduces, and editing one cell breaks it."""
    entries = [e for e in yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
               if e["id"] in ("beta_matrix", "beta_spanish_gpt4o")]
    from conftest import DEVAI_BACKBONES, DEVAI_DIR, DEVAI_LANGUAGES

    from polyjudge.cbc import estimator
    from polyjudge.data import io
    runs = io.validate_runs(io.read_table(DEVAI_DIR / "run_level_scores.parquet"), "runs")
    panel = io.build_panel(runs, "runs", DEVAI_LANGUAGES, DEVAI_BACKBONES)
    beta = panel.matrix_frame(estimator.fit_cbc(panel).beta, "beta")
    path = tmp_path / "results/devai/cbc/beta.csv"
    path.parent.mkdir(parents=True)
    beta.to_csv(path, index=False)
    before = claims.evaluate_claims(entries, tmp_path, DATA)
    assert before["status"].tolist() == ["reproduced", "reproduced"]
    beta.loc[(beta["language"] == "Spanish") & (beta["backbone"] == "gpt-4o"), "beta"] += 0.01
    beta.to_csv(path, index=False)
    after = claims.evaluate_claims(entries, tmp_path, DATA)
    assert after["status"].tolist() == ["differs", "differs"]
    md = claims.claims_markdown(after)
    assert "2 differ" in md and "\\|" in md


def test_claims_md_numbers_its_sections_in_order_as_methods_md(outputs):
    """claims.md renders the rows in the order of their section numbers (1, 2, ..., 10.1, 10.2),
    not in the order of config/claims.yaml (test_docs checks each is a heading of methods.md)."""
    table = claims.evaluate_claims([claim("a", 1, 0, "r/none.json", {"key": "x"}) | {
        "section": section} for section in ("6 CMI", "5 Ablations", "10.2 Parse", "10.1 Inc",
                                            "2 Held-out")] + [
        claim("b", 2.5, 0, "r/summary.json", {"key": "a.b"}) | {"section": "1 CBC"}], outputs)
    rows = [line.split(" | ")[0].lstrip("| ") for line in
            claims.claims_markdown(table).splitlines()
            if line.startswith("| ") and "---" not in line]
    assert rows[1:] == ["1 CBC", "2 Held-out", "5 Ablations", "6 CMI", "10.1 Inc", "10.2 Parse"]


def test_claims_md_on_a_users_own_panels_says_whose_claims_they_are(outputs):
    """On a user's own panels no claim is computed, and "124 published quantities: 0
    reproduced, ... 124 not computed" would read as a failure. claims.md then says the table
    belongs to the default reproduction and how to check it, and lists no rows."""
    table = claims.evaluate_claims([claim(str(i), 1, 0, "r/none.json", {"key": "x"})
                                    for i in range(3)], outputs)
    text = claims.claims_markdown(table)
    assert "default reproduction" in text and "None of its 3 claims was checked" in text
    assert "snakemake --cores 2" in text and "| section |" not in text
    computed = claims.evaluate_claims([claim("b", 2.5, 0, "r/summary.json", {"key": "a.b"})],
                                      outputs)
    assert "1 published quantity of the default reproduction: 1 reproduced" in (
        claims.claims_markdown(computed))


def test_the_end_of_run_summary_counts_claims_and_says_where_results_are(tmp_path):
    """A run ends on a summary a person reads: what ran, the claims count (or that it is from an
    earlier run), the figures and the report."""
    import os
    import time

    from polyjudge.report.summary import run_summary
    results = tmp_path / "results"
    (results / "devai" / "figures").mkdir(parents=True)
    (results / "devai" / "figures" / "heatmap.png").write_bytes(b"png")
    pd.DataFrame({"status": ["reproduced"] * 3 + ["differs", "not computed"]}).to_csv(
        results / "claims.csv", index=False)
    text = run_summary({"devai": ["cbc", "heldout"], "mine": ["cbc"]}, results, since=0.0)
    lines = text.splitlines()
    assert lines[0].startswith("polyjudge: finished. 2 result file(s) written this run")
    assert lines[1] == "  panels: devai (2 analyses), mine (cbc)"
    assert lines[2] == (f"  claims: 3 reproduced, 1 differ, 1 not computed of 5 published "
                        f"values -> {results / 'claims.md'}")
    assert lines[3] == f"  figures: 1 in {results}/<panel>/figures/ (PNG and SVG)"
    assert lines[4] == "  report: snakemake --report results/report.html" and len(lines) == 5
    later = time.time() + 10
    os.utime(results / "claims.csv", (later - 20, later - 20))
    assert "(from an earlier run)" in run_summary({}, results, since=later)


def test_the_end_of_run_summary_counts_only_the_panels_of_this_config(tmp_path):
    """A folder that still holds an earlier config's panels: the summary counts the figures of
    this config's panels (and of the simulation study when it ran), not the stale ones."""
    from polyjudge.report.summary import run_summary
    results = tmp_path / "results"
    for folder, count in (("mine", 2), ("devai", 9), ("simulation", 1)):
        (results / folder / "figures").mkdir(parents=True)
        for k in range(count):
            (results / folder / "figures" / f"f{k}.png").write_bytes(b"png")
    assert "  figures: 2 in " in run_summary({"mine": ["cbc"]}, results)
    assert "  figures: 3 in " in run_summary({"mine": ["cbc"]}, results, simulation=True)
