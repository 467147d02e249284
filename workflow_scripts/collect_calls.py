"""One shard of one collection stage (translate, judge_pairwise or judge_pointwise): build the
shard's calls, make those not in the cache, write one row per call (meta, raw reply, parsed value,
status, usage)."""
import logging

import pandas as pd

from polyjudge.judges import Endpoint, load_prompt, protocols
from polyjudge.judges.runner import EndpointError, Stopped
from polyjudge.judges.stages import run_shard
from polyjudge.scripting import run_step, write_parquet

log = logging.getLogger("polyjudge.collect")


def main(smk):
    panel = smk.params.panel
    collect = panel["collect"]
    settings = smk.config["collection"]
    cpt = settings["chars_per_token"]
    stage, shard = smk.rule, int(smk.wildcards.shard)
    name = dict(smk.wildcards).get("judge") or collect["translator"]
    endpoint = Endpoint.from_config(name, smk.params.endpoint)
    kind = {"judge_pairwise": "pairwise", "judge_pointwise": "pointwise"}.get(stage)
    if stage == "translate":
        kind = collect["conditions"][smk.wildcards.condition]["kind"]
    prompt = load_prompt(smk.input.prompt, protocols.PROMPT_FIELDS[kind])
    items = protocols.read_items(smk.input.item_table, "pointwise" if kind == "pointwise" else
                                 "pairwise", collect["columns"], collect["n_items"])
    if kind == "pointwise" and panel["languages"]:
        items = items[items["language"].isin(panel["languages"])]
    items = protocols.shard_items(items, collect["shards"], shard)
    if stage == "translate":
        condition = smk.wildcards.condition
        calls = protocols.translation_calls(items, condition,
                                            collect["conditions"][condition]["language"],
                                            endpoint, prompt, cpt)
    elif stage == "judge_pairwise":
        texts = {c: pd.read_parquet(smk.input[c]) for c in collect["conditions"]}
        calls = protocols.pairwise_calls(items, texts, panel["reference"], collect["tie_probes"],
                                         endpoint, prompt, cpt)
    else:
        calls = protocols.pointwise_calls(items, endpoint, prompt, cpt)
    label = f"{smk.wildcards.panel} {stage} {name} shard {shard + 1}/{collect['shards']}"
    try:
        table = run_shard(calls, endpoint, prompt, settings, smk.wildcards.panel, stage, shard,
                          label)
    except (Stopped, EndpointError) as stop:
        raise ValueError(str(stop)) from None
    write_parquet(table, smk.output.calls)


run_step(main, snakemake)
