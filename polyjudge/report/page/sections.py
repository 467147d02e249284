"""The sections of one panel, and the run-wide claims and provenance, as page data.

Each section is ``{id, title, note, facts, tables, charts}``; a section whose files the run did not
make is left out. Charts are Vega-Lite specifications (:mod:`.charts`) over a table's rows.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import charts
from .verdict import verdict, who_wins_where
from .results_folder import (ACCURACY_COLUMNS, BETA_COLUMNS, CLAIM_COLUMNS, CMI_COLUMNS,
                      DECISION_COLUMNS, FLIP_COLUMNS, JUDGE_FILTERS, LANG_BB,
                      LEADERBOARD_COLUMNS, PAIRED_COLUMNS, PAIRS_COLUMNS, PER_LANGUAGE, POOLED,
                      POSITION_COLUMNS, SCORE, TAU_COLUMNS, VERDICT, Results, _facts, _plain,
                      _text_columns, col, rows, table)


def _section(sid, title, note="", facts=None, tables=(), charts_=(), warning="") -> dict:
    return {"id": sid, "title": title, "note": note, "facts": facts,
            "tables": list(tables), "charts": list(charts_), "warning": warning}


def leaderboard_section(res: Results, name: str) -> dict | None:
    source = f"{name}/cbc/leaderboard.csv"
    frame = res.csv(source)
    if frame is None:
        source = f"{name}/cbc/rankings.csv"
        frame = res.csv(source)
    if frame is None:
        return None
    if "rank_cbc" in frame:  # by rank within each language (languages in file order)
        order = {v: i for i, v in enumerate(pd.unique(frame["language"]))}
        frame = frame.assign(_language=frame["language"].map(order)).sort_values(
            ["_language", "rank_cbc", "rank_raw"], kind="stable").drop(columns="_language")
    lb = table(f"{name}.leaderboard", "Leaderboard by language, raw and after CBC", source,
               frame, LEADERBOARD_COLUMNS, PER_LANGUAGE, LANG_BB)
    note = ("Each backbone's mean over tasks in each language before (raw) and after CBC, with "
            "95% task-bootstrap intervals of the mean and of the rank. A backbone's group is the "
            "best rank its rank interval allows: backbones of group 1 cannot be told apart from "
            "the best. Every backbone is scored on the same resampled tasks, so the intervals "
            "respect the pairing. Rows are in CBC rank order within each language; those of the "
            "CBC top set (group 1) are in bold.")
    if "rank_ub_cbc" not in frame.columns:
        note = "Means and ranks before and after CBC (no intervals: no cbc/leaderboard.csv)."
    slope = charts.slopegraph(f"{name}.slopegraph", frame)
    return _section("leaderboard", "Leaderboards", note, tables=[lb], charts_=[slope])


def beta_section(res: Results, name: str) -> tuple[dict | None, dict | None]:
    """The beta heatmap section and the per-task detail data of its cells."""
    beta = res.csv(f"{name}/cbc/beta.csv")
    if beta is None:
        return None, None
    source, bands = f"{name}/cbc/beta.csv", res.csv(f"{name}/cbc/bands.csv")
    if bands is not None:  # beta from beta.csv, its band beside it
        beta = beta.merge(bands.drop(columns="beta"), on=["language", "backbone"], how="left")
        source += " and bands.csv"
    summary = res.json(f"{name}/cbc/summary.json") or {}
    band_info = res.json(f"{name}/cbc/bands.json") or {}
    facts = _facts(f"{name}/cbc/summary.json", [
        ("estimator", summary.get("estimator_note")),
        ("tasks x languages x backbones", "{} x {} x {}".format(
            summary.get("n_tasks"), summary.get("n_languages"), summary.get("n_backbones"))
         if summary else None),
        ("radius (total-SD sigma)", summary.get("radius_total")),
        ("radius (residual-SD sigma)", summary.get("radius_residual")),
        ("largest |beta|", summary.get("max_abs_beta")),
        ("same order in every language after CBC", summary.get("same_order_after_cbc")),
        ("band level", band_info.get("level")),
        ("band critical value", band_info.get("critical_value")),
    ])
    tab = table(f"{name}.beta", "Interaction beta (score units)", source, beta, BETA_COLUMNS,
                PER_LANGUAGE, LANG_BB)
    heat = charts.heatmap(f"{name}.heatmap", beta)
    note = ("beta[language, backbone]: the language x backbone interaction CBC removes. The "
            "tooltip shows the simultaneous band when the panel has `bands`; click a cell for "
            "its raw and calibrated scores over tasks.")
    return (_section("beta", "Interaction beta", note, facts, [tab], [heat],
                     warning=informative_missing_warning(res, name)),
            cell_detail(res, name))


def informative_missing_warning(res: Results, name: str) -> str:
    """One line naming the judges whose missing cells the missingness check flagged."""
    check = res.csv(f"{name}/missing/mnar_check.csv")
    if check is None or "flagged" not in check.columns:
        return ""
    flagged = check.loc[(check["language"].astype(str) == "all")
                        & check["flagged"].astype(str).str.lower().eq("true"), "judge"]
    if flagged.empty:
        return ""
    return ("The missing cells of " + ", ".join(map(str, flagged)) + " depend on the item's "
            "score as the other judges give it (missing/mnar_check.csv): beta and the rankings "
            "leave them out as if missing at random, and are biased by them.")


DETAIL_DECIMALS = 6


def cell_detail(res: Results, name: str) -> dict | None:
    """Per-task scores of every cell (the heatmap's click detail): the raw scores of
    ``tensor.parquet`` rounded to 6 decimals and each cell's beta (raw minus
    ``calibrated_tensor.parquet``), from which the page shows the calibrated scores."""
    raw = res.parquet(f"{name}/tensor.parquet")
    cal = res.parquet(f"{name}/cbc/calibrated_tensor.parquet")
    if raw is None or cal is None:
        return None
    languages = list(pd.unique(raw["language"]))
    backbones = list(pd.unique(raw["backbone"]))
    tasks = [str(t) for t in pd.unique(raw["task"])]
    shape = (len(tasks), len(languages), len(backbones))

    values = raw["score"].to_numpy(dtype=float).reshape(shape)
    calibrated = cal["score"].to_numpy(dtype=float).reshape(shape)
    beta = np.nanmean(values - calibrated, axis=0)  # the same for every task of a cell

    def short(value):  # 6 decimals: the page shows 3; integral scores without ".0"
        value = _plain(round(float(value), DETAIL_DECIMALS))
        return int(value) if value is not None and value.is_integer() else value
    return {"sources": [f"{name}/tensor.parquet", f"{name}/cbc/calibrated_tensor.parquet"],
            "tasks": tasks, "languages": languages, "backbones": backbones,
            "beta": [[_plain(beta[l, b]) for b in range(shape[2])] for l in range(shape[1])],
            "raw": [[[short(values[t, l, b]) for t in range(shape[0])]
                     for b in range(shape[2])] for l in range(shape[1])]}


def heldout_section(res: Results, name: str) -> dict | None:
    tau = res.csv(f"{name}/heldout/tau.csv")
    if tau is None:
        return None
    tables = [table(f"{name}.tau", "Held-out tau by method (Table 2)", f"{name}/heldout/tau.csv",
                    tau, TAU_COLUMNS)]
    paired = res.csv(f"{name}/heldout/paired.csv")
    if paired is not None:
        tables.append(table(f"{name}.paired", "Paired difference to the reference method (CBC)",
                            f"{name}/heldout/paired.csv", paired, PAIRED_COLUMNS))
    note = ("Mean Kendall tau-b between languages of the out-of-bag backbone order, over task "
            "bootstraps; 95% percentile intervals. Pooled over language pairs.")
    return _section("heldout", "Held-out tau", note, tables=tables,
                    charts_=[charts.interval_chart(f"{name}.tau_chart", tau, "method", "mean",
                                                   "ci_low", "ci_high", "held-out tau")])


def decisions_section(res: Results, name: str) -> dict | None:
    source = f"{name}/heldout/decisions.json"
    data = res.json(source)
    if data is None:
        return None
    pooled, per = [], []
    for method, result in data["methods"].items():
        pooled.append({"method": method, "language": "(all)", **result["overall"]})
        per += [{"method": method, "language": lang, **row}
                for lang, row in result.get("per_language", {}).items()]
    tables = [table(f"{name}.decisions", "Decision agreement with the oracle, pooled", source,
                    pd.DataFrame(pooled), DECISION_COLUMNS, POOLED,
                    {"backbone": []}),
              table(f"{name}.decisions_lang", "Decision agreement per language", source,
                    pd.DataFrame(per), DECISION_COLUMNS, PER_LANGUAGE,
                    {"language": ["language"]})]
    return _section("decisions", "Decisions", data.get("note", ""), tables=tables)


def reversal_section(res: Results, name: str) -> dict | None:
    pairs = res.csv(f"{name}/reversal/pairs.csv")
    if pairs is None:
        return None
    summary = res.json(f"{name}/reversal/summary.json") or {}
    test = summary.get("global_test", {})
    facts = _facts(f"{name}/reversal/summary.json", [
        ("pairs", summary.get("n_pairs")), ("reversing pairs", summary.get("n_reversed")),
        ("significant (BH)", summary.get("n_significant")), ("FDR", summary.get("fdr")),
        ("global test: observed reversing pairs", test.get("observed")),
        ("global test: null mean", test.get("null_mean")),
        ("global test: p", test.get("p_value"))])
    tab = table(f"{name}.pairs", "Rank reversal pairs", f"{name}/reversal/pairs.csv", pairs,
                PAIRS_COLUMNS, POOLED, {"backbone": ["backbone_i", "backbone_j"]})
    note = ("A pair reverses when one language ranks backbone i above j and another ranks it "
            "below (witness languages a and b); p is the intersection-union test, q the "
            "Benjamini-Hochberg value. Pooled: each pair is tested over all languages.")
    return _section("reversal", "Rank reversal", note, facts, [tab])


def cmi_section(res: Results, name: str) -> dict | None:
    source = f"{name}/information/cmi.json"
    data = res.json(source)
    if data is None:
        return None
    rows = [{"convention": key, **{k: v for k, v in value.items() if k != "convention"},
             "description": value.get("convention")}
            for key, value in data.items() if isinstance(value, dict) and "debiased" in value]
    tab = table(f"{name}.cmi", "Conditional mutual information I(score; language | task, "
                "backbone), nats", source, pd.DataFrame(rows), CMI_COLUMNS)
    return _section("cmi", "CMI", data.get("statistic", ""), tables=[tab])


def judge_ls_section(res: Results, name: str) -> dict | None:
    specs = [("accuracy", "Accuracy per condition", ACCURACY_COLUMNS,
              ("condition", "strict_accuracy", "strict_ci_low", "strict_ci_high",
               {"subset": "all", "order": "all"})),
             ("flips", "Verdict flips against the reference", FLIP_COLUMNS,
              ("target", "flip_rate", "flip_ci_low", "flip_ci_high", {"subset": "all"})),
             ("position", "Position inconsistency", POSITION_COLUMNS,
              ("condition", "position_inconsistency", "position_ci_low", "position_ci_high",
               {"subset": "all"}))]
    tables, charts_, empty = [], [], []
    for key, title, columns, (x, y, low, high, keep) in specs:
        source = f"{name}/judge_ls/{key}.csv"
        frame = res.csv(source)
        if frame is None:
            continue
        untested = {"flips": ("n_pairs", ["mcnemar_p", "mcnemar_cluster_p"]),
                    "position": ("n", ["first_seat_p", "first_seat_cluster_p",
                                       "position_mcnemar_p"])}.get(key)
        if untested and untested[0] in frame:  # no pair, no test: shown empty, not p = 1
            frame = frame.copy()
            frame.loc[frame[untested[0]] == 0, [c for c in untested[1] if c in frame]] = np.nan
        filters = dict(JUDGE_FILTERS, language=["target"] if key == "flips" else ["condition"])
        tables.append(table(f"{name}.{key}", title, source, frame, columns, PER_LANGUAGE,
                            filters))
        shown = frame
        for column, value in keep.items():
            if column in shown.columns:
                shown = shown[shown[column].astype(str) == value]
        if key == "accuracy" and "n" in shown:
            empty += [f"{j} x {c}" for j, c, n in zip(shown["judge"], shown["condition"],
                                                      shown["n"]) if n == 0]
        shown = shown[shown[y].notna()]  # a condition without usable judgments has no point
        label = next(c["label"] for c in columns if c["key"] == y)  # the table's name
        charts_.append(charts.small_multiples(f"{name}.{key}_chart", shown, x, y, low, high,
                                              f"{title} (all subsets)", label))
    if not tables:
        return None
    warning = ("No usable judgment for " + ", ".join(empty) + " (every verdict was unparseable "
               "or missing): those rates are empty and left out of the charts; the collection's "
               f"logs and collect/status.csv say why (results/{name}/logs/)." if empty else "")
    note = ("Judge-LS per judge and condition (a language or prompting condition), Wilson or "
            "item-clustered intervals as the files say (ci_method). The condition filter "
            "selects a condition; the judge filter a judge.")
    return _section("judge_ls", "Judge-LS", note, tables=tables, charts_=charts_,
                    warning=warning)


def collections_section(res: Results, name: str) -> dict | None:
    tables = []
    for key, title in (("plan", "Plan"), ("forecast", "Forecast to the stopping target"),
                       ("usage", "Actual usage and cost"),
                       ("status", "Call outcomes (parse failures)"),
                       ("stopping", "Rounds of a collection stopped at a precision")):
        source = f"{name}/collect/{key}.csv"
        frame = res.csv(source)
        if frame is not None:
            tables.append(table(f"{name}.collect_{key}", title, source, frame,
                                _text_columns(frame), POOLED,
                                {"backbone": [c for c in ("endpoint",) if c in frame]}))
    if not tables:
        return None
    note = ("The collection's plan beside what the calls used and cost, and each stage's call "
            "outcomes; for a collection with a stopping target (collect.stop), the forecast and "
            "one row per round: items, calls, cost, the widest half-width, the undecided pairs "
            "and why it stopped.")
    return _section("collections", "Collection", note, tables=tables)


def panel_data(res: Results, name: str) -> dict:
    """Every section of panel ``name`` the results hold, with its filter values."""
    sections = [leaderboard_section(res, name)]
    beta, detail = beta_section(res, name)
    sections += [beta, heldout_section(res, name), decisions_section(res, name),
                 reversal_section(res, name), cmi_section(res, name),
                 judge_ls_section(res, name), collections_section(res, name)]
    sections = [s for s in sections if s is not None]
    kind = VERDICT if any(s["id"] == "judge_ls" for s in sections) else SCORE
    values = {"language": [], "backbone": []}
    for section in sections:
        for tab in section["tables"]:
            for filt, columns in tab["filters"].items():
                for column in columns:
                    for row in rows(tab):
                        if row.get(column) is not None and row[column] not in values[filt]:
                            values[filt].append(row[column])
    labels = ({"language": "condition", "backbone": "judge"} if kind == VERDICT else
              {"language": "language", "backbone": "backbone"})
    return {"name": name, "kind": kind, "verdict": verdict(res, name),
            "top": who_wins_where(res, name), "sections": sections, "detail": detail,
            "filters": {k: {"label": labels[k], "values": [str(v) for v in values[k]]}
                        for k in values}}


def claims_table(res: Results) -> dict | None:
    """The claims; each in the results folder of its output (a panel's, the simulation's, or
    one another config makes: not every folder is a panel of this page)."""
    frame = res.csv("claims.csv")
    if frame is None:
        return None
    frame = frame.copy()
    frame["folder"] = [str(p).split("/")[1] if str(p).count("/") >= 2 else ""
                       for p in frame["output"]]
    return table("claims", "Claims: published against reproduced", "claims.csv", frame,
                 CLAIM_COLUMNS, POOLED, {"status": ["status"], "cpanel": ["folder"]})


MANIFESTS = ("inputs.json", "judge_ls/inputs.json")
"""Where a panel's input files are listed: ingest's (score panels) or judge_ls's (verdicts)."""


def _manifest(res: Results, name: str) -> tuple[str | None, dict]:
    """The file listing panel ``name``'s inputs and its content (an older results folder has
    them in cbc/summary.json only)."""
    for relative in (*MANIFESTS, "cbc/summary.json"):
        found = res.json(f"{name}/{relative}")
        if found is not None:
            if relative.endswith("summary.json"):
                found = {"files": found.get("inputs")}
            return f"{name}/{relative}", found
    return None, {}


def provenance(res: Results, panels, version: str, config_sha256: str | None) -> dict:
    """Every input file of every panel with its SHA-256 (a simulated panel: its seed)."""
    rows, sources = [], []
    for name in panels:
        source, manifest = _manifest(res, name)
        if source is not None and (manifest.get("files") or manifest.get("simulated")):
            sources.append(source)
        for input_name, entry in (manifest.get("files") or {}).items():
            # a source of many files (folder, glob, list, template, Hive, Inspect logs) lists
            # each file with its checksum: one row per file
            for file in entry if isinstance(entry, list) else [entry]:
                rows.append({"panel": name, "input": input_name, "path": file.get("path"),
                             "sha256": file.get("sha256")})
        made = manifest.get("simulated")
        if made:
            rows.append({"panel": name, "input": f"none: simulated by rule {made.get('rule')} "
                         f"with seed {made.get('seed')}", "path": None, "sha256": None})
    columns = [col("panel", type="text"), col("input", type="text"), col("path", type="text"),
               col("sha256", type="text")]
    return {"version": version, "config_sha256": config_sha256,
            "inputs": table("inputs", "Input files and checksums",
                            ", ".join(sources) or "no inputs.json in the results",
                            pd.DataFrame(rows, columns=["panel", "input", "path", "sha256"]),
                            columns, POOLED)}
