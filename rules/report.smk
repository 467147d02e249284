# The reproduction report: the claims table (published vs reproduced) and the figures.


localrules:
    claims,
    figure,
    simulation_figure,


rule figure:
    input:
        unpack(figure_inputs),
    output:
        png=report(
            "results/{panel}/figures/{figure}.png",
            caption="../report/figure.rst",
            category="2. Figures",
            subcategory="{panel}",
            labels={"panel": "{panel}", "figure": "{figure}"},
        ),
        svg="results/{panel}/figures/{figure}.svg",
    log:
        "results/{panel}/logs/figure_{figure}.log",
    wildcard_constraints:
        figure="|".join(FIGURES),
    conda:
        "../environment.yml"
    params:
        kind=lambda wc: PANELS[wc.panel]["kind"],
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
