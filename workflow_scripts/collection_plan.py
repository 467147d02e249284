"""The cost plan of a collection, written before any call. Rule collection_plan_part: the calls,
estimated tokens and cost of one endpoint (translations estimated as long as their source,
translated conditions judged on the reference texts as stand-ins); rule collection_plan: the
parts stacked (plan.csv, data rows only) and their totals apart (plan_total.csv); costs rounded
for reading (polyjudge.judges.readable_cost)."""
import logging

import pandas as pd

from polyjudge.judges import (Endpoint, load_prompt, plan_table, plan_totals, protocols,
                             readable_cost)
from polyjudge.judges.plan import COST_COLUMNS
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.collect")


def endpoint_calls(smk, endpoint):
    panel = smk.params.panel
    collect = panel["collect"]
    cpt = smk.config["collection"]["chars_per_token"]
    prompt = lambda kind: load_prompt(smk.input[f"prompt_{kind}"], protocols.PROMPT_FIELDS[kind])
    calls = []
    if panel["kind"] == "pairwise_verdicts":
        items = protocols.read_items(smk.input.item_table, "pairwise", collect["columns"],
                                     collect["n_items"])
        if endpoint.name == collect["translator"]:
            for condition, spec in collect["conditions"].items():
                calls += protocols.translation_calls(items, condition, spec["language"],
                                                     endpoint, prompt(spec["kind"]), cpt)
        if endpoint.name in collect["judges"]:
            english = protocols.reference_texts(items)
            calls += protocols.pairwise_calls(
                items, {c: english for c in collect["conditions"]}, panel["reference"],
                collect["tie_probes"], endpoint, prompt("pairwise"), cpt)
    else:
        items = protocols.read_items(smk.input.item_table, "pointwise", collect["columns"],
                                     collect["n_items"])
        if panel["languages"]:
            items = items[items["language"].isin(panel["languages"])]
        calls = protocols.pointwise_calls(items, endpoint, prompt("pointwise"), cpt)
    return calls


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{c: frame[c].map(readable_cost) for c in COST_COLUMNS})


def main(smk):
    cpt = smk.config["collection"]["chars_per_token"]
    if smk.rule == "collection_plan_part":
        endpoint = Endpoint.from_config(smk.wildcards.endpoint, smk.params.endpoint)
        plan = plan_table(endpoint_calls(smk, endpoint), {endpoint.name: endpoint}, cpt,
                          smk.params.panel["collect"]["shards"])
        write_csv(readable(plan), smk.output.plan)
        return
    plan = pd.concat([pd.read_csv(p) for p in smk.input], ignore_index=True)
    total = plan_totals(plan)
    log.info("plan of %s:\n%s\ntotal:\n%s", smk.wildcards.panel, plan.to_string(index=False),
             readable(total).to_string(index=False))
    limit = smk.config["collection"]["max_cost"]
    if limit is not None and total["cost_usd"].iloc[0] > limit:
        log.warning("estimated cost $%.2f is above max_cost $%.2f: the run will stop there",
                    total["cost_usd"].iloc[0], limit)
    write_csv(readable(plan), smk.output.plan)
    write_csv(readable(total), smk.output.total)


run_step(main, snakemake)
