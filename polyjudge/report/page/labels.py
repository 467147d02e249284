"""Human labels on the results page: per language and judged system, the labels alone, the
judges alone, CBC and the prediction-powered estimates side by side (a chart and the tables of
``labels/estimates.csv``, ``labels/differences.csv``, ``labels/ranks.csv`` and
``labels/judge_errors.csv``), and the label-plan loop where the panel runs it
(:mod:`~polyjudge.report.page.label_plan`)."""
from __future__ import annotations

import pandas as pd

from .charts import _chart, _order, _spec
from .label_plan import label_plan_part
from .results_folder import PER_LANGUAGE, Results, _records, col, table

INTERVAL = "95% interval (measured coverage on DevAI 0.92-0.96)"
ESTIMATE_COLUMNS = [
    col("language", type="text"), col("system", type="text"), col("estimator", type="text"),
    col("predictor", type="text"), col("estimate"),
    col("ci", INTERVAL, "interval", low="ci_low", high="ci_high"),
    col("lam", "lambda"), col("n_labels", "labels", "int"), col("n_items", "items", "int")]
DIFFERENCE_COLUMNS = [
    col("language", type="text"), col("system", type="text"), col("versus", type="text"),
    col("estimator", type="text"), col("predictor", type="text"), col("difference"),
    col("ci", "95% interval, simultaneous over the language's pairs (Bonferroni; measured "
        "coverage on DevAI 0.93-0.96)", "interval", low="ci_low", high="ci_high")]
RANK_COLUMNS = [
    col("language", type="text"), col("system", type="text"), col("estimator", type="text"),
    col("predictor", type="text"), col("estimate"), col("rank", type="int"),
    col("rank_set", "rank set, simultaneous over the language's systems (holds whenever the "
        "difference intervals all do; measured coverage on planted systems 0.997-0.999)",
        "interval", digits=0, low="rank_low", high="rank_high"), col("systems", type="int")]
ERROR_COLUMNS = [
    col("language", type="text"), col("judge", type="text"), col("measure", type="text"),
    col("estimate"), col("ci", "95% interval (measured coverage on DevAI 0.93-0.95)",
                         "interval", low="ci_low", high="ci_high"),
    col("n_labels", "labels", "int"), col("n_items", "items", "int")]
SHOWN = {"all_labels": "all human labels", "human_only": "human labels alone",
         "judge_only": "judges alone", "cbc": "CBC", "ppi:panel": "PPI (judges' mean)",
         "ppi:crossfit": "PPI (cross-fitted judges)"}
"""The estimators the chart draws, and their names in its legend."""


def side_by_side(cid: str, estimates: pd.DataFrame) -> dict:
    """Each system's estimates per language, one row per estimator: a point, and its interval
    where it has one."""
    frame = estimates.assign(key=estimates["estimator"].where(
        estimates["estimator"] != "ppi", "ppi:" + estimates["predictor"].fillna("").astype(str)))
    frame = frame[frame["key"].isin(SHOWN)].assign(
        shown=lambda f: f["key"].map(SHOWN), language=lambda f: f["language"].astype(str),
        system=lambda f: f["system"].astype(str))
    data = _records(frame, ["language", "system", "shown", "estimate", "ci_low", "ci_high",
                            "n_labels"])
    order = [SHOWN[k] for k in SHOWN if k in set(frame["key"])]
    # the colour legend names the estimators: rows 11 px apart leave no room for axis labels
    y = {"field": "shown", "type": "nominal", "sort": order, "title": None, "axis": None}
    colour = {"field": "shown", "type": "nominal", "sort": order, "title": None}
    tooltip = [{"field": f} for f in ("language", "system", "shown")] + [
        {"field": f, "type": "quantitative", "format": ".3f"}
        for f in ("estimate", "ci_low", "ci_high")] + [{"field": "n_labels"}]
    spec = _spec({"facet": {"row": {"field": "language", "type": "nominal",
                                    "sort": _order(frame, "language"), "title": None},
                            "column": {"field": "system", "type": "nominal",
                                       "sort": _order(frame, "system"), "title": None}},
                  "spec": {"width": 170, "height": {"step": 11}, "layer": [
                      {"mark": "rule", "encoding": {
                          "y": y, "x": {"field": "ci_low", "type": "quantitative",
                                        "title": "mean of the human labels"},
                          "x2": {"field": "ci_high"}, "color": colour}},
                      {"mark": {"type": "point", "filled": True}, "encoding": {
                          "y": y, "x": {"field": "estimate", "type": "quantitative"},
                          "color": colour, "tooltip": tooltip}}]}}, data)
    return _chart(cid, "Each system's mean on the human scale, by estimator", spec)


def labels_section(res: Results, name: str) -> dict | None:
    """The "Human labels" section of a panel with human labels or a label plan."""
    source = f"{name}/labels/estimates.csv"
    estimates = res.csv(source)
    plan = label_plan_part(res, name)
    if estimates is None:
        return None if plan is None else {
            "id": "labels", "title": "Human labels", "note": plan[1], "facts": None,
            "tables": plan[0], "charts": [], "warning": ""}
    filters = {"language": ["language"]}
    tables = [table(f"{name}.labels_estimates", "Estimates per language and system", source,
                    estimates, ESTIMATE_COLUMNS, PER_LANGUAGE, filters)]
    for file, tid, title, columns, extra in (
            ("differences.csv", "labels_differences", "Differences between systems",
             DIFFERENCE_COLUMNS, {}),
            ("ranks.csv", "labels_ranks", "Ranks of the systems", RANK_COLUMNS, {}),
            ("judge_errors.csv", "labels_errors", "Each judge's error against the humans",
             ERROR_COLUMNS, {"backbone": ["judge"]})):
        frame = res.csv(f"{name}/labels/{file}")
        if frame is not None and len(frame):
            tables.append(table(f"{name}.{tid}", title, f"{name}/labels/{file}", frame,
                                columns, PER_LANGUAGE, {**filters, **extra}))
    sampled = estimates[estimates["estimator"] == "all_labels"]
    note = ("What do the humans say, per language? The mean of the human labels of each "
            "judged system, from the labels alone, from the judges alone (no interval: they "
            "score every item), CBC's calibrated mean (the judges' mean in each language: CBC "
            "cannot see a shift all judges share) and prediction-powered inference (PPI++ with "
            "power tuning; predictor: the judges' mean, CBC's, a cross-fitted combination of "
            "the judges, or one judge). Intervals treat the labelled items as drawn without "
            "replacement from the panel's items (docs/methods.md section 12). A judge's bias "
            "is its mean score minus the humans' label; mae its mean absolute difference.")
    note += (" A system's rank set holds for every system of the language at once: 1 + the "
             "systems surely above it to the systems not surely below it.")
    if len(sampled):
        note += (" The estimates use a random subset of the labels (n_labels per language and "
                 "system); 'all human labels' is the mean of every label, the target the "
                 "intervals aim at.")
    if plan:
        tables += plan[0]
        note += " " + plan[1]
    return {"id": "labels", "title": "Human labels", "note": note, "facts": None,
            "tables": tables, "charts": [side_by_side(f"{name}.labels_chart", estimates)],
            "warning": ""}
