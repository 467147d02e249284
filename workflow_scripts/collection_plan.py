"""The cost plan of one collection, written before any call: calls, estimated tokens and cost
per endpoint and stage (translated conditions estimated from the reference texts)."""
import logging

from judgecal.judges import Endpoint, load_prompt, plan_table, protocols
from judgecal.scripting import run_step, write_csv

log = logging.getLogger("judgecal.collect")


def main(smk):
    panel = smk.params.panel
    collect = panel["collect"]
    cpt = smk.config["collection"]["chars_per_token"]
    endpoints = {n: Endpoint.from_config(n, s) for n, s in smk.params.endpoints.items()}
    prompt = lambda kind: load_prompt(smk.input[f"prompt_{kind}"], protocols.PROMPT_FIELDS[kind])
    calls = []
    if panel["kind"] == "pairwise_verdicts":
        items = protocols.read_items(smk.input.item_table, "pairwise", collect["columns"],
                                     collect["n_items"])
        for condition, spec in collect["conditions"].items():
            calls += protocols.translation_calls(items, condition, spec["language"],
                                                 endpoints[collect["translator"]],
                                                 prompt(spec["kind"]), cpt)
        english = protocols.reference_texts(items)  # stands in for the translations
        for judge in collect["judges"]:
            calls += protocols.pairwise_calls(
                items, {c: english for c in collect["conditions"]}, panel["reference"],
                collect["tie_probes"], endpoints[judge], prompt("pairwise"), cpt)
    else:
        items = protocols.read_items(smk.input.item_table, "pointwise", collect["columns"],
                                     collect["n_items"])
        if panel["languages"]:
            items = items[items["language"].isin(panel["languages"])]
        for judge in collect["judges"]:
            calls += protocols.pointwise_calls(items, endpoints[judge], prompt("pointwise"), cpt)
    plan = plan_table(calls, endpoints, cpt)
    log.info("plan of %s (%d items):\n%s", smk.wildcards.panel, len(items), plan.to_string())
    limit = smk.config["collection"]["max_cost"]
    total = float(plan["cost_usd"].iloc[-1])
    if limit is not None and total > limit:
        log.warning("estimated cost $%.2f is above max_cost $%.2f: the run will stop there",
                    total, limit)
    write_csv(plan, smk.output.plan)


run_step(main, snakemake)
