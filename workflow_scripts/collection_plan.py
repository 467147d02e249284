"""The cost plan of a collection, written before any call. Rule collection_plan_part: the calls,
estimated tokens and cost of one endpoint (translations estimated as long as their source,
translated conditions judged on the reference texts as stand-ins); rule collection_plan: the
parts stacked with a total row."""
import logging

import pandas as pd

from judgecal.judges import Endpoint, load_prompt, plan_table, protocols
from judgecal.scripting import run_step, write_csv

log = logging.getLogger("judgecal.collect")


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


def main(smk):
    cpt = smk.config["collection"]["chars_per_token"]
    if smk.rule == "collection_plan_part":
        endpoint = Endpoint.from_config(smk.wildcards.endpoint, smk.params.endpoint)
        plan = plan_table(endpoint_calls(smk, endpoint), {endpoint.name: endpoint}, cpt)
        write_csv(plan[plan["endpoint"] != "total"], smk.output.plan)
        return
    parts = pd.concat([pd.read_csv(p) for p in smk.input], ignore_index=True)
    total = pd.DataFrame([{"endpoint": "total", "model": "", "stage": "all",
                           **{c: parts[c].sum() for c in ("calls", "input_tokens",
                                                          "output_tokens", "cost_usd")}}])
    plan = pd.concat([parts, total], ignore_index=True)
    log.info("plan of %s:\n%s", smk.wildcards.panel, plan.to_string())
    limit = smk.config["collection"]["max_cost"]
    if limit is not None and plan["cost_usd"].iloc[-1] > limit:
        log.warning("estimated cost $%.2f is above max_cost $%.2f: the run will stop there",
                    plan["cost_usd"].iloc[-1], limit)
    write_csv(plan, smk.output.plan)


run_step(main, snakemake)
