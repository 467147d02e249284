# Input functions and settings of ingest.smk (Snakemake's linter keeps functions out of
# files with rules); ingest.smk includes this file first.
from polyjudge.data.sources import describe, source_inputs


def source_input(value):
    """A table source's files under data_dir: one path for a single CSV or Parquet file (as
    before), else the sorted list of the files it names (polyjudge.data.sources)."""
    files = source_inputs(value, DATA_DIR)
    return local(files) if isinstance(files, str) else [local(f) for f in files]


def ingest_inputs(wildcards):
    """Raw inputs of a panel, by kind; data files are read from data_dir at run time. Besides
    the tables it reads, ingest gets the files inputs.json names: a judgment tree's JSON files
    (read by flatten_judgment_tree) and the inputs.json of the panel a panel extends."""
    panel = PANELS[wildcards.panel]
    kind = panel["kind"]
    # a panel that extends another: the base's validated runs + the new judges' files
    if kind == "judge_runs" and panel.get("extends"):
        base = panel["extends"]
        return {
            **{k: data_input(panel[k]) for k in ("runs", "requirements") if k in panel},
            "base_runs": f"results/{base}/runs.parquet",
            "base_cells": f"results/{base}/cell_means.csv",
            "base_manifest": f"results/{base}/inputs.json",
        }
    if kind == "judge_runs":
        return {
            k: source_input(panel[k]) for k in ("runs", "requirements") if k in panel
        }
    if kind == "judgment_tree":
        return {
            "requirements": f"results/{wildcards.panel}/raw/requirements.parquet",
            "judgments": judgment_tree_files(wildcards),
        }
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


def runs_source(wildcards):
    """The table a panel's runs come from, as ingest's messages name it (the user's file, or
    the source of many files), for later steps' messages about the data: a user changes that
    file, not results/{panel}/runs.parquet."""
    panel = PANELS[wildcards.panel]
    inputs = ingest_inputs(wildcards)
    name = "runs" if "runs" in inputs else next(iter(inputs))
    if isinstance(inputs[name], str):
        return str(inputs[name])
    if panel["kind"] == "judge_runs":
        return describe(panel[name])
    return ", ".join(str(path) for path in inputs[name])


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
