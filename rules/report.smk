# The reproduction report: the claims table (published vs reproduced) and the figures.


include: "report.functions.smk"


localrules:
    claims,
    page,
    simulation_figure,


# One job per panel draws all of its figures: matplotlib is imported once per panel instead of
# once per figure, and each analysis stays its own target (a figure file is a target too).
for _name in [name for name in PANELS if panel_figures(name)]:

    rule:
        name:
            f"figures_{_name}"
        input:
            **figure_table_files(_name),
        output:
            **figure_outputs(_name),
        log:
            f"results/{_name}/logs/figures.log",
        localrule: True
        conda:
            "../environment.yml"
        params:
            panel=_name,
            kind=PANELS[_name]["kind"],
            tables=figure_tables(_name),
            claims=CLAIMS_FILE,
        script:
            "../workflow_scripts/figure.py"


rule simulation_figure:
    input:
        summary="results/simulation/summary.csv",
    output:
        png=report(
            "results/simulation/figures/coverage.png",
            caption="../report/simulation.rst",
            category="2. Figures",
            subcategory="simulation",
        ),
        svg="results/simulation/figures/coverage.svg",
    log:
        "results/simulation/logs/figure.log",
    conda:
        "../environment.yml"
    params:
        level=config["simulation"]["level"],
    script:
        "../workflow_scripts/simulation_figure.py"


rule claims:
    input:
        claims=CLAIMS_FILE,
        outputs=all_targets(),
        claimed=claim_outputs(),
        figures=figure_targets(),
    output:
        table=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="1. Claims",
        ),
        markdown="results/claims.md",
    log:
        "results/logs/claims.log",
    conda:
        "../environment.yml"
    params:
        data_dir=str(DATA_DIR),
    script:
        "../workflow_scripts/claims.py"


rule page:
    input:
        claims="results/claims.csv",
        outputs=all_targets(),
        detail=page_inputs(),
    output:
        page=report(
            "results/index.html",
            caption="../report/page.rst",
            category="0. Results page",
        ),
        panels="results/panels.json",
    log:
        "results/logs/page.log",
    benchmark:
        "results/benchmarks/page.tsv"
    conda:
        "../environment.yml"
    params:
        panels=list(PANELS),
        config_sha256=config_digest(),
    script:
        "../workflow_scripts/page.py"
