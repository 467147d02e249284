# Input functions and settings of report.smk (Snakemake's linter keeps functions out of
# files with rules); report.smk includes this file first.
import re

# figure name -> (the analysis that makes its inputs, {argument: output under results/{panel}/})
FIGURES = {
    "interaction_heatmap": ("cbc", {"beta": "cbc/beta.csv"}),
    "ranking_bump_chart": ("cbc", {"rankings": "cbc/rankings.csv"}),
    "band_vs_radius": (
        "bands",
        {"bands": "cbc/bands.csv", "summary": "cbc/bands.json"},
    ),
    "heldout_tau": ("heldout", {"tau": "heldout/tau.csv"}),
    "reversal_strength": (
        "reversal",
        {"pairs": "reversal/pairs.csv", "summary": "reversal/summary.json"},
    ),
    "cmi_null": (
        "information",
        {"null": "information/null.parquet", "summary": "information/cmi.json"},
    ),
    "task_count_curve": ("task_count", {"task_count": "ablations/task_count.csv"}),
    "backbone_subsets": (
        "backbone_subsets",
        {"subsets": "ablations/backbone_subsets.csv"},
    ),
    "lolo": ("lolo", {"lolo": "lolo/lolo.csv"}),
    "deletion_mae": ("missing", {"mae": "missing/mae.csv"}),
    "judge_ls_flips": ("judge_ls", {"flips": "judge_ls/flips.csv"}),
    "judge_ls_position": ("judge_ls", {"position": "judge_ls/position.csv"}),
    # not analyses but panel keys: panels that apply a calibrator, panels that extend another
    "applied_ranks": ("calibrator", {"rankings": "applied/rankings.csv"}),
    "new_judge": (
        "extends",
        {
            "ranks": "extend/new_judge.csv",
            "shift": "extend/beta_shift.csv",
            "summary": "extend/summary.json",
        },
    ),
}


def figure_panels(analysis):
    """The panels that make the figures of ``analysis`` (a FIGURES entry's first field)."""
    if analysis == "judge_ls":
        return verdict_panels()
    if analysis == "calibrator":
        return applying_panels()
    if analysis == "extends":
        return extending_panels()
    return panels_with(analysis)


def panel_figures(name):
    """The figures of FIGURES that panel ``name``'s analyses make, in FIGURES order."""
    return [
        figure
        for figure, (analysis, _) in FIGURES.items()
        if name in figure_panels(analysis)
    ]


def table_key(path):
    """An input name for an analysis output: `cbc/beta.csv` -> `cbc_beta_csv`."""
    return re.sub(r"\W", "_", path)


def figure_tables(name):
    """figure -> {argument: the input name of its table} for every figure of panel ``name``."""
    return {
        figure: {arg: table_key(path) for arg, path in FIGURES[figure][1].items()}
        for figure in panel_figures(name)
    }


def figure_table_files(name):
    """Input name -> file of the distinct tables panel ``name``'s figures read (named, so a
    module prefix on the paths changes nothing for the script)."""
    return {
        table_key(path): f"results/{name}/{path}"
        for figure in panel_figures(name)
        for path in FIGURES[figure][1].values()
    }


def figure_outputs(name):
    """Output name -> file: the figure's PNG (in the report, captioned) and its SVG."""
    outputs = {}
    for figure in panel_figures(name):
        outputs[figure] = report(
            f"results/{name}/figures/{figure}.png",
            caption=f"../report/figures/{figure}.rst",
            category="2. Figures",
            subcategory=name,
            labels={"panel": name, "figure": figure},
        )
        outputs[f"{figure}_svg"] = f"results/{name}/figures/{figure}.svg"
    return outputs


def figure_targets():
    """Every figure the configured panels and their analyses can make."""
    return [
        f"results/{name}/figures/{figure}.png"
        for figure, (analysis, _) in FIGURES.items()
        for name in figure_panels(analysis)
    ] + (
        ["results/simulation/figures/coverage.png"]
        if config["simulation"]["scenarios"]
        else []
    )


def output_analysis(relative):
    """The analysis that writes ``results/{panel}/<relative>``."""
    special = {
        "cell_means.csv": "cbc",
        "cbc/bands.csv": "bands",
        "cbc/bands.json": "bands",
        "heldout/decisions.json": "decisions",
        "missing/parse_failures.csv": "parse_failures",
    }
    folder, _, name = relative.partition("/")
    if relative in special:
        return special[relative]
    return Path(name).stem if folder == "ablations" else folder


# this workflow's own claims, also when another workflow includes it as a module (a stable
# local path: workflow.source_path gives a per-run cache copy, which would rerun every figure)
CLAIMS_FILE = str(Path(workflow.current_basedir).parent / "config" / "claims.yaml")


def claim_outputs():
    """The outputs the published claims read that this config produces."""
    try:
        claims = read_yaml(CLAIMS_FILE)
    except InputError as error:  # not YAML: file and line, alone, as a config error
        sys.exit(str(error))
    produced = []
    for path in dict.fromkeys(claim["output"] for claim in claims):
        _, panel, relative = path.split("/", 2)
        if panel == "simulation":
            made = bool(config["simulation"]["scenarios"])
        else:
            made = (
                panel in PANELS
                and output_analysis(relative) in PANELS[panel]["analyses"]
            )
        if made:
            produced.append(path)
    return produced


# analysis -> the files under results/{panel}/ the results page reads (polyjudge.report.page)
PAGE_FILES = {
    "card": [
        "card/agreement.csv",
        "card/language_tests.csv",
        "card/bias.csv",
        "card/bias_tests.csv",
        "card/redundancy.csv",
        "card/ranking.csv",
    ],
    "labels": [
        "labels/estimates.csv",
        "labels/differences.csv",
        "labels/judge_errors.csv",
        "labels/ranks.csv",
    ],
    "label_plan": ["labels/progress.csv", "labels/to_label.csv"],
    "cbc": [
        "cbc/beta.csv",
        "cbc/rankings.csv",
        "cbc/summary.json",
        "cbc/leaderboard.csv",
        "tensor.parquet",
        "cbc/calibrated_tensor.parquet",
        "inputs.json",
        "shape.json",
    ],
    "bands": ["cbc/bands.csv", "cbc/bands.json"],
    "heldout": ["heldout/tau.csv", "heldout/paired.csv"],
    "decisions": ["heldout/decisions.json"],
    "reversal": ["reversal/pairs.csv", "reversal/summary.json"],
    "information": ["information/cmi.json"],
    "judge_ls": [
        *(f"judge_ls/{table}.csv" for table in ("accuracy", "flips", "position")),
        "judge_ls/inputs.json",
    ],
}


def page_inputs():
    """Every file the results page reads (collections' tables are targets already)."""
    return [
        f"results/{name}/{path}"
        for analysis, paths in PAGE_FILES.items()
        for name in (
            verdict_panels()
            if analysis == "judge_ls"
            else card_panels() if analysis == "card" else panels_with(analysis)
        )
        for path in paths
    ] + [
        f"results/{name}/missing/mnar_check.csv"
        for name in panels_omitting_missing()
        if "cbc" in PANELS[name]["analyses"]
    ]


def config_digest():
    """SHA-256 of the run's configuration (keys sorted), shown on the results page."""
    import hashlib
    import json

    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
