# Simulation study of CBC on synthetic panels: one job per scenario, merged into one table.


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
        study=lambda wc: {
            k: v for k, v in config["simulation"].items() if k != "scenarios"
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
