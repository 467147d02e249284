"""The plan's forecast for a collection with a stopping target: the full design's calls and cost
(from plan.csv) beside the calls and cost expected to reach the target (median and 90th
percentile over simulated collections), and for a `decisions` target also when settled judges
are retired; every cost at list price and at the endpoints' batch prices, and with batch
endpoints the longest wait (a completion window per round). From the pilot
round's scores or an earlier panel's (`stop.forecast_from`). Calls nothing: without a pilot or
an earlier panel it says how to get one."""
import logging

import numpy as np
import pandas as pd

from polyjudge.analyses.stopping import collection_target, forecast, round_ends
from polyjudge.data import io
from polyjudge.judges import load_prompt, protocols, rounds
from polyjudge.judges.plan import readable_cost
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.collect")
COSTS = ["cost_usd", "batch_cost_usd"]
COLUMNS = ["panel", "scenario", "items", "calls", *COSTS, "fraction_of_design", "rounds",
           "batch_wait_hours", "source", "target", "note"]


def source_scores(smk, order, languages, judges):
    """(scores, description) of what the forecast reads, or (None, why not)."""
    if "pilot" in smk.input.keys():
        pilot = pd.read_parquet(smk.input.pilot)
        drawn = order[:len(pilot[["subset", "item"]].drop_duplicates())]
        return (rounds.margin_array(pilot, drawn, languages, judges),
                f"pilot round ({len(drawn)} items)")
    if "source" in smk.input.keys():
        panel = io.read_panel(smk.input.source)
        if panel.values.shape[1:] != (len(languages), len(judges)):
            raise ValueError(f"stop.forecast_from {smk.input.source}: {panel.values.shape[1]} "
                             f"languages x {panel.values.shape[2]} backbones, but the collection "
                             f"has {len(languages)} x {len(judges)}")
        source = smk.params.panel["collect"]["stop"]["forecast_from"]
        return panel.values, f"{source} ({panel.values.shape[0]} items)"
    return None, "no pilot yet"


def per_judge(plan: pd.DataFrame, judges, n_items: int) -> dict:
    """Calls and each cost of one item of each judge (the full design's, spread over its items)."""
    rows = plan.groupby("endpoint")[["calls", *COSTS]].sum().reindex(judges).fillna(0.0)
    per_item = {c: rows[c].to_numpy(float) / n_items for c in COSTS}
    return {"requests": rows["calls"].to_numpy(float) / n_items, **per_item}


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The table as people read it (and as plan.csv is written): whole items, calls and rounds
    (a median over simulated collections can fall between two), costs to 4 significant digits
    but never coarser than cents, the fraction to 4 decimals; a row without a forecast keeps
    its empty cells."""
    whole = {c: table[c].round().astype("Int64") for c in ("items", "calls", "rounds")}
    return table.assign(**whole, **{c: table[c].map(readable_cost) for c in COSTS},
                        fraction_of_design=table["fraction_of_design"].round(4),
                        batch_wait_hours=table["batch_wait_hours"].round(2))


def main(smk):
    name, panel = smk.wildcards.panel, smk.params.panel
    collect = panel["collect"]
    stop = collect["stop"]
    items = protocols.read_items(smk.input.item_table, "pointwise", collect["columns"],
                                 collect["n_items"])
    if panel["languages"]:
        items = items[items["language"].isin(panel["languages"])]
    languages = panel["languages"] or list(pd.unique(items["language"]))
    order = rounds.item_order(items, stop["seed"])
    plan = pd.read_csv(smk.input.plan)
    plan = plan[plan["stage"] == protocols.POINTWISE]
    item_costs = per_judge(plan, collect["judges"], len(order))
    prompt = load_prompt(smk.input.prompt, protocols.PROMPT_FIELDS["pointwise"])
    target = collection_target(stop, rounds.margin_range(panel["score_range"], prompt.answer),
                               len(order))
    ends = round_ends(target.design_items, target.round_items, target.min_items)
    target_text = rounds.describe_target(target)
    rows = [{"scenario": "full design", "items": len(order), "calls": int(plan["calls"].sum()),
             **{c: float(plan[c].sum()) for c in COSTS}, "fraction_of_design": 1.0,
             "rounds": len(ends), "source": "plan.csv"}]
    scores, source = source_scores(smk, order, languages, collect["judges"])
    if scores is None:
        first = int(ends[0])
        note = (f"collect the pilot round first ({first} items, "
                f"{first * item_costs['requests'].sum():.0f} calls, about "
                f"${first * item_costs['cost_usd'].sum():.2f}): snakemake "
                f"results/{name}/collect/pilot/calls.parquet, then the plan again; or set "
                "stop.forecast_from to an earlier panel")
        rows.append({"scenario": "to the target", "source": source, "note": note})
    else:
        result = forecast(scores, target, len(order), n_sims=target.forecast_orders,
                          seed=target.seed, per_judge_item=item_costs)
        note = (f"{result['share_not_met']:.0%} of {result['n_sims']} simulated collections did "
                "not meet the target within max_items (they count at max_items)")
        modes = [("", "to the target")]
        if "retire_median_items" in result:
            modes.append(("retire_", "to the target, retiring settled judges"))
        for mode, label in modes:
            for quantile, words in (("median", "median"), ("p90", "90th percentile")):
                n = result[f"{mode}{quantile}_items"]
                rows.append({"scenario": f"{label}, {words}", "items": n,
                             "calls": round(result[f"{mode}{quantile}_requests"]),
                             **{c: result[f"{mode}{quantile}_{c}"] for c in COSTS},
                             "fraction_of_design": result[f"{mode}{quantile}_requests"]
                             / rows[0]["calls"],
                             "rounds": int(np.searchsorted(ends, n) + 1), "source": source,
                             "note": note})
    table = pd.DataFrame(rows).assign(panel=name, target=target_text).reindex(columns=COLUMNS)
    # with batch endpoints each round waits up to the completion window (plan.csv's longest)
    window = float(plan["batch_wait_hours"].max()) if len(plan) else 0.0
    table["batch_wait_hours"] = table["rounds"] * window
    table = readable(table)
    log.info("forecast of %s (%s):\n%s", name, target_text,
             table.drop(columns=["panel", "target", "source", "note"]).to_string(index=False))
    write_csv(table, smk.output.forecast)


run_step(main, snakemake)
