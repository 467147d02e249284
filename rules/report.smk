# The reproduction report: the claims table (published vs reproduced) and the figures.


localrules:
    claims,
    figure,
    simulation_figure,


# figure name -> (the analysis that makes its inputs, {argument: output under results/{panel}/})
FIGURES = {
    "interaction_heatmap": ("cbc", {"beta": "cbc/beta.csv"}),
    "ranking_bump_chart": ("cbc", {"rankings": "cbc/rankings.csv"}),
    "band_vs_radius": ("bands", {"bands": "cbc/bands.csv", "summary": "cbc/bands.json"}),
    "heldout_tau": ("heldout", {"tau": "heldout/tau.csv"}),
    "reversal_strength": ("reversal", {"pairs": "reversal/pairs.csv"}),
    "cmi_null": (
        "information",
        {"null": "information/null.parquet", "summary": "information/cmi.json"},
    ),
    "task_count_curve": ("task_count", {"task_count": "ablations/task_count.csv"}),
    "backbone_subsets": ("backbone_subsets", {"subsets": "ablations/backbone_subsets.csv"}),
    "lolo": ("lolo", {"lolo": "lolo/lolo.csv"}),
    "deletion_mae": ("missing", {"mae": "missing/mae.csv"}),
    "judge_ls_flips": ("judge_ls", {"flips": "judge_ls/flips.csv"}),
    "judge_ls_position": ("judge_ls", {"position": "judge_ls/position.csv"}),
}


def figure_inputs(wildcards):
    inputs = FIGURES[wildcards.figure][1]
    return {name: f"results/{wildcards.panel}/{path}" for name, path in inputs.items()}


def figure_targets():
    """Every figure the configured panels and their analyses can make."""
    return [
        f"results/{name}/figures/{figure}.png"
        for name, panel in PANELS.items()
        for figure, (analysis, _) in FIGURES.items()
        if analysis in panel["analyses"]
    ] + (["results/simulation/figures/coverage.png"] if config["simulation"]["scenarios"] else [])


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
    params:
        kind=lambda wc: PANELS[wc.panel]["kind"],
        claims=Path(workflow.basedir) / "config" / "claims.yaml",
    wildcard_constraints:
        figure="|".join(FIGURES),
    log:
        "results/{panel}/logs/figure_{figure}.log",
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
    params:
        level=config["simulation"]["level"],
    log:
        "results/simulation/logs/figure.log",
    script:
        "../workflow_scripts/simulation_figure.py"


rule claims:
    input:
        claims=Path(workflow.basedir) / "config" / "claims.yaml",
        outputs=all_targets(),
        figures=figure_targets(),
    output:
        table=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="1. Claims",
        ),
        markdown="results/claims.md",
    params:
        data_dir=str(DATA_DIR),
    log:
        "results/logs/claims.log",
    script:
        "../workflow_scripts/claims.py"
