# Input functions and settings of collect.smk (Snakemake's linter keeps functions out of
# files with rules); collect.smk includes this file first.
from polyjudge.judges.rounds import describe_target
from polyjudge.workflow_config import collected


def collected_panels(kind):
    """Names of panels of ``kind`` whose data is collected from endpoints."""
    return collected(PANELS, kind)


def collected_verdict_inputs(panel):
    base = f"results/{panel}/collect"
    return {
        "verdicts": f"{base}/verdicts.parquet",
        "reference_texts": f"{base}/reference_texts.parquet",
        **{
            f"variant_{c}": f"{base}/texts/{c}.parquet"
            for c in PANELS[panel]["collect"]["conditions"]
        },
    }


def collected_score_inputs(panel):
    return {
        judge: f"results/{panel}/collect/scores/{judge}.parquet"
        for judge in PANELS[panel]["collect"]["judges"]
    }


def collect_settings(panel):
    return PANELS[panel]["collect"]


def stopped_panels():
    """Pointwise collections with a stopping target (`collect.stop`): collected in rounds."""
    return list(STOP_TARGETS)


def is_stopped(panel):
    return panel in stopped_panels()


def collect_items(wildcards):
    return data_path(collect_settings(wildcards.panel)["items"])


def prompt_file(panel, which):
    return str(
        prompt_path_of(collect_settings(panel)["prompts"][which], workflow.basedir)
    )


def prompt_path_of(path, basedir):
    given = Path(path)
    return (
        given
        if given.is_file() or given.is_absolute()
        else Path(basedir) / "config" / given
    )


def plan_inputs(wildcards):
    panel = wildcards.panel
    kinds = (
        [
            "pairwise",
            *{s["kind"] for s in collect_settings(panel)["conditions"].values()},
        ]
        if PANELS[panel]["kind"] == "pairwise_verdicts"
        else ["pointwise"]
    )
    return {"item_table": collect_items(wildcards)} | {
        f"prompt_{k}": prompt_file(panel, k) for k in kinds
    }


def collect_endpoints(panel):
    """Names of the endpoints a collection calls: its translator (if it translates), its judges."""
    collect = collect_settings(panel)
    names = list(collect["judges"])
    if PANELS[panel]["kind"] == "pairwise_verdicts" and collect["conditions"]:
        names.insert(0, collect["translator"])
    return list(dict.fromkeys(names))


def plan_parts(wildcards):
    """One plan per endpoint, so a changed endpoint reruns only its own plan and calls."""
    return expand(
        "results/{panel}/collect/plan/{endpoint}.csv",
        panel=wildcards.panel,
        endpoint=collect_endpoints(wildcards.panel),
    )


def shard_outputs(panel, stage, key):
    return expand(
        f"results/{panel}/collect/{stage}/{key}/shard{{shard}}.parquet",
        shard=range(collect_settings(panel)["shards"]),
    )


def translation_shards(wildcards):
    return shard_outputs(wildcards.panel, "translate", wildcards.condition)


def pairwise_shards(wildcards):
    return [
        path
        for judge in collect_settings(wildcards.panel)["judges"]
        for path in shard_outputs(wildcards.panel, "judge_pairwise", judge)
    ]


def rounds_calls(panel):
    return f"results/{panel}/collect/rounds/calls.parquet"


def pointwise_shards(wildcards):
    if is_stopped(wildcards.panel):
        return [rounds_calls(wildcards.panel)]
    return shard_outputs(wildcards.panel, "judge_pointwise", wildcards.judge)


def report_inputs(wildcards):
    """The calls of a collection for usage.csv / status.csv (and how it stopped, if adaptive)."""
    panel = wildcards.panel
    if is_stopped(panel):
        return {
            "calls": [rounds_calls(panel)],
            "stopping": f"results/{panel}/collect/stopping.csv",
        }
    return {"calls": all_shards(wildcards)}


def judge_endpoints(wildcards):
    return {
        j: config["endpoints"][j] for j in collect_settings(wildcards.panel)["judges"]
    }


def forecast_inputs(wildcards):
    """What the forecast reads: the panel named in `stop.forecast_from` (its tensor), a tensor
    file, or the pilot round once it has been collected (never a call: the plan costs nothing).
    """
    panel = wildcards.panel
    source = collect_settings(panel)["stop"]["forecast_from"]
    if source in PANELS:
        return {"source": f"results/{source}/tensor.parquet"}
    if source is not None:
        return {"source": source if Path(source).is_file() else data_path(source)}
    pilot = f"results/{panel}/collect/pilot/calls.parquet"
    return {"pilot": pilot} if Path(pilot).is_file() else {}


def rounds_message(wildcards):
    """What judge_pointwise_rounds will do, for --dry-run and the job's start line."""
    stop = STOP_TARGETS[wildcards.panel]
    most = f"{stop.max_items} items" if stop.max_items else "the whole item table"
    return (
        f"{wildcards.panel}: collect in rounds of {stop.round_items} items (at most {most}) "
        f"until {describe_target(stop)}; see results/{wildcards.panel}/collect/forecast.csv "
        "for the expected calls and cost"
    )


def all_shards(wildcards):
    panel = wildcards.panel
    collect = collect_settings(panel)
    if PANELS[panel]["kind"] == "pairwise_verdicts":
        return [
            path
            for condition in collect["conditions"]
            for path in shard_outputs(panel, "translate", condition)
        ] + pairwise_shards(wildcards)
    return [
        path
        for judge in collect["judges"]
        for path in shard_outputs(panel, "judge_pointwise", judge)
    ]


def variant_texts(wildcards):
    return {
        c: f"results/{wildcards.panel}/collect/texts/{c}.parquet"
        for c in collect_settings(wildcards.panel)["conditions"]
    }


def collection_targets():
    pairwise = collected_panels("pairwise_verdicts")
    return (
        expand(
            "results/{panel}/collect/{name}",
            panel=pairwise + collected_panels("preference_margins"),
            name=["plan.csv", "plan_total.csv", "usage.csv", "status.csv"],
        )
        + expand("results/{panel}/collect/audit.csv", panel=pairwise)
        + expand(
            "results/{panel}/collect/{name}",
            panel=stopped_panels(),
            name=["stopping.csv", "intervals.csv", "stopping.png", "forecast.csv"],
        )
        + [
            f"results/{p}/collect/verdicts.parquet"
            for p in pairwise
            if "judge_ls" not in PANELS[p]["analyses"]
        ]
    )
