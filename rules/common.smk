# Input functions, target lists and wildcard constraints shared by every stage.
from pathlib import Path

from polyjudge.data.config import check_keys, fill_defaults, panel_problems
from polyjudge.data.yamlfile import read_yaml


def workflow_yaml(relative):
    return read_yaml(workflow.source_path(relative))


# The Snakefile has no `configfile:`, so `config` is what the user gave (--configfile, --config):
# unknown keys stop the run here, then config/config.yaml fills every setting left out, except
# collections such as `panels`, which the user's replace. The same wherever snakemake runs from.
check_keys(config, workflow_yaml("../config/schema/config.schema.yaml"))
fill_defaults(config, workflow_yaml("../config/config.yaml"))
# Settings a panel that extends another takes from it unless it sets its own (the new judges
# are read as the base's judges were).
EXTENDS_INHERITS = ("languages", "score_range", "missing", "estimator")
for _panel in config["panels"].values():
    _base = config["panels"].get(_panel.get("extends"))
    for _key in EXTENDS_INHERITS if isinstance(_base, dict) else ():
        if _key not in _panel and _key in _base:
            _panel[_key] = _base[_key]
    # a panel that applies a calibrator fits none of its own unless it lists analyses
    if _panel.get("calibrator") and "analyses" not in _panel:
        _panel["analyses"] = []
# every panel gets panel_defaults; a synthetic panel's model defaults to the simulation base
for _panel in config["panels"].values():
    fill_defaults(_panel, config["panel_defaults"])
    if _panel.get("kind") == "synthetic":
        fill_defaults(_panel, config["simulation"]["base"])
# A pairwise_verdicts panel with `source: collection`, or a preference_margins panel with a
# `collect` block, is filled by calling the endpoints of `endpoints`; `collection.defaults` fills
# the settings its `collect` block leaves out.
for _endpoint in config["endpoints"].values():
    fill_defaults(_endpoint, config["collection"]["endpoint_defaults"])
for _panel in config["panels"].values():
    if "collect" in _panel:
        fill_defaults(_panel["collect"], config["collection"]["defaults"])
        if isinstance(_panel["collect"].get("stop"), dict):
            fill_defaults(
                _panel["collect"]["stop"], config["collection"]["stop_defaults"]
            )
        if _panel["kind"] == "pairwise_verdicts":
            _panel.setdefault("reference_texts", None)
            _panel.setdefault("variant_texts", {})
            for _condition, _spec in _panel["collect"]["conditions"].items():
                _panel["variant_texts"].setdefault(_condition, {"kind": _spec["kind"]})


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
ANALYSIS_KEYS = (
    "analyses",
    "heldout_methods",
    "verdict_threshold",
    "anchor_sample",
    "requirement_types",
)
# Keys only the rules that apply or extend a calibration read (they get them as params of their
# own); `extends` stays in a panel's config where it is set (ingest combines the runs).
CALIBRATION_KEYS = ("calibrator", "unseen", "extends")


def panel_config(wildcards):
    return {
        key: value
        for key, value in PANELS[wildcards.panel].items()
        if key not in ANALYSIS_KEYS
        and not (key in CALIBRATION_KEYS and (key != "extends" or value is None))
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


def applying_panels():
    """Names of panels that apply a calibrator (`calibrator:`) instead of fitting one."""
    return [name for name, panel in PANELS.items() if panel.get("calibrator")]


def extending_panels():
    """Names of panels that add judges to another panel (`extends:`)."""
    return [name for name, panel in PANELS.items() if panel.get("extends")]


def has_requirements(name):
    panel = PANELS[name]
    # the base judges' runs come without their requirement verdicts
    if panel.get("extends"):
        return False
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
    if panel.get("calibrator") and analysis in REFITTING_ANALYSES:
        return (
            "measures CBC refitted on this panel's own tasks, but the panel applies the "
            f"calibrator '{panel['calibrator']}' (`calibrator:`): list it on the panel the "
            "calibrator is fitted on, or drop `calibrator:` to fit this panel itself"
        )
    return None


# Analyses that evaluate CBC by refitting it on resampled or reduced copies of the panel: on a
# panel that applies a calibrator fitted elsewhere, they would not describe the calibration used.
REFITTING_ANALYSES = (
    "heldout",
    "decisions",
    "task_count",
    "backbone_subsets",
    "requirement_type",
    "lolo",
    "missing",
)


def check_analyses():
    """Stop at start-up, naming panel, analysis and reason, if a panel lists one it cannot run
    (or has a setting it could never run with, such as a reversed score_range)."""
    settings = panel_problems(PANELS)
    if settings:
        raise ValueError(
            "the config has panel settings no run can use (nothing was run):\n"
            + "\n".join(settings)
        )
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


TARGETS = []


def register_targets(function):
    """Stages add a function returning their final outputs; rule all collects them."""
    TARGETS.append(function)


def all_targets():
    return [path for function in TARGETS for path in function()]


# --- Resources that follow the input (docs/performance.md, "Declared resources") -------------
# Heavy rules declare `mem_mb=scaled(base, per_million)` and `runtime=scaled(...)`: the request
# is (base + per_million x rows of its input / 10^6) x RESOURCE_MARGIN, times the attempt, so a job
# killed for memory and retried (`retries:` in profiles/slurm) asks for twice, then three times
# as much. base / per_million are fitted to the peaks of benchmarks/analyses_scale.py.
RESOURCE_MARGIN = 1.5


def input_rows(input, names=None):
    """Rows of a job's input files (named `names`, default all): a Parquet file's row count
    from its footer, other files (CSV, JSON Lines) one row per 16 bytes (an upper bound).
    """
    import pyarrow.parquet

    rows = 0
    for name in names or input.keys():
        if name not in input.keys():
            continue
        paths = input[name]
        for path in map(Path, [paths] if isinstance(paths, str) else paths):
            if path.suffix == ".parquet" and path.is_file():
                rows += pyarrow.parquet.read_metadata(path).num_rows
            elif path.is_file():
                rows += path.stat().st_size // 16
            elif path.is_dir():
                rows += (
                    sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) // 16
                )
    return rows


def scaled(base, per_million=0, of=None):
    """A resource callable: (base + per_million * input_rows(input, of) / 1e6) * margin * attempt."""

    def request(wildcards, input, attempt):
        rows = input_rows(input, of) if per_million else 0
        return int(
            -(-(base + per_million * rows / 1e6) * RESOURCE_MARGIN * attempt // 1)
        )

    return request
