# Simulation study of CBC on synthetic panels: one job per scenario, merged into one table;
# the leaderboard's rank intervals on the same panels in one job for all scenarios.


include: "simulation.functions.smk"


localrules:
    simulation_summary,


rule simulation_scenario:
    output:
        table="results/simulation/scenarios/{scenario}.csv",
    log:
        "results/simulation/logs/{scenario}.log",
    benchmark:
        "results/simulation/benchmarks/{scenario}.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        settings=lambda wc: simulation_settings(wc.scenario),
        study=lambda wc: {  # not the rank intervals' settings: they do not change this
            k: v
            for k, v in config["simulation"].items()
            if k not in ("scenarios", "rank_replicates")
        },
    script:
        "../workflow_scripts/simulation_scenario.py"


rule simulation_summary:
    input:
        expand(
            "results/simulation/scenarios/{scenario}.csv",
            scenario=config["simulation"]["scenarios"],
        ),
    output:
        table=report(
            "results/simulation/summary.csv",
            caption="../report/simulation_table.rst",
            category="3. Beyond the paper",
            subcategory="simulation",
        ),
    log:
        "results/simulation/logs/summary.log",
    conda:
        "../environment.yml"
    script:
        "../workflow_scripts/simulation_summary.py"


rule simulation_rank_coverage:
    output:
        table=report(
            "results/simulation/rank_coverage.csv",
            caption="../report/rank_coverage.rst",
            category="3. Beyond the paper",
            subcategory="simulation",
        ),
    log:
        "results/simulation/logs/rank_coverage.log",
    benchmark:
        "results/simulation/benchmarks/rank_coverage.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        scenarios=lambda wc: {
            name: simulation_settings(name)
            for name in config["simulation"]["scenarios"]
        },
        replicates=config["simulation"]["rank_replicates"],
        level=config["simulation"]["level"],
    script:
        "../workflow_scripts/simulation_rank_coverage.py"
