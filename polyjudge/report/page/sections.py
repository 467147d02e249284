"""The sections of one panel, and the run-wide claims and provenance, as page data.

Each section is ``{id, title, note, facts, tables, charts}``; a section whose files the run did not
make is left out. Charts are Vega-Lite specifications (:mod:`.charts`) over a table's rows.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analyses.stopping.targets import MIN_INFORMATIVE
from . import charts
from .card import card_section, card_sentences
from .labels import labels_section
from .meaning import ranked_quantity, spread_sentence, unusable_outcomes
from .verdict import verdict, who_wins_where
from .results_folder import (ACCURACY_COLUMNS, BETA_COLUMNS, CLAIM_COLUMNS, CMI_COLUMNS,
                      DECISION_COLUMNS, FLIP_COLUMNS, JUDGE_FILTERS, LANG_BB,
                      LEADERBOARD_COLUMNS, PAIRED_COLUMNS, PAIRS_COLUMNS, PER_LANGUAGE, POOLED,
                      POSITION_COLUMNS, SCORE, TAU_COLUMNS, VERDICT, Results, _facts, _plain,
                      _text_columns, col, rows, table)


def _section(sid, title, note="", facts=None, tables=(), charts_=(), warning="") -> dict:
    """A section; a chart with no data is left out (it would draw empty axes)."""
    charts_ = [c for c in charts_ if c["spec"]["data"]["values"]]
    return {"id": sid, "title": title, "note": note, "facts": facts,
            "tables": list(tables), "charts": charts_, "warning": warning}


def same_order(summary: dict) -> str:
    """The sentence on CBC's common order, when ``cbc/summary.json`` says every language has it:
    true by construction, not a finding."""
    if not summary.get("same_order_after_cbc"):
        return ""
    return (" After CBC every language ranks the backbones in the same order, that of their "
            "means over languages: removing beta leaves the cell means additive (a language "
            "effect plus a backbone effect), so this holds by construction and is not a "
            "finding.")


def outside_range(summary: dict) -> str:
    """The warning on calibrated scores outside the score range (``cbc/summary.json``'s
    ``calibrated_outside_range``), or ""."""
    outside = summary.get("calibrated_outside_range") or {}
    if not outside.get("n_outside"):
        return ""
    low, high = (f"{v:g}" for v in outside["score_range"])
    return (f"{outside['n_outside']:,} of the {outside['n_scores']:,} calibrated task-level "
            f"scores lie outside the score range [{low}, {high}] ({outside['n_below']:,} below "
            f"{low}, {outside['n_above']:,} above {high}): a calibrated score is the raw score "
            "minus its cell's beta, kept as it is (not clipped), so near a bound it can cross "
            "it; read it as a corrected position on the scale, not as a score a judge gave. "
            "The task-by-task detail of a cell flags them.")


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
    meaning = ranked_quantity(res, name)
    ranks = f" (first: {meaning['top']}, {meaning['means']})" if meaning else ""
    lb = table(f"{name}.leaderboard", f"Leaderboard by language, raw and after CBC{ranks}",
               source, frame, LEADERBOARD_COLUMNS, PER_LANGUAGE, LANG_BB)
    sets = ("The rank set is simultaneous over the language: all of a language's sets hold "
            "their true ranks together with 95% confidence (Mogstad, Romano, Shaikh and Wilke "
            "2024; coverage measured by simulation in docs/methods.md 10.8). The rank interval "
            "beside it is marginal: it holds its own backbone's rank, but several read "
            "together hold less often when backbones are close. "
            if charts.rank_set_columns(frame) == ("rank set (simultaneous)", "_simultaneous")
            else "The rank intervals are marginal: each holds its own backbone's rank, but "
            "several read together hold less often when backbones are close (this file has no "
            "simultaneous rank sets). ")
    note = ("Each backbone's mean over tasks in each language before (raw) and after CBC, with "
            "95% task-bootstrap intervals of the mean and of the rank. " + sets +
            "A backbone's group is the best rank its marginal interval allows: backbones of "
            "group 1 cannot be told apart from the best. Every backbone is scored on the same "
            "resampled tasks, so sets and intervals respect the pairing. Rows are in CBC rank "
            "order within each language; those of the CBC top set (group 1) are in bold.")
    if "rank_ub_cbc" not in frame.columns:
        note = "Means and ranks before and after CBC (no intervals: no cbc/leaderboard.csv)."
    note += same_order(res.json(f"{name}/cbc/summary.json") or {})
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
        ("same order in every language after CBC (by construction)"
         if summary.get("same_order_after_cbc") else "same order in every language after CBC",
         summary.get("same_order_after_cbc")),
        ("calibrated scores outside the score range",
         "{n_outside:,} of {n_scores:,}".format(**summary["calibrated_outside_range"])
         if summary.get("calibrated_outside_range") else None),
        ("band level", band_info.get("level")),
        ("band critical value", band_info.get("critical_value")),
    ])
    tab = table(f"{name}.beta", "Interaction beta (score units)", source, beta, BETA_COLUMNS,
                PER_LANGUAGE, LANG_BB)
    heat = charts.heatmap(f"{name}.heatmap", beta)
    note = ("beta[language, backbone]: the language x backbone interaction CBC removes. "
            + (spread_sentence(summary["n_languages"], summary["n_backbones"],
                               summary.get("estimator")) + " "
               if "n_languages" in summary else "")
            + "The tooltip shows the simultaneous band when the panel has `bands`; click a "
            "cell for its raw and calibrated scores over tasks.")
    detail = cell_detail(res, name)
    if detail is not None and summary.get("calibrated_outside_range"):
        detail["score_range"] = summary["calibrated_outside_range"]["score_range"]
    warnings = [w for w in (outside_range(summary), informative_missing_warning(res, name))
                if w]
    return (_section("beta", "Interaction beta", note, facts, [tab], [heat],
                     " ".join(warnings)), detail)


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
            "bootstraps, pooled over language pairs. Beside it, the replicate spread: the 2.5 "
            "and 97.5 percentiles of the replicates' taus. It is not a confidence interval: in "
            "simulations with a planted truth it held the noise-free tau in 85-98% of panels "
            "raw and in at most 9% after CBC, and no bootstrap interval tried held it in "
            "90-97% of panels everywhere (docs/methods.md section 2). The chart draws the "
            "spread as a line.")
    return _section("heldout", "Held-out tau", note, tables=tables,
                    charts_=[charts.interval_chart(f"{name}.tau_chart", tau, "method", "mean",
                                                   "spread_low", "spread_high",
                                                   "held-out tau (line: replicate spread)")])


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
                    "position": ("n", ["first_seat_p_unclustered", "first_seat_cluster_p",
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
            empty += [(j, c) for j, c, n in zip(shown["judge"], shown["condition"], shown["n"])
                      if n == 0]
        shown = shown[shown[y].notna()]  # a condition without usable judgments has no point
        label = next(c["label"] for c in columns if c["key"] == y)  # the table's name
        charts_.append(charts.small_multiples(f"{name}.{key}_chart", shown, x, y, low, high,
                                              f"{title} (all subsets)", label))
    if not tables:
        return None
    why = unusable_outcomes(res, name, empty) or "every verdict was unparseable or missing"
    warning = ("No usable judgment for " + ", ".join(f"{j} x {c}" for j, c in empty)
               + f" ({why}): those rates are empty and left out of the charts; the "
               f"collection's logs and collect/status.csv say why (results/{name}/logs/)."
               if empty else "")
    note = ("Judge-LS per judge and condition (a language or prompting condition), Wilson or "
            "item-clustered intervals as the files say (ci_method). The condition filter "
            "selects a condition; the judge filter a judge.")
    return _section("judge_ls", "Judge-LS", note, tables=tables, charts_=charts_,
                    warning=warning)


NO_INTERVAL_YET = {"max_beta_halfwidth": charts.NO_INTERVAL, "sequence_low": charts.NO_INTERVAL,
                   "sequence_high": charts.NO_INTERVAL, "halfwidth": charts.NO_INTERVAL}
"""Collection columns whose empty (infinite) cells mean the sequence has no interval yet."""
INTERVAL_LABELS = {
    "sequence": "sequence_low / sequence_high: the confidence sequence at the stop, valid at "
                "any stopping time.",
    "fixed_n_band": "fixed_n_band_low / fixed_n_band_high: the task-bootstrap band of the "
                    "items collected, valid for a sample size fixed in advance only (not at a "
                    "data-dependent stop), for comparison."}
"""intervals.csv's label columns, the same text on every row: said once, in the table's note."""


def collections_section(res: Results, name: str) -> dict | None:
    tables, charts_ = [], []
    for key, title in (("plan", "Plan"), ("forecast", "Forecast to the stopping target"),
                       ("usage", "Actual usage and cost"),
                       ("status", "Call outcomes (parse failures)"),
                       ("stopping", "Rounds of a collection stopped at a precision"),
                       ("intervals", "Intervals at the stop")):
        source = f"{name}/collect/{key}.csv"
        frame = res.csv(source)
        if frame is None:
            continue
        columns = [c for c in _text_columns(frame) if c["key"] not in INTERVAL_LABELS]
        if key in ("stopping", "intervals"):
            columns = [dict(c, missing=NO_INTERVAL_YET[c["key"]]) if c["key"] in NO_INTERVAL_YET
                       else c for c in columns]
        note = (" ".join(INTERVAL_LABELS.values()) if key == "intervals" else "")
        tables.append(table(f"{name}.collect_{key}", title, source, frame, columns, POOLED,
                            {"backbone": [c for c in ("endpoint",) if c in frame]}, note))
        if key == "stopping" and len(frame):
            charts_.append(charts.stopping_chart(f"{name}.stopping_chart", frame))
    if not tables:
        return None
    note = ("The collection's plan beside what the calls used and cost, and each stage's call "
            "outcomes; for a collection with a stopping target (collect.stop), the forecast, "
            "one row per round (items, calls, cost, the widest half-width, the undecided pairs "
            "and why it stopped) and each quantity's confidence sequence at the stop. A round "
            "says \"no interval yet\" while a sequence cannot claim one: the asymptotic "
            f"sequence needs {MIN_INFORMATIVE} items with a nonzero contrast (docs/methods.md "
            "10.7).")
    return _section("collections", "Collection", note, tables=tables, charts_=charts_)


def skipped_section(res: Results, name: str) -> dict | None:
    """One line per analysis of panel ``name`` that its shape did not allow, with why, and
    the items the band left out (``incomplete_items: drop``)."""
    found = sorted(res.skipped(name).items())
    dropped = (res.json(f"{name}/cbc/bands.json") or {}).get("dropped_items")
    if dropped:
        found.append(("bands", f"left out {len(dropped)} item(s) with a missing score "
                               f"(incomplete_items: drop): {', '.join(dropped)}"))
    if not found:
        return None
    return _section("skipped", "Analyses not run on this panel, or on fewer items",
                    "The panel's shape (judges, languages, tasks, repeated runs) does not allow "
                    "the analyses listed here; the others ran. The logs give the same reasons.",
                    _facts(f"{name}/shape.json", found))


def panel_data(res: Results, name: str) -> dict:
    """Every section of panel ``name`` the results hold, with its filter values."""
    sections = [card_section(res, name), labels_section(res, name),
                skipped_section(res, name), leaderboard_section(res, name)]
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
    meaning = ranked_quantity(res, name)
    return {"name": name, "kind": kind, "ranked": meaning["text"] if meaning else "",
            "verdict": card_sentences(res, name) + verdict(res, name),
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
