"""A pointwise collection with a stopping target (`collect.stop`): rounds of items in the seeded
order, each with its whole language x judge block, every judge and shard called at once (an
endpoint with `batch` gets one batch job per round); after each round the confidence sequences
decide whether to stop, unless a judge's missing verdicts depend on the item's score (then only
with `stop.accept_informative_missing`); with `stop.retire` a judge whose every tested pair is
settled is not called on later items. Rule judge_pointwise_rounds writes every call,
collect/stopping.csv (one row per round) and the intervals at the stop; rule
judge_pointwise_pilot collects the first round only (for the plan's forecast)."""
import logging

import pandas as pd

from polyjudge.analyses.missingness import flagged_judges, informative_missing_check
from polyjudge.analyses.stopping import collection_target, round_ends, stopping_status
from polyjudge.analyses.stopping.targets import needed_judges
from polyjudge.judges import Endpoint, load_prompt, protocols, rounds
from polyjudge.judges.cache import CallCache
from polyjudge.judges.runner import EndpointError, RetryPolicy, Stopped
from polyjudge.judges.sending import CallSet, run_call_sets
from polyjudge.judges.stages import shared_budget
from polyjudge.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("polyjudge.collect")


def main(smk):
    name, panel = smk.wildcards.panel, smk.params.panel
    collect, settings = panel["collect"], smk.config["collection"]
    stop, shards, cpt = collect["stop"], collect["shards"], settings["chars_per_token"]
    prompt = load_prompt(smk.input.prompt, protocols.PROMPT_FIELDS["pointwise"])
    items = protocols.read_items(smk.input.item_table, "pointwise", collect["columns"],
                                 collect["n_items"])
    if panel["languages"]:
        items = items[items["language"].isin(panel["languages"])]
    languages = panel["languages"] or list(pd.unique(items["language"]))
    judges = [Endpoint.from_config(j, smk.params.endpoints[j]) for j in collect["judges"]]
    order = rounds.item_order(items, stop["seed"])
    target = collection_target(stop, rounds.margin_range(panel["score_range"], prompt.answer),
                               len(order))
    ends = [int(e) for e in round_ends(target.design_items, target.round_items,
                                       target.min_items)]
    if smk.rule == "judge_pointwise_pilot":
        ends = ends[:1]
    log.info("%s: rounds of %d items (the first %d; at most %d of %d) until %s", name,
             target.round_items, ends[0],
             ends[-1], len(order), rounds.describe_target(target))
    budget = shared_budget(settings, name, judges)
    caches = {(j.name, k): CallCache.for_shard(settings["cache_dir"], name, protocols.POINTWISE,
                                               j.name, k) for j in judges for k in range(shards)}
    ids = rounds.item_ids(items)
    tables, rows, start, status, active = [], [], 0, None, list(collect["judges"])
    for number, end in enumerate(ends, 1):
        block = items[ids.isin(order[start:end])].reset_index(drop=True)
        sets, built = [], []
        for judge in (j for j in judges if j.name in active):
            parts = 1 if judge.batch else min(shards, end - start)  # a batch job per round
            for k in range(parts):
                calls = protocols.pointwise_calls(protocols.shard_items(block, parts, k), judge,
                                                  prompt, cpt)
                built.append(calls)
                part = "batch" if judge.batch else f"shard {k + 1}/{shards}"
                sets.append(CallSet(protocols.sendable(calls), judge, caches[judge.name, k],
                                    prompt.answer, budget, f"{name} round {number} {judge.name} "
                                    f"{part}", k))
        try:
            results = run_call_sets(sets, policy=RetryPolicy(**settings["retries"]),
                                    progress_interval=settings["progress_interval"])
        except (Stopped, EndpointError) as stopped:
            raise ValueError(f"{stopped} (round {number}; the rounds before it are cached)"
                             ) from None
        for calls, result in zip(built, results):
            tables.append(protocols.calls_table(calls, {r.key: r for r in result})
                          .assign(round=number))
        table = pd.concat(tables, ignore_index=True)
        scores = rounds.margin_array(table, order[:end], languages, collect["judges"])
        status = stopping_status(scores, target, languages, collect["judges"])
        check = smk.config["missing"]
        flagged = flagged_judges(informative_missing_check(
            scores, languages, collect["judges"], check["check_alpha"],
            check["check_permutations"], check["seed"]))
        status = rounds.guard_informative_missing(status, flagged,
                                                  stop["accept_informative_missing"])
        rows.append(rounds.round_row(number, end, table, status, active, target, flagged))
        log.info("round %d: %d items, %d calls, $%.4f, widest beta half-width %s, %d pair(s) "
                 "undecided: %s", number, end, rows[-1]["calls"], rows[-1]["cost_usd"],
                 rounds.halfwidth_text(rows[-1]["max_beta_halfwidth"]),
                 rows[-1]["undecided_pairs"],
                 "stop (" + status.reason + ")" if status.stop else "go on: " + status.reason)
        start = end
        if status.stop:
            break
        if target.retire:
            still = needed_judges(status.cells, active)
            if still != active:
                log.info("round %d: every pair of %s is settled: not called on later items",
                         number, ", ".join(j for j in active if j not in still))
            active = still
    if smk.rule == "judge_pointwise_pilot":
        write_parquet(table, smk.output.calls)
        return
    if not status.stop:
        message = rounds.unmet_message(name, target, rows[-1], len(order))
        rows[-1]["reason"] = "target not met: " + ("max_items reached" if ends[-1] < len(order)
                                                   else "item table exhausted")
        log.warning(message)
    write_parquet(table, smk.output.calls)
    write_csv(pd.DataFrame(rows, columns=rounds.STOPPING_COLUMNS), smk.output.stopping)
    write_csv(status.cells, smk.output.intervals)


run_step(main, snakemake)
