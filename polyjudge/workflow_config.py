"""The workflow's config in one place: completed from the defaults, then checked, at start-up.

:func:`complete` fills a user's config (``--configfile`` / ``--config``) from config/config.yaml:
a user's collections (``panels``, ...) replace the defaults, every other setting left out comes
from the defaults, then each panel from ``panel_defaults`` and its stage's defaults.
:func:`problems` lists everything that would stop a run, each as the line the user reads:
unknown keys, the schema, panel settings, analyses a panel cannot run, ``calibrator:`` and
``extends:`` links, the panels' own data files (``runs:`` sources and the like), collections
(endpoints, conditions, tie probes, item tables) and stop targets. :func:`check` raises one
:class:`ConfigError` listing them all, or returns the panels' stop targets. rules/common.smk
calls :func:`complete` and :func:`check` once (and prints a ConfigError's message alone);
nothing here needs Snakemake.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

from .analyses.stopping.targets import StopTarget, collection_target
from .data.config import UNKNOWN_KEYS, fill_defaults, panel_problems, unknown_keys
from .data.errors import InputError
from .data.sources import source_inputs
from .data.yamlfile import key_lines
from .judges.protocols import missing_items_problem
from .judges.rounds import check_stop, margin_range

# Kinds that become a task x language x backbone score tensor (everything but Judge-LS verdicts).
TENSOR_KINDS = ("judge_runs", "judgment_tree", "synthetic", "preference_margins")
# Settings a panel that extends another takes from it unless it sets its own (the new judges
# are read as the base's judges were).
EXTENDS_INHERITS = ("languages", "score_range", "missing", "estimator")
# Analyses that evaluate CBC by refitting it on resampled or reduced copies of the panel: on a
# panel that applies a calibrator fitted elsewhere, they would not describe the calibration used.
REFITTING_ANALYSES = ("heldout", "decisions", "task_count", "backbone_subsets",
                      "requirement_type", "lolo", "missing")
# Condition names a collection reserves for its own files (besides the panel's `reference`).
RESERVED_CONDITIONS = ("tie_probe", "item_table", "plan", "prompt")

# Each kind of problem: the line above its problems and the line below them (None: none).
KEYS = UNKNOWN_KEYS
SCHEMA = ("the config does not match config/schema/config.schema.yaml (nothing was run):", None)
SETTINGS = ("the config has panel settings no run can use (nothing was run):", None)
ANALYSES = ("the config asks for analyses these panels cannot run:",
            "  remove them from the panels' `analyses` lists")
LINKS = ("the config's panels cannot apply or extend as asked (nothing was run):", None)
SOURCES = ("the config's panels name data that is not there (nothing was run):", None)
COLLECTIONS = ("collections:", None)


# the key path a problem names: `panels.mine.x: ...`, `unknown key 'x' at panels.mine.x: ...`,
# `unknown value 'v' in panels.mine.analyses: ...`
KEY_PATH = re.compile(r"^  (?:unknown key '[^']*' at |unknown value .*? in )?([^\s:']+):")


class ConfigError(ValueError):
    """A config no run can use: the message lists every problem, each with its fix. The
    workflow prints it alone (no traceback: the user's config is at fault, not the code)."""


def _mappings(value) -> dict:
    """The entries of a collection that are mappings (a malformed one is the schema's to name)."""
    return {k: v for k, v in value.items() if isinstance(v, dict)} if isinstance(value, dict) \
        else {}


def complete(config: dict, defaults: dict) -> dict:
    """``config`` completed from ``defaults`` (config/config.yaml), as a new dict (``config`` is
    left as it was). Collections such as ``panels`` replace the defaults' as a whole; a config
    with ``panels`` of its own runs no simulation scenario it does not list; a panel
    takes what it leaves out from the panel it ``extends`` (:data:`EXTENDS_INHERITS`), then
    ``panel_defaults``, a synthetic one from ``simulation.base``, a ``human_labels`` block
    from ``labels.label_defaults``; endpoints, ``collect`` blocks,
    their ``stop`` blocks and collected pairwise panels from ``collection``'s defaults."""
    done = copy.deepcopy(config)
    # a run of the user's own panels does not pay for the package's simulation study unless
    # it lists scenarios; the reproduction (no `panels` given) runs the defaults' study
    simulation = done.get("simulation")
    if "panels" in done and (simulation is None or isinstance(simulation, dict)):
        done["simulation"] = {"scenarios": {}, **(simulation or {})}
    done = fill_defaults(done, defaults)
    panels = _mappings(done.get("panels"))
    for panel in panels.values():
        base = panels.get(panel.get("extends"))
        for key in EXTENDS_INHERITS if base is not None else ():
            if key not in panel and key in base:
                panel[key] = base[key]
        # depends on another key: a panel that applies a calibrator fits none of its own unless
        # it lists analyses (panel_defaults' [cbc] is for the others)
        if panel.get("calibrator") and "analyses" not in panel:
            panel["analyses"] = []
    collection = done["collection"]
    for panel in panels.values():
        fill_defaults(panel, done["panel_defaults"])
        if panel.get("kind") == "synthetic":
            fill_defaults(panel, done["simulation"]["base"])
        if isinstance(panel.get("human_labels"), dict):
            fill_defaults(panel["human_labels"], done["labels"]["label_defaults"])
    for endpoint in _mappings(done.get("endpoints")).values():
        fill_defaults(endpoint, collection["endpoint_defaults"])
    for panel in panels.values():
        if not isinstance(panel.get("collect"), dict):
            continue
        collect = fill_defaults(panel["collect"], collection["defaults"])
        if isinstance(collect.get("stop"), dict):
            fill_defaults(collect["stop"], collection["stop_defaults"])
        if panel.get("kind") == "pairwise_verdicts":
            fill_defaults(panel, collection["verdict_panel_defaults"])
            # depends on another key: each condition's texts are of its `collect.conditions` kind
            for condition, spec in _mappings(collect["conditions"]).items():
                if isinstance(panel["variant_texts"], dict) and "kind" in spec:
                    panel["variant_texts"].setdefault(condition, {"kind": spec["kind"]})
    return done


def schema_problems(config: dict, schema: dict) -> list[str]:
    """Where ``config`` breaks the JSON schema (a type, a range, a required key), one line each.
    Needs jsonschema, which Snakemake brings (the package itself does not depend on it)."""
    import jsonschema

    errors = jsonschema.Draft202012Validator(schema).iter_errors(config)
    return [f"  {'.'.join(map(str, error.absolute_path)) or 'the config'}: {error.message}"
            for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])]


def has_requirements(panel: dict) -> bool:
    """Does the panel come with requirement-level verdicts?"""
    if panel.get("extends"):  # the base judges' runs come without their requirement verdicts
        return False
    return ((panel["kind"] == "judge_runs" and "requirements" in panel)
            or panel["kind"] == "judgment_tree"
            or (panel["kind"] == "synthetic" and panel["requirements_per_task"] > 0))


def analysis_problem(panel: dict, analysis: str) -> str | None:
    """Why a (completed) panel cannot run an analysis (None if it can), from its config alone."""
    kind = panel["kind"]
    if analysis == "judge_ls":
        return None if kind == "pairwise_verdicts" else "needs a pairwise_verdicts panel"
    if analysis == "card":
        return None if kind in ("pairwise_verdicts", "preference_margins") \
            or has_requirements(panel) else (
            "needs requirement-level verdicts, preference margins or pairwise verdicts (the "
            "judge card reads them; run scores alone are not carded yet)")
    if analysis == "labels":
        if not panel.get("human_labels"):
            return "needs `human_labels:` (the source of the panel's human labels)"
        return None if kind in ("judge_runs", "judgment_tree") else (
            "needs a judge_runs or judgment_tree panel (its runs or requirement verdicts are "
            "the predictions beside the human labels)")
    if analysis == "label_plan":
        return None if kind in ("judge_runs", "judgment_tree") else (
            "needs a judge_runs or judgment_tree panel (the judges' runs or requirement "
            "verdicts say which items to label next)")
    if kind not in TENSOR_KINDS:
        return "a pairwise_verdicts panel only supports judge_ls and card"
    if analysis == "external" and kind != "preference_margins":
        return "needs a preference_margins panel"
    if analysis in ("information", "diagnostics") and (
            kind == "preference_margins" or (kind == "synthetic" and panel["n_frameworks"] < 2)):
        return "needs repeated runs (frameworks) in every cell; this panel has one"
    if analysis == "requirement_type" and not (has_requirements(panel)
                                               and panel["requirement_types"]):
        return "needs requirement-level verdicts and a `requirement_types` table"
    if analysis == "parse_failures" and not (kind in ("judge_runs", "judgment_tree")
                                             and has_requirements(panel)):
        return "needs requirement-level verdicts with a response_status column"
    if panel.get("calibrator") and analysis in REFITTING_ANALYSES:
        return ("measures CBC refitted on this panel's own tasks, but the panel applies the "
                f"calibrator '{panel['calibrator']}' (`calibrator:`): list it on the panel the "
                "calibrator is fitted on, or drop `calibrator:` to fit this panel itself")
    return None


def analysis_problems(panels: dict) -> list[str]:
    """Every analysis a panel lists but cannot run, naming panel, analysis and reason."""
    return [f"  panel '{name}': analysis '{analysis}' {problem}"
            for name, panel in panels.items() for analysis in panel["analyses"]
            if (problem := analysis_problem(panel, analysis))]


def calibrator_path(value: str, data_dir) -> Path | None:
    """A `calibrator:` path: as given if it exists, else under data_dir (None: neither)."""
    for path in (Path(value), Path(data_dir) / value):
        if path.is_file():
            return path
    return None


def link_problems(panels: dict, name: str, data_dir) -> list[str]:
    """What is wrong with panel ``name``'s `calibrator:` and `extends:` (list of lines)."""
    panel = panels[name]
    value, base = panel.get("calibrator"), panel.get("extends")
    problems = []
    if value and base:
        problems.append("sets both `calibrator` and `extends`: use one")
    if value in panels:
        if value == name:
            problems.append("`calibrator` names the panel itself")
        elif panels[value]["kind"] not in TENSOR_KINDS:
            problems.append(f"`calibrator`: panel '{value}' has no score tensor to fit")
    elif value:
        path = calibrator_path(value, data_dir)
        if path is None:
            problems.append(f"`calibrator: {value}` is neither a panel of this config "
                            f"({', '.join(panels)}) nor a file (looked for {Path(value)} and "
                            f"{Path(data_dir) / value})")
        else:
            from .calibrator import Calibrator  # only where a calibrator file is named

            try:
                Calibrator.load(path)
            except InputError as error:
                message = str(error).replace("\n", "\n    ")
                problems.append(f"`calibrator`: {message}")
    if base and base not in panels:
        problems.append(f"`extends: {base}` is not a panel of this config ({', '.join(panels)})")
    elif base == name:
        problems.append("`extends` names the panel itself")
    elif base:
        if panel["kind"] != "judge_runs":
            problems.append("`extends` needs a judge_runs panel (the new judges' run table)")
        if panels[base]["kind"] not in TENSOR_KINDS:
            problems.append(f"`extends`: panel '{base}' has no score tensor")
        if panels[base].get("extends"):
            problems.append(
                f"`extends`: panel '{base}' extends '{panels[base]['extends']}' itself; "
                f"extend '{panels[base]['extends']}' with all the new judges in one table")
    return problems


def user_data(panel: dict) -> tuple[list[tuple[str, object]], list[tuple[str, str]]]:
    """The data a (completed) panel reads from data_dir, as ``(key, value)``: its table sources
    (``runs``, ``requirements``, ``verdicts``: a file, folder, glob, template, Hive folder or
    Inspect logs) and its plain files (a preference panel's ``files``, a verdict panel's
    texts, the tables of its analyses). Data a rule of the workflow makes is not among them: a
    synthetic panel, a collection (``collect``), a judgment tree's flattened table (its
    ``root`` is looked for by the rule that flattens it)."""
    kind, analyses = panel["kind"], panel["analyses"]
    tables, files = [], []
    if kind == "judge_runs":
        tables = [(key, panel[key]) for key in ("runs", "requirements") if panel.get(key)]
    if kind == "pairwise_verdicts" and panel["source"] not in ("collection", "synthetic"):
        tables = [("verdicts", panel["verdicts"])] if panel.get("verdicts") else []
        if panel.get("reference_texts"):
            files = [("reference_texts", panel["reference_texts"])] + [
                (f"variant_texts.{name}.path", variant["path"])
                for name, variant in _mappings(panel.get("variant_texts")).items()
                if variant.get("path")]
    if kind == "preference_margins" and "collect" not in panel:
        files = [(f"files.{name}", path) for name, path in (panel.get("files") or {}).items()]
    if panel.get("requirement_types") and "requirement_type" in analyses:
        files.append(("requirement_types", panel["requirement_types"]))
    if panel.get("anchor_sample") and "external" in analyses:
        files.append(("anchor_sample", panel["anchor_sample"]))
    if isinstance(panel.get("human_labels"), dict) and "labels" in analyses:
        tables.append(("human_labels.source", panel["human_labels"]["source"]))
    return tables, files


def source_problems(panels: dict, data_dir) -> list[str]:
    """A panel's own data that is not there (:func:`user_data`): a table source that names no
    file (a missing path, a glob or template that matches nothing, a folder without tables)
    and a missing file, each with where it was looked for and the fix; said here, before any
    job, rather than by Snakemake while it builds the jobs (as an input function's error)."""
    problems, base = [], Path(data_dir)
    for name, panel in panels.items():
        tables, files = user_data(panel)
        for key, value in tables:
            try:
                source_inputs(value, data_dir)
            except InputError as error:
                indented = str(error).replace("\n", "\n    ")
                problems.append(f"  panel '{name}': `{key}`: {indented}")
        for key, value in files:
            if not (base / value).is_file():
                problems.append(f"  panel '{name}': `{key}: {value}` is not there (looked for "
                                f"{(base / value).resolve()}): fix the path (relative to "
                                f"data_dir, here {base.resolve()}) or set data_dir to the "
                                "folder that holds it")
    return problems


def collected(panels: dict, kind: str) -> list[str]:
    """Names of panels of ``kind`` whose data is collected from endpoints."""
    return [n for n, p in panels.items() if p["kind"] == kind and "collect" in p]


def collection_problems(config: dict, data_dir) -> list[str]:
    """A collection naming an endpoint, condition, probe or item table that is not there, an
    unusable ``collect.stop`` block, or ``source: collection`` without ``collect``."""
    panels, problems = config["panels"], []
    for name in collected(panels, "pairwise_verdicts") + collected(panels, "preference_margins"):
        collect = panels[name]["collect"]
        needed = list(collect["judges"])
        if not needed:
            problems.append(f"  panel '{name}': `collect.judges` names no endpoint")
        if panels[name]["kind"] == "pairwise_verdicts" and collect["conditions"]:
            if collect["translator"] is None:
                problems.append(f"  panel '{name}': conditions to translate need a `translator`")
            else:
                needed.append(collect["translator"])
        problems += [f"  panel '{name}': endpoint '{endpoint}' is not defined"
                     for endpoint in needed if endpoint not in config["endpoints"]]
        reserved = {panels[name].get("reference"), *RESERVED_CONDITIONS}
        problems += [f"  panel '{name}': a condition cannot be named '{condition}'"
                     for condition in set(collect["conditions"]) & reserved]
        problems += [f"  panel '{name}': tie probe '{condition}' is no condition"
                     for condition in collect["tie_probes"]
                     if condition not in collect["conditions"]]
    for name, panel in panels.items():
        if panel["kind"] == "pairwise_verdicts" and (
                panel["source"] == "collection") != ("collect" in panel):
            problems.append(f"  panel '{name}': `source: collection` goes with `collect`")
    for name, panel in panels.items():
        stop = check_stop(name, panel, panels)
        if not stop and name in stopped_panels(panels):
            try:
                stop_target(panel)
            except ValueError as error:
                stop = [f"  panel '{name}': `collect.stop`: {error}"]
        problems += stop
        if "collect" in panel:
            items = panel["collect"]["items"]
            absent = missing_items_problem(name, panel["kind"], items, Path(data_dir) / items)
            problems += [absent] if absent else []
    return problems


def stopped_panels(panels: dict) -> list[str]:
    """Pointwise collections with a stopping target (`collect.stop`): collected in rounds."""
    return [n for n in collected(panels, "preference_margins")
            if panels[n]["collect"].get("stop") is not None]


def stop_target(panel: dict) -> StopTarget:
    """The record of a (completed) panel's ``collect.stop`` block, its range the panel's
    ``score_range`` (the rule's script also reads the rubric's answer bounds and the items)."""
    return collection_target(panel["collect"]["stop"], margin_range(panel["score_range"]))


def sections(config: dict, data_dir, schema: dict) -> list[tuple[tuple, list[str]]]:
    """Each kind of problem the completed ``config`` has, with its lines (empty: none). Unknown
    keys and the schema come first and alone: the other checks read a config of the schema's
    shape, so they run once it has one."""
    keys = unknown_keys(config, schema)
    if keys:
        return [(KEYS, keys)]
    shape = schema_problems(config, schema)
    if shape:
        return [(SCHEMA, shape)]
    panels = config["panels"]
    found = [(SETTINGS, panel_problems(panels)), (ANALYSES, analysis_problems(panels)),
             (LINKS, [f"  panel '{name}': {problem}" for name in panels
                      for problem in link_problems(panels, name, data_dir)]),
             (SOURCES, source_problems(panels, data_dir)),
             (COLLECTIONS, collection_problems(config, data_dir))]
    return [(kind, lines) for kind, lines in found if lines]


def problems(config: dict, data_dir, schema: dict) -> list[str]:
    """Every problem of the completed ``config`` that would stop a run, one readable line (or
    block) each; ``data_dir`` is where its input paths are looked for."""
    return [line for _, lines in sections(config, data_dir, schema) for line in lines]


def located(lines: list[str], files=()) -> list[str]:
    """Each problem that names a key path, followed by the file and line where the user set
    it (``files``: the user's config files, a later one winning as in Snakemake), so a key
    indented into the wrong mapping (valid YAML, the wrong place) is found in the file. A
    setting the defaults gave has no line."""
    where = {}
    for path in files:
        shown = Path(path)
        if shown.is_absolute() and shown.is_relative_to(Path.cwd()):
            shown = shown.relative_to(Path.cwd())
        where |= {dotted: f"{shown}, line {line}" for dotted, line in key_lines(path).items()}
    out = []
    for line in lines:
        found = KEY_PATH.match(line)
        if found and found.group(1) in where:
            first, *rest = line.split("\n", 1)
            line = "\n".join([f"{first} ({where[found.group(1)]})", *rest])
        out.append(line)
    return out


def check(config: dict, data_dir, schema: dict, files=()) -> dict[str, StopTarget]:
    """Raise one :class:`ConfigError` listing every problem of the completed ``config`` (each
    kind under its own heading; a problem at a key of ``files``, the user's config files,
    with its file and line), before any job; else return the stop target of each panel
    collected in rounds (panel name -> :class:`StopTarget`)."""
    found = sections(config, data_dir, schema)
    if found:
        raise ConfigError("\n".join(
            "\n".join([head, *located(list(dict.fromkeys(lines)), files)]
                      + ([tail] if tail else []))
            for (head, tail), lines in found))
    return {name: stop_target(config["panels"][name]) for name in stopped_panels(config["panels"])}
