# Collect: call the judges (Judge-LS protocol and pointwise panels) into the files the analyses
# read. The call cache lives outside results/ (config `collection.cache_dir`) and is not a rule
# output, so Snakemake never deletes it: a rerun, a restart after a kill or a changed parser calls
# no one again for a finished call.


include: "collect.functions.smk"


localrules:
    plan,
    collection_plan,
    collection_plan_part,
    reference_texts,
    translations,
    audit_translations,
    collected_verdicts,
    collected_scores,
    collection_report,
    collection_forecast,
    collection_intervals,
    stopping_figure,


wildcard_constraints:
    judge="[A-Za-z][A-Za-z0-9_]*",
    endpoint="[A-Za-z][A-Za-z0-9_]*",
    condition="[A-Za-z][A-Za-z0-9_]*",
    shard="[0-9]+",


rule collection_plan_part:
    input:
        unpack(plan_inputs),
    output:
        plan="results/{panel}/collect/plan/{endpoint}.csv",
    log:
        "results/{panel}/logs/collection_plan_{endpoint}.log",
    conda:
        "../environment.yml"
    params:
        panel=panel_config,
        endpoint=lambda wc: config["endpoints"][wc.endpoint],
    script:
        "../workflow_scripts/collection_plan.py"


rule collection_plan:
    input:
        plan_parts,
    output:
        plan="results/{panel}/collect/plan.csv",
        total="results/{panel}/collect/plan_total.csv",
    log:
        "results/{panel}/logs/collection_plan.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/collection_plan.py"


rule translate:
    input:
        item_table=collect_items,
        # the endpoint's part of the plan is written before it is called
        plan=lambda wc: f"results/{wc.panel}/collect/plan/"
        f"{collect_settings(wc.panel)['translator']}.csv",
        prompt=lambda wc: prompt_file(
            wc.panel, collect_settings(wc.panel)["conditions"][wc.condition]["kind"]
        ),
    output:
        calls="results/{panel}/collect/translate/{condition}/shard{shard}.parquet",
    log:
        "results/{panel}/logs/translate_{condition}_{shard}.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=240,
    params:
        panel=panel_config,
        endpoint=lambda wc: config["endpoints"][
            collect_settings(wc.panel)["translator"]
        ],
    script:
        "../workflow_scripts/collect_calls.py"


rule translations:
    input:
        translation_shards,
    output:
        texts="results/{panel}/collect/texts/{condition}.parquet",
    log:
        "results/{panel}/logs/translations_{condition}.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/collected_tables.py"


rule reference_texts:
    input:
        item_table=collect_items,
    output:
        texts="results/{panel}/collect/reference_texts.parquet",
    log:
        "results/{panel}/logs/reference_texts.log",
    conda:
        "../environment.yml"
    params:
        panel=panel_config,
    script:
        "../workflow_scripts/collected_tables.py"


rule audit_translations:
    input:
        unpack(variant_texts),
        reference="results/{panel}/collect/reference_texts.parquet",
    output:
        audit="results/{panel}/collect/audit.csv",
    log:
        "results/{panel}/logs/audit_translations.log",
    conda:
        "../environment.yml"
    params:
        panel=panel_config,
        thresholds=config["judge_ls"]["audit"],
    script:
        "../workflow_scripts/collected_tables.py"


rule judge_pairwise:
    input:
        unpack(variant_texts),
        item_table=collect_items,
        plan="results/{panel}/collect/plan/{judge}.csv",
        prompt=lambda wc: prompt_file(wc.panel, "pairwise"),
    output:
        calls="results/{panel}/collect/judge_pairwise/{judge}/shard{shard}.parquet",
    log:
        "results/{panel}/logs/judge_pairwise_{judge}_{shard}.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=240,
    params:
        panel=panel_config,
        endpoint=lambda wc: config["endpoints"][wc.judge],
    script:
        "../workflow_scripts/collect_calls.py"


rule collected_verdicts:
    input:
        pairwise_shards,
    output:
        verdicts="results/{panel}/collect/verdicts.parquet",
    log:
        "results/{panel}/logs/collected_verdicts.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/collected_tables.py"


rule judge_pointwise:
    input:
        item_table=collect_items,
        plan="results/{panel}/collect/plan/{judge}.csv",
        prompt=lambda wc: prompt_file(wc.panel, "pointwise"),
    output:
        calls="results/{panel}/collect/judge_pointwise/{judge}/shard{shard}.parquet",
    log:
        "results/{panel}/logs/judge_pointwise_{judge}_{shard}.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=240,
    params:
        panel=panel_config,
        endpoint=lambda wc: config["endpoints"][wc.judge],
    script:
        "../workflow_scripts/collect_calls.py"


# A collection with a stopping target: one job per panel calls round after round (every judge
# and shard of a round at once, sharing the cost ledger) until the confidence sequences meet
# the target; --dry-run prints what it will do, forecast.csv what it is expected to cost.
rule judge_pointwise_rounds:
    input:
        item_table=collect_items,
        plan=plan_parts,
        prompt=lambda wc: prompt_file(wc.panel, "pointwise"),
    output:
        calls="results/{panel}/collect/rounds/calls.parquet",
        stopping=report(
            "results/{panel}/collect/stopping.csv",
            caption="../report/collection_stopping.rst",
            category="3. Collections",
            subcategory="{panel}",
        ),
        intervals="results/{panel}/collect/sequence_intervals.csv",
    log:
        "results/{panel}/logs/judge_pointwise_rounds.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=1440,
    params:
        panel=panel_config,
        endpoints=judge_endpoints,
        message=rounds_message,
    message:
        "{params.message}"
    script:
        "../workflow_scripts/collect_rounds.py"


# the first round alone (`snakemake results/<panel>/collect/pilot/calls.parquet`): its calls
# are the rounds' first calls (cached), and the plan's forecast reads it
use rule judge_pointwise_rounds as judge_pointwise_pilot with:
    output:
        calls="results/{panel}/collect/pilot/calls.parquet",
    log:
        "results/{panel}/logs/judge_pointwise_pilot.log",
    message:
        "{wildcards.panel}: the pilot round"


rule collection_forecast:
    input:
        unpack(forecast_inputs),
        plan="results/{panel}/collect/plan.csv",
        item_table=collect_items,
        prompt=lambda wc: prompt_file(wc.panel, "pointwise"),
    output:
        forecast="results/{panel}/collect/forecast.csv",
    log:
        "results/{panel}/logs/collection_forecast.log",
    conda:
        "../environment.yml"
    params:
        panel=panel_config,
    script:
        "../workflow_scripts/collection_forecast.py"


rule collection_intervals:
    input:
        sequence="results/{panel}/collect/sequence_intervals.csv",
        tensor="results/{panel}/tensor.parquet",
        stopping="results/{panel}/collect/stopping.csv",
    output:
        intervals=report(
            "results/{panel}/collect/intervals.csv",
            caption="../report/collection_intervals.rst",
            category="3. Collections",
            subcategory="{panel}",
        ),
    log:
        "results/{panel}/logs/collection_intervals.log",
    conda:
        "../environment.yml"
    params:
        bands=config["bands"],
    script:
        "../workflow_scripts/collected_tables.py"


rule stopping_figure:
    input:
        stopping="results/{panel}/collect/stopping.csv",
    output:
        png=report(
            "results/{panel}/collect/stopping.png",
            caption="../report/collection_stopping_figure.rst",
            category="3. Collections",
            subcategory="{panel}",
        ),
        svg="results/{panel}/collect/stopping.svg",
    log:
        "results/{panel}/logs/stopping_figure.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/collected_tables.py"


rule collected_scores:
    input:
        pointwise_shards,
    output:
        scores="results/{panel}/collect/scores/{judge}.parquet",
    log:
        "results/{panel}/logs/collected_scores_{judge}.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/collected_tables.py"


rule collection_report:
    input:
        unpack(report_inputs),
    output:
        usage=report(
            "results/{panel}/collect/usage.csv",
            caption="../report/collection_usage.rst",
            category="3. Collections",
            subcategory="{panel}",
        ),
        status=report(
            "results/{panel}/collect/status.csv",
            caption="../report/collection_status.rst",
            category="3. Collections",
            subcategory="{panel}",
        ),
    log:
        "results/{panel}/logs/collection_report.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/collected_tables.py"


# `snakemake plan`: every collection's call counts and estimated cost, before anything is called
# (and for a stopping target, the forecast of the calls and cost to reach it)
rule plan:
    input:
        expand(
            "results/{panel}/collect/plan.csv",
            panel=collected_panels("pairwise_verdicts")
            + collected_panels("preference_margins"),
        ),
        expand("results/{panel}/collect/forecast.csv", panel=stopped_panels()),
