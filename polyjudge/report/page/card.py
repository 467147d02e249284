"""The judge card on the results page: the section that leads a panel (agreement with the
reference per judge x language as a heatmap, the agreement and language-test tables, the
biases with the cells whose interval excludes 0 marked) and the verdict's first sentences,
read from ``card/agreement.csv``, ``card/language_tests.csv``, ``card/bias.csv`` and
``card/bias_tests.csv``."""
from __future__ import annotations

import pandas as pd

from ...analyses.card import ALL_LANGUAGES, headline
from ...analyses.card.bias import NOT_COMPUTED
from .card_redundancy import redundancy_tables
from .charts import _chart, _order, _spec
from .results_folder import PER_LANGUAGE, POOLED, Results, _records, col, table

SLIGHT = 0.20
"""Kappa at or below this is "slight" agreement at most (Landis and Koch 1977)."""

AGREEMENT_COLUMNS = [
    col("language", type="text"), col("judge", type="text"), col("versus", type="text"),
    col("measure", type="text"), col("estimate"),
    col("ci", "95% interval (measured coverage 0.94-0.95)", "interval", low="ci_low",
        high="ci_high"),
    col("n_items", "items", "int"), col("n_clusters", "clusters", "int")]
TEST_COLUMNS = [
    col("judge", type="text"), col("measure", type="text"), col("lowest", type="text"),
    col("highest", type="text"), col("range"), col("statistic", "Wald statistic"),
    col("df", type="int"), col("p_value", "p", "p"), col("q_value", "q (BH)", "p")]


BIAS_COLUMNS = [
    col("language", type="text"), col("judge", type="text"), col("bias", type="text"),
    col("estimate"),
    col("ci", "95% interval (measured coverage 0.93-0.95)", "interval", low="ci_low",
        high="ci_high"),
    col("excludes_zero", "interval excludes 0", "bool"),
    col("n_items", "units", "int"), col("n_clusters", "clusters", "int"),
    col("unit", "what the estimate is", "text")]
BIAS_TEST_COLUMNS = [
    col("judge", type="text"), col("bias", type="text"), col("lowest", type="text"),
    col("highest", type="text"), col("range"), col("statistic", "Wald statistic"),
    col("df", type="int"), col("p_value", "p", "p"), col("q_value", "q (BH)", "p")]


def card_sentences(res: Results, name: str) -> list[str]:
    """What the card says first: how far the judges agree with the reference, and whether
    that differs between languages; or that the panel has no reference."""
    agreement = res.csv(f"{name}/card/agreement.csv")
    if agreement is None:
        return []
    kappa, label = headline(agreement)
    if kappa.empty:
        return ["Judge card: the panel has no reference labels, so whether its judges are right "
                "is not measured; the card shows how far they agree with each other."]
    # the panel's own judges are those compared with each other; a reference file's other
    # raters (DevAI's original agent) are compared with the reference only
    pairs = agreement[~agreement["versus"].isin(["reference", "panel"])]
    judges = set(pairs["judge"]) | set(pairs["versus"]) or set(kappa["judge"])
    # a pairwise panel's "languages" are its conditions (prompting strategies, languages)
    cell = "condition" if res.path(f"{name}/judge_ls/accuracy.csv") else "language"
    panel, others = kappa[kappa["judge"].isin(judges)], kappa[~kappa["judge"].isin(judges)]
    n_cells = len(panel)
    what = (f"{label} with the reference labels" if label != "accuracy" else
            "accuracy against the reference labels (the share of items the judge gets right; "
            "a tie counts as wrong)")
    text = (f"Judge card: {what} is {panel['estimate'].min():.2f} to "
            f"{panel['estimate'].max():.2f} in the {n_cells} {cell} x judge cells")
    if label != "accuracy" and n_cells and (panel["ci_high"] <= SLIGHT).all():
        text += (f", every interval at or below {SLIGHT:.2f}: no judge agrees with it beyond "
                 "chance, so the ranking is one of leniency, not accuracy.")
    else:
        text += "."
    for row in others.itertuples():
        text += (f" {row.judge} ({row.language}): {row.estimate:.2f} "
                 f"[{row.ci_low:.2f}, {row.ci_high:.2f}].")
    tests = res.csv(f"{name}/card/language_tests.csv")
    if tests is not None and len(tests):
        kappa_tests = tests[tests["measure"] == kappa["measure"].iloc[0]]
        kappa_tests = kappa_tests[kappa_tests["judge"].isin(panel["judge"].unique())]
        differs = kappa_tests[kappa_tests["q_value"] < 0.05]
        text += (f" {label[0].upper() + label[1:]} differs between {cell}s for "
                 f"{len(differs) or 'none'} of the {len(kappa_tests)} judges (FDR 0.05)"
                 + (": " + ", ".join(differs["judge"].astype(str)) + "." if len(differs)
                    else "."))
    return [text]


def judge_language_heatmap(rows: pd.DataFrame, data: list, label: str, scale: dict,
                           text: dict, units: str) -> dict:
    """The card's judge x language heatmap spec: ``data`` (records of ``rows``) coloured by
    ``estimate`` on ``scale``, ``text`` written in each cell, the interval and the ``units``
    counted in the tooltip."""
    tooltip = [{"field": "language"}, {"field": "judge"},
               {"field": "estimate", "type": "quantitative", "format": ".3f", "title": label},
               {"field": "ci_low", "type": "quantitative", "format": ".3f",
                "title": "interval low"},
               {"field": "ci_high", "type": "quantitative", "format": ".3f",
                "title": "interval high"},
               {"field": "n_items", "type": "quantitative", "title": units}]
    encoding = {"x": {"field": "judge", "type": "nominal", "sort": _order(rows, "judge"),
                      "title": None, "axis": {"labelAngle": -30}},
                "y": {"field": "language", "type": "nominal", "sort": _order(rows, "language"),
                      "title": None, "axis": {"labelLimit": 400}}}
    return _spec({"encoding": encoding, "layer": [
        {"mark": "rect", "encoding": {
            "color": {"field": "estimate", "type": "quantitative", "title": label,
                      "scale": scale},
            "tooltip": tooltip}},
        {"mark": {"type": "text", "fontSize": 10}, "encoding": {"text": text}}],
        "width": {"step": 64}, "height": {"step": 26}}, data)


def card_heatmap(cid: str, kappa: pd.DataFrame, label: str = "kappa") -> dict:
    """The lead measure against the reference (:func:`polyjudge.analyses.card.headline`) as a
    judge x language heatmap on a fixed scale (-1..1 for kappa, 0..1 for accuracy); the
    tooltip carries the interval and the items."""
    data = _records(kappa, ["language", "judge", "estimate", "ci_low", "ci_high", "n_items"])
    for row in data:
        row["language"], row["judge"] = str(row["language"]), str(row["judge"])
    scale = ({"scheme": "blueorange", "domain": [-1, 1], "domainMid": 0}
             if label != "accuracy" else {"scheme": "blues", "domain": [0, 1]})
    spec = judge_language_heatmap(
        kappa, data, label, scale,
        {"field": "estimate", "type": "quantitative", "format": ".2f"}, "items")
    title = ("Cohen's kappa with the reference" if label != "accuracy"
             else "Accuracy against the reference")
    return _chart(cid, f"{title}, by language and judge", spec)


def card_section(res: Results, name: str) -> dict | None:
    """The "Judge card" section: heatmap, agreement table, language tests."""
    source = f"{name}/card/agreement.csv"
    agreement = res.csv(source)
    if agreement is None:
        return None
    filters = {"language": ["language"], "backbone": ["judge", "versus"]}
    tables = [table(f"{name}.card_agreement", "Agreement with the reference and among the "
                    "judges", source, agreement, AGREEMENT_COLUMNS, PER_LANGUAGE, filters)]
    tests = res.csv(f"{name}/card/language_tests.csv")
    if tests is not None and len(tests):
        tables.append(table(f"{name}.card_tests", "Does agreement differ between languages?",
                            f"{name}/card/language_tests.csv", tests, TEST_COLUMNS, POOLED,
                            {"backbone": ["judge"]}))
    tables += redundancy_tables(res, name)
    kappa, label = headline(agreement)
    charts_ = [card_heatmap(f"{name}.card_heatmap", kappa, label)] if len(kappa) else []
    bias_tables, bias_charts, bias_note = bias_parts(res, name)
    tables += bias_tables
    charts_ += bias_charts
    note = ("Is each judge right, in each language? Agreement with the panel's reference labels "
            "(versus = reference: percent agreement, Cohen's kappa, Gwet's AC1, Krippendorff's "
            "alpha) and among the judges (versus = panel: Krippendorff's alpha and Fleiss' "
            "kappa; versus = another judge: that pair's Cohen's kappa), with 95% intervals of "
            "a bootstrap over clusters (a task's items together). The language tests ask "
            "whether a judge's agreement with the reference is the same in every language "
            "(Wald test on the bootstrap covariance, Benjamini-Hochberg q). The ranking below "
            "is by mean score: leniency unless these judges agree with the reference; the card "
            "ranks the judges by agreement with the reference instead, with rank sets "
            "simultaneous over the language. Effective judges: Kish's n / (1 + (n - 1) rho), "
            "rho the mean correlation of the judges' errors." + bias_note)
    return {"id": "card", "title": "Judge card", "note": note, "facts": None,
            "tables": tables, "charts": charts_, "warning": ""}


def bias_heatmap(cid: str, rows: pd.DataFrame, bias: str) -> dict:
    """One bias per judge x language on a scale centred on 0; a cell whose interval excludes 0
    carries a star after its estimate; the tooltip carries the interval and the units."""
    data = _records(rows, ["language", "judge", "estimate", "ci_low", "ci_high", "n_items",
                           "excludes_zero"])
    for row in data:
        row["language"], row["judge"] = str(row["language"]), str(row["judge"])
        row["label"] = ("" if row["estimate"] is None else
                        f"{row['estimate']:.2f}" + ("*" if row["excludes_zero"] else ""))
    extent = float(rows["estimate"].abs().max()) or 1.0
    spec = judge_language_heatmap(
        rows, data, bias, {"scheme": "blueorange", "domain": [-extent, extent], "domainMid": 0},
        {"field": "label", "type": "nominal"}, "units")
    unit = str(rows["unit"].iloc[0])
    return _chart(cid, f"{bias.replace('_', '-').capitalize()} bias by language and judge "
                  f"({unit}; * interval excludes 0)", spec)


def bias_parts(res: Results, name: str) -> tuple[list, list, str]:
    """The biases' tables, one heatmap per bias, and the note's sentence on them (which are
    not computed, and why)."""
    bias = res.csv(f"{name}/card/bias.csv")
    if bias is None:
        return [], [], ""
    bias = bias.assign(excludes_zero=(bias["ci_low"] > 0) | (bias["ci_high"] < 0))
    tables = [] if bias.empty else [
        table(f"{name}.card_bias", "Biases: position, length, self-preference",
              f"{name}/card/bias.csv", bias, BIAS_COLUMNS, PER_LANGUAGE,
              {"language": ["language"], "backbone": ["judge"]})]
    tests = res.csv(f"{name}/card/bias_tests.csv")
    if tests is not None and len(tests):
        tables.append(table(f"{name}.card_bias_tests", "Does a bias differ between languages?",
                            f"{name}/card/bias_tests.csv", tests, BIAS_TEST_COLUMNS, POOLED,
                            {"backbone": ["judge"]}))
    charts_ = [bias_heatmap(f"{name}.card_bias_{kind}", rows, kind)
               for kind, rows in bias[bias["language"] != ALL_LANGUAGES].groupby(
                   "bias", sort=False)]
    absent = [f"{kind.replace('_', '-')} ({reason})" for kind, reason in NOT_COMPUTED.items()
              if kind not in set(bias["bias"])]
    note = (" Biases (docs/methods.md section 11): a cell whose 95% interval excludes 0 is "
            "marked; the bias tests ask whether a judge's bias is the same in every language.")
    if absent:
        note += " Not computed: " + "; ".join(absent) + "."
    return tables, charts_, note
