"""The plan's forecast for a collection with a stopping target: the full design's calls and cost
(from plan.csv) beside the calls and cost expected to reach the target (median and 90th
percentile over simulated collections), from the pilot round's scores or an earlier panel's
(`stop.forecast_from`). Calls nothing: without a pilot or an earlier panel it says how to get one."""
import logging

import pandas as pd

from polyjudge.analyses.stopping import forecast, round_ends
from polyjudge.data import io
from polyjudge.judges import load_prompt, protocols, rounds
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.collect")
COLUMNS = ["panel", "scenario", "items", "calls", "cost_usd", "fraction_of_design", "source",
           "target", "note"]


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
    design_calls, design_cost = int(plan["calls"].sum()), float(plan["cost_usd"].sum())
    per_item_calls, per_item_cost = design_calls / len(order), design_cost / len(order)
    target_text = rounds.describe_target(stop)
    rows = [{"scenario": "full design", "items": len(order), "calls": design_calls,
             "cost_usd": design_cost, "fraction_of_design": 1.0, "source": "plan.csv"}]
    scores, source = source_scores(smk, order, languages, collect["judges"])
    if scores is None:
        first = int(round_ends(rounds.design_items(len(order), stop), stop["round_items"],
                               stop["min_items"])[0])
        note = (f"collect the pilot round first ({first} items, {first * per_item_calls:.0f} "
                f"calls, about ${first * per_item_cost:.2f}): snakemake "
                f"results/{name}/collect/pilot/calls.parquet, then the plan again; or set "
                "stop.forecast_from to an earlier panel")
        rows.append({"scenario": "to the target", "source": source, "note": note})
    else:
        answer = load_prompt(smk.input.prompt, protocols.PROMPT_FIELDS["pointwise"]).answer
        target = rounds.stopping_target(stop, panel["score_range"], len(order), answer)
        result = forecast(scores, target, len(order), n_sims=stop["forecast_orders"],
                          seed=stop["seed"])
        note = (f"{result['share_not_met']:.0%} of {result['n_sims']} simulated collections did "
                "not meet the target within max_items (they count at max_items)")
        for label, key in (("to the target, median", "median_items"),
                           ("to the target, 90th percentile", "p90_items")):
            n = result[key]
            rows.append({"scenario": label, "items": n, "calls": round(n * per_item_calls),
                         "cost_usd": n * per_item_cost, "fraction_of_design": n / len(order),
                         "source": source, "note": note})
    table = pd.DataFrame(rows).assign(panel=name, target=target_text).reindex(columns=COLUMNS)
    log.info("forecast of %s (%s):\n%s", name, target_text,
             table.drop(columns=["panel", "target"]).to_string(index=False))
    write_csv(table, smk.output.forecast)


run_step(main, snakemake)
