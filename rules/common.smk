# Input functions, target lists and wildcard constraints shared by every stage.
import re
import zlib
from pathlib import Path

import yaml

from judgecal.config import check_keys, fill_defaults


def workflow_yaml(relative):
    with open(workflow.source_path(relative)) as handle:
        return yaml.safe_load(handle)


# The Snakefile has no `configfile:`, so `config` is what the user gave (--configfile, --config):
# unknown keys stop the run here, then config/config.yaml fills every setting left out, except
# collections such as `panels`, which the user's replace. The same wherever snakemake runs from.
check_keys(config, workflow_yaml("../config/schema/config.schema.yaml"))
fill_defaults(config, workflow_yaml("../config/config.yaml"))
# every panel gets panel_defaults; a synthetic panel's model defaults to the simulation base
for _panel in config["panels"].values():
    fill_defaults(_panel, config["panel_defaults"])
    if _panel.get("kind") == "synthetic":
        fill_defaults(_panel, config["simulation"]["base"])


def find_data_dir(value):
    """data_dir as given if absolute or present in the working directory, else the folder of that
    name beside the Snakefile (so the default `data` is the repository's data/ with `-s`).
    """
    path = Path(value)
    beside = Path(workflow.basedir) / path
    if path.is_absolute() or path.exists() or not beside.exists():
        return path
    return beside


DATA_DIR = find_data_dir(config["data_dir"])
PANELS = config["panels"]
# Kinds that become a task x language x backbone score tensor (everything but Judge-LS verdicts).
TENSOR_KINDS = ("judge_runs", "judgment_tree", "synthetic", "preference_margins")


wildcard_constraints:
    panel="[A-Za-z][A-Za-z0-9_]*",
    scenario="[A-Za-z][A-Za-z0-9_]*",


# Panel settings that choose analyses rather than describe the data: left out of the params of
# the rules, so adding an analysis to a panel does not rerun its ingest or anything else.
ANALYSIS_KEYS = ("analyses", "heldout_methods", "anchor_sample", "requirement_types")


def panel_config(wildcards):
    return {
        key: value
        for key, value in PANELS[wildcards.panel].items()
        if key not in ANALYSIS_KEYS
    }


def panels_with(analysis):
    """Names of tensor panels whose config lists ``analysis``."""
    return [
        name
        for name, panel in PANELS.items()
        if panel["kind"] in TENSOR_KINDS and analysis in panel["analyses"]
    ]


def verdict_panels():
    """Names of pairwise-verdict panels that run the Judge-LS protocol."""
    return [
        name
        for name, panel in PANELS.items()
        if panel["kind"] == "pairwise_verdicts" and "judge_ls" in panel["analyses"]
    ]


def has_requirements(name):
    panel = PANELS[name]
    return (
        (panel["kind"] == "judge_runs" and "requirements" in panel)
        or panel["kind"] == "judgment_tree"
        or (panel["kind"] == "synthetic" and panel["requirements_per_task"] > 0)
    )


def analysis_problem(name, analysis):
    """Why a panel cannot run an analysis (None if it can), decided from its config alone."""
    panel = PANELS[name]
    kind = panel["kind"]
    if analysis == "judge_ls":
        return (
            None if kind == "pairwise_verdicts" else "needs a pairwise_verdicts panel"
        )
    if kind not in TENSOR_KINDS:
        return "a pairwise_verdicts panel only supports judge_ls"
    if analysis == "external" and kind != "preference_margins":
        return "needs a preference_margins panel"
    if analysis in ("information", "diagnostics") and (
        kind == "preference_margins"
        or (kind == "synthetic" and panel["n_frameworks"] < 2)
    ):
        return "needs repeated runs (frameworks) in every cell; this panel has one"
    if analysis == "requirement_type" and not (
        has_requirements(name) and panel["requirement_types"]
    ):
        return "needs requirement-level verdicts and a `requirement_types` table"
    if analysis == "parse_failures" and not (
        kind in ("judge_runs", "judgment_tree") and has_requirements(name)
    ):
        return "needs requirement-level verdicts with a response_status column"
    return None


def check_analyses():
    """Stop at start-up, naming panel, analysis and reason, if a panel lists one it cannot run."""
    problems = [
        f"  panel '{name}': analysis '{analysis}' {problem}"
        for name, panel in PANELS.items()
        for analysis in panel["analyses"]
        if (problem := analysis_problem(name, analysis))
    ]
    if problems:
        raise ValueError(
            "the config asks for analyses these panels cannot run:\n"
            + "\n".join(problems)
            + "\n  remove them from the panels' `analyses` lists"
        )


def data_path(relative):
    return str(DATA_DIR / relative)


def data_input(relative):
    """An input file under data_dir; local() keeps a module's prefix off it (not an output)."""
    return local(data_path(relative))


def ingest_inputs(wildcards):
    """Raw inputs of a panel, by kind; data files are read from data_dir at run time."""
    panel = PANELS[wildcards.panel]
    kind = panel["kind"]
    if kind == "judge_runs":
        return {k: data_input(panel[k]) for k in ("runs", "requirements") if k in panel}
    if kind == "judgment_tree":
        return {"requirements": f"results/{wildcards.panel}/raw/requirements.parquet"}
    if kind == "synthetic":
        inputs = {"runs": f"results/{wildcards.panel}/synthetic/runs.parquet"}
        if panel["requirements_per_task"] > 0:
            inputs["requirements"] = (
                f"results/{wildcards.panel}/synthetic/requirements.parquet"
            )
        return inputs
    if kind == "preference_margins" and "collect" in panel:
        return collected_score_inputs(wildcards.panel)
    if kind == "preference_margins":
        return {name: data_input(path) for name, path in panel["files"].items()}
    raise ValueError(
        f"panel '{wildcards.panel}' has kind '{kind}', which has no score tensor"
    )


def truth_input(wildcards):
    """A synthetic panel's planted beta, so analyses can report their error against it."""
    if PANELS[wildcards.panel]["kind"] == "synthetic":
        return {"beta_true": f"results/{wildcards.panel}/synthetic/beta_true.csv"}
    return {}


def judgment_tree_files(wildcards):
    root = DATA_DIR / PANELS[wildcards.panel]["root"]
    files = sorted(local(str(p)) for p in root.rglob("*.json"))
    if not files:
        raise ValueError(
            f"panel '{wildcards.panel}': no JSON judgments under {root} "
            "(expected <backbone>/<Language>/<Framework>/judgment/<Framework>/"
            "agent_as_a_judge/gray_box/<task>.json)"
        )
    return files


def simulation_settings(scenario):
    """A scenario's panel settings and size: the study's base settings, overridden.

    Its seed is (study seed, CRC-32 of the scenario's name), so adding or reordering scenarios
    leaves the others' draws unchanged.
    """
    study = config["simulation"]
    settings = {**study["base"], **study["scenarios"][scenario]}
    settings["seed"] = [study["seed"], zlib.crc32(scenario.encode())]
    return settings


# --- external.smk -----------------------------------------------------------


def anchor_inputs(wildcards):
    sample = PANELS[wildcards.panel]["anchor_sample"]
    return {"sample": data_input(sample)} if sample else {}


# --- heldout.smk ------------------------------------------------------------


def heldout_inputs(wildcards):
    """Run and requirement tables for the Dawid-Skene methods, where the panel has them."""
    inputs = {"tensor": f"results/{wildcards.panel}/tensor.parquet"}
    if PANELS[wildcards.panel]["kind"] != "preference_margins":
        inputs["runs"] = f"results/{wildcards.panel}/runs.parquet"
    if has_requirements(wildcards.panel):
        inputs["requirements"] = f"results/{wildcards.panel}/requirements.parquet"
    return inputs


# --- information.smk --------------------------------------------------------


def cmi_shards(wildcards):
    settings = config["information"]
    return expand(
        "results/{panel}/information/null/{convention}_{shard}.parquet",
        panel=wildcards.panel,
        convention=settings["conventions"],
        shard=range(settings["shards"]),
    )


# --- judge_ls.smk -----------------------------------------------------------


def judge_ls_inputs(wildcards):
    panel = PANELS[wildcards.panel]
    if panel["source"] == "collection":
        return collected_verdict_inputs(wildcards.panel)
    if panel["source"] == "synthetic":
        base = f"results/{wildcards.panel}/synthetic"
        return {
            "verdicts": f"{base}/verdicts.parquet",
            "truth": f"{base}/verdict_truth.json",
            "reference_texts": f"{base}/texts_reference.parquet",
            **{
                f"variant_{c}": f"{base}/texts_{c}.parquet"
                for c in panel["variant_texts"]
            },
        }
    inputs = {"verdicts": data_input(panel["verdicts"])}
    if panel["reference_texts"]:
        inputs["reference_texts"] = data_input(panel["reference_texts"])
        for condition, variant in panel["variant_texts"].items():
            inputs[f"variant_{condition}"] = data_input(variant["path"])
    return inputs


# --- report.smk -------------------------------------------------------------

# figure name -> (the analysis that makes its inputs, {argument: output under results/{panel}/})
FIGURES = {
    "interaction_heatmap": ("cbc", {"beta": "cbc/beta.csv"}),
    "ranking_bump_chart": ("cbc", {"rankings": "cbc/rankings.csv"}),
    "band_vs_radius": (
        "bands",
        {"bands": "cbc/bands.csv", "summary": "cbc/bands.json"},
    ),
    "heldout_tau": ("heldout", {"tau": "heldout/tau.csv"}),
    "reversal_strength": ("reversal", {"pairs": "reversal/pairs.csv"}),
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
}


def panel_figures(name):
    """The figures of FIGURES that panel ``name``'s analyses make, in FIGURES order."""
    return [
        figure
        for figure, (analysis, _) in FIGURES.items()
        if name
        in (panels_with(analysis) if analysis != "judge_ls" else verdict_panels())
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
        for name in (
            panels_with(analysis) if analysis != "judge_ls" else verdict_panels()
        )
    ] + (
        ["results/simulation/figures/coverage.png"]
        if config["simulation"]["scenarios"]
        else []
    )


# --- claims -----------------------------------------------------------------


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
    with open(CLAIMS_FILE) as handle:
        claims = yaml.safe_load(handle)
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


TARGETS = []


def register_targets(function):
    """Stages add a function returning their final outputs; rule all collects them."""
    TARGETS.append(function)


def all_targets():
    return [path for function in TARGETS for path in function()]


# --- collect.smk: panels whose data the workflow collects by calling judges --------------------
# A pairwise_verdicts panel with `source: collection`, or a preference_margins panel with a
# `collect` block, is filled by calling the endpoints of `endpoints`; `collection.defaults` fills
# the settings its `collect` block leaves out.
for _endpoint in config["endpoints"].values():
    fill_defaults(_endpoint, config["collection"]["endpoint_defaults"])
for _panel in config["panels"].values():
    if "collect" in _panel:
        fill_defaults(_panel["collect"], config["collection"]["defaults"])
        if _panel["kind"] == "pairwise_verdicts":
            _panel.setdefault("reference_texts", None)
            _panel.setdefault("variant_texts", {})
            for _condition, _spec in _panel["collect"]["conditions"].items():
                _panel["variant_texts"].setdefault(_condition, {"kind": _spec["kind"]})


def collected_panels(kind):
    """Names of panels of ``kind`` whose data is collected from endpoints."""
    return [n for n, p in PANELS.items() if p["kind"] == kind and "collect" in p]


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


def check_collections():
    """Stop at start-up if a collection names an endpoint, condition or probe that is not there."""
    problems = []
    for name in collected_panels("pairwise_verdicts") + collected_panels(
        "preference_margins"
    ):
        collect = collect_settings(name)
        needed = list(collect["judges"])
        if not needed:
            problems.append(f"  panel '{name}': `collect.judges` names no endpoint")
        if PANELS[name]["kind"] == "pairwise_verdicts" and collect["conditions"]:
            if collect["translator"] is None:
                problems.append(
                    f"  panel '{name}': conditions to translate need a `translator`"
                )
            else:
                needed.append(collect["translator"])
        for endpoint in needed:
            if endpoint not in config["endpoints"]:
                problems.append(
                    f"  panel '{name}': endpoint '{endpoint}' is not defined"
                )
        reserved = {
            PANELS[name].get("reference"),
            "tie_probe",
            "item_table",
            "plan",
            "prompt",
        }
        for condition in set(collect["conditions"]) & reserved:
            problems.append(
                f"  panel '{name}': a condition cannot be named '{condition}'"
            )
        for condition in collect["tie_probes"]:
            if condition not in collect["conditions"]:
                problems.append(
                    f"  panel '{name}': tie probe '{condition}' is no condition"
                )
    for name, panel in PANELS.items():
        if panel["kind"] == "pairwise_verdicts" and (
            panel["source"] == "collection"
        ) != ("collect" in panel):
            problems.append(
                f"  panel '{name}': `source: collection` goes with `collect`"
            )
    if problems:
        raise ValueError("collections:\n" + "\n".join(problems))


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


def pointwise_shards(wildcards):
    return shard_outputs(wildcards.panel, "judge_pointwise", wildcards.judge)


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
            name=["plan.csv", "usage.csv", "status.csv"],
        )
        + expand("results/{panel}/collect/audit.csv", panel=pairwise)
        + [
            f"results/{p}/collect/verdicts.parquet"
            for p in pairwise
            if "judge_ls" not in PANELS[p]["analyses"]
        ]
    )
