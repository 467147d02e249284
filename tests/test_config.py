"""The configuration: a user's panels replace the defaults wherever snakemake runs from, every
other setting comes from config/config.yaml, and unknown keys stop the run naming the key; the
completion and every check in polyjudge.workflow_config, without Snakemake; stage files do no work
when they are read."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from polyjudge import workflow_config
from polyjudge.data.config import check_keys, fill_defaults, unknown_keys

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "config/schema/config.schema.yaml").read_text())
DEFAULTS = yaml.safe_load((REPO / "config/config.yaml").read_text())
USER = {"panels": {"mine": {"kind": "synthetic", "seed": 3, "n_tasks": 8,
                            "analyses": ["cbc", "heldout"]}},
        "heldout": {"replicates": 20}, "simulation": {"scenarios": {}}}


def test_the_default_config_has_no_unknown_key():
    assert unknown_keys(DEFAULTS, SCHEMA) == []


@pytest.mark.parametrize("config, line", [
    ({"panels": {"p": {"kind": "synthetic", "analysis": ["cbc"]}}},
     "unknown key 'analysis' at panels.p.analysis: did you mean 'analyses'?"),
    ({"heldout": {"replicate": 5}}, "unknown key 'replicate' at heldout.replicate: did you mean "
     "'replicates'?"),
    ({"ablations": {"task_count": {"nvalues": [5]}}},
     "at ablations.task_count.nvalues: did you mean 'n_values'?"),
    ({"simulation": {"scenarios": {"s": {"n_panels": 2, "noise": 1.0}}}},
     "at simulation.scenarios.s.noise: did you mean 'noise_sd'?"),
    ({"panel_default": {}}, "at panel_default: did you mean 'panel_defaults'?"),
    ({"panels": {"p": {"kind": "judge_runs", "runs": "r.csv", "root": "x"}}},
     "unknown key 'root' at panels.p.root"),  # a judgment_tree key on a judge_runs panel
    ({"panels": {"p": {"kind": "spreadsheet"}}}, "panels.p.kind: 'spreadsheet' is not one of"),
    ({"external": {"human_anchor": {"tolerence": 0.1}}},
     "at external.human_anchor.tolerence: did you mean 'tolerance'?"),
    ({"zzz": 1}, "unknown key 'zzz' at zzz: valid keys here: ablations, bands"),
    ({"panels": {"p": {"kind": "synthetic", "analyses": ["cbc", "heldot"]}}},
     "unknown value 'heldot' in panels.p.analyses: did you mean 'heldout'?"),
    ({"information": {"conventions": ["protocol", "sklaern"]}},
     "unknown value 'sklaern' in information.conventions: did you mean 'sklearn'?"),
    ({"panels": {"p": {"kind": "judge_runs", "runs": {"templte": "j/{backbone}.jsonl"}}}},
     "unknown key 'templte' at panels.p.runs.templte: did you mean 'template'?"),
    ({"panels": {"p": {"kind": "judge_runs", "runs": {"inspect": "logs", "scorrer": "s"}}}},
     "unknown key 'scorrer' at panels.p.runs.scorrer: did you mean 'scorer'?"),
])
def test_unknown_keys_are_named_with_their_place_and_nearest_key(config, line):
    problems = unknown_keys(config, SCHEMA)
    assert len(problems) == 1 and line in problems[0]
    with pytest.raises(ValueError, match="nothing was run"):
        check_keys(config, SCHEMA)


def test_table_sources_of_every_form_have_no_unknown_key():
    for runs in ("r.csv", ["a.csv", "b/*.jsonl"], {"template": "j/{backbone}/{language}.jsonl"},
                 {"path": "runs", "partitioning": "hive", "format": "parquet"},
                 {"inspect": ["a.eval"], "scorer": "s", "language": "task_arg.language"}):
        assert unknown_keys({"panels": {"p": {"kind": "judge_runs", "runs": runs}}}, SCHEMA) == []


def test_entries_of_collections_are_names_not_keys():
    config = {"panels": {"any_name": {"kind": "preference_margins",
                                      "files": {"judge x": "a.csv", "judge y": "b.csv"}}},
              "ablations": {"requirement_type": {"groups": {"my group": ["A"]}}}}
    assert unknown_keys(config, SCHEMA) == []


def test_user_panels_replace_the_defaults_and_other_settings_are_filled():
    config = fill_defaults(yaml.safe_load(yaml.safe_dump(USER)), DEFAULTS)
    assert list(config["panels"]) == ["mine"]
    assert config["heldout"]["replicates"] == 20
    assert config["heldout"]["seed"] == DEFAULTS["heldout"]["seed"]
    assert config["simulation"]["scenarios"] == {}
    assert config["simulation"]["base"] == DEFAULTS["simulation"]["base"]
    assert config["data_dir"] == DEFAULTS["data_dir"]


def dry_run(cwd, *args):
    """`snakemake -n` as a user types it from ``cwd``; returns its text. With --forceall: the
    plan names every job, also where a checkout's own results/ are up to date."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores", "2",
                             *args],
                            cwd=cwd, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def planned_panels(text):
    return {line.split("results/")[1].split("/")[0] for line in text.splitlines()
            if "results/" in line and "/" in line.split("results/")[1]} - {"simulation", "logs",
                                                                              "benchmarks"}


@pytest.fixture()
def user_config(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(USER))
    return path


@pytest.mark.slow
def test_user_panels_only_from_the_repository_root(user_config):
    code, text = dry_run(REPO, "--configfile", str(user_config))
    assert code == 0, text
    assert planned_panels(text) == {"mine"}


@pytest.mark.slow
def test_user_panels_only_with_s_from_another_folder(user_config, tmp_path):
    code, text = dry_run(tmp_path, "-s", str(REPO / "Snakefile"), "--configfile", str(user_config))
    assert code == 0, text
    assert planned_panels(text) == {"mine"}


@pytest.mark.slow
def test_user_panels_only_with_the_slurm_workflow_profile(user_config):
    code, text = dry_run(REPO, "--workflow-profile", "profiles/slurm", "--configfile",
                         str(user_config))
    assert code == 0, text
    assert planned_panels(text) == {"mine"}


@pytest.mark.slow
def test_default_panels_without_a_user_config(default_plan):
    """The default panels, and the job count the README and docs/performance.md give: the one
    this plan has (each page gives it once; older counts there are labelled as history). The
    plan is `snakemake -n --forceall` in the repository, the shared ``default_plan``."""
    code, text = default_plan
    assert code == 0, text
    assert planned_panels(text) == set(DEFAULTS["panels"])
    planned = int(re.search(r"^total\s+(\d+)$", text, re.M).group(1))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    performance = (REPO / "docs/performance.md").read_text(encoding="utf-8")
    current = performance[performance.index("## Full reproduction"):
                          performance.index("### History")]
    summary = performance[performance.index("## Summary"):performance.index("## Full")]
    for page, words in (("README.md", readme), ("performance.md, Full reproduction", current),
                        ("performance.md, Summary", summary)):
        counts = {int(n) for n in re.findall(r"\b(\d+) jobs\b(?! then)", words)}
        assert counts == {planned}, f"{page} gives {counts} jobs, the plan has {planned}"


@pytest.mark.slow
def test_a_typo_stops_the_run_before_anything_is_computed(tmp_path):
    path = tmp_path / "typo.yaml"
    config = yaml.safe_load(yaml.safe_dump(USER))
    config["panels"]["mine"]["analysis"] = config["panels"]["mine"].pop("analyses")
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "-s",
                             str(REPO / "Snakefile"), "--configfile", str(path)],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown key 'analysis' at panels.mine.analysis: did you mean 'analyses'?" in \
        result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_default_panels_with_s_from_another_folder_read_the_repository_data(tmp_path):
    code, text = dry_run(tmp_path, "-s", str(REPO / "Snakefile"))
    assert code == 0, text
    assert str(REPO / "data" / "devai_ml_aaaj") in text


# --- polyjudge.workflow_config: completion and checks without Snakemake -----------------------

def completed(user):
    return workflow_config.complete(yaml.safe_load(yaml.safe_dump(user, sort_keys=False)),
                                    DEFAULTS)


def config_problems(user, data_dir=REPO / "data"):
    return workflow_config.problems(completed(user), data_dir, SCHEMA)


def test_complete_fills_the_defaults_without_changing_the_users_config():
    user = yaml.safe_load(yaml.safe_dump(USER))
    config = workflow_config.complete(user, DEFAULTS)
    assert user == USER  # a new dict: the user's is left as it was
    panel = config["panels"]["mine"]
    assert panel["languages"] is None and panel["missing"] == "error"  # panel_defaults
    assert panel["n_frameworks"] == DEFAULTS["simulation"]["base"]["n_frameworks"]
    assert panel["seed"] == 3 and panel["analyses"] == ["cbc", "heldout"]
    assert config["heldout"]["replicates"] == 20
    assert config["heldout"]["seed"] == DEFAULTS["heldout"]["seed"]
    assert workflow_config.problems(config, REPO / "data", SCHEMA) == []
    defaults = workflow_config.complete({}, DEFAULTS)
    assert list(defaults["panels"]) == list(DEFAULTS["panels"])
    assert workflow_config.check(defaults, REPO / "data", SCHEMA) == {}


def test_a_users_panels_replace_the_defaults_and_extends_inherits_from_the_base():
    config = completed({"panels": {
        "base": {"kind": "judge_runs", "runs": "r.csv", "languages": ["en", "de"],
                 "score_range": [0, 100], "missing": "omit"},
        "plus": {"kind": "judge_runs", "runs": "more.csv", "extends": "base", "missing": "error"},
        "apply": {"kind": "judge_runs", "runs": "new.csv", "calibrator": "base"}}})
    assert list(config["panels"]) == ["base", "plus", "apply"]
    plus = config["panels"]["plus"]
    assert plus["languages"] == ["en", "de"] and plus["score_range"] == [0, 100]
    assert plus["missing"] == "error"  # its own setting wins
    assert plus["estimator"] is None and plus["analyses"] == ["cbc"]
    assert config["panels"]["apply"]["analyses"] == []  # applies a calibrator: fits nothing
    assert config["panels"]["apply"]["languages"] is None  # inherits only with `extends`


def test_collections_are_completed_from_the_collection_defaults():
    config = completed({"endpoints": {"j": {"base_url": "http://x/v1", "model": "m"}},
                        "panels": {"ls": {"kind": "pairwise_verdicts", "source": "collection",
                                          "reference": "en", "conditions": ["zh"],
                                          "on_duplicate": "error", "analyses": ["judge_ls"],
                                          "collect": {"judges": ["j"], "translator": "j",
                                                      "conditions": {"zh": {
                                                          "kind": "full",
                                                          "language": "Chinese"}}}},
                                   "pw": {"kind": "preference_margins",
                                          "collect": {"judges": ["j"],
                                                      "stop": {"beta_halfwidth": 0.2}}}}})
    collection = DEFAULTS["collection"]
    assert config["endpoints"]["j"]["max_tokens"] == collection["endpoint_defaults"]["max_tokens"]
    ls, pw = config["panels"]["ls"], config["panels"]["pw"]
    assert ls["collect"]["shards"] == collection["defaults"]["shards"]
    assert ls["reference_texts"] is None and ls["variant_texts"] == {"zh": {"kind": "full"}}
    assert "reference_texts" not in pw  # pairwise panels only
    stop = pw["collect"]["stop"]
    assert stop == {**collection["stop_defaults"], "beta_halfwidth": 0.2}
    targets = workflow_config.check(config, REPO / "data", SCHEMA)
    assert list(targets) == ["pw"] and targets["pw"].round_items == stop["round_items"]


SYNTHETIC = {"kind": "synthetic", "seed": 1, "n_tasks": 8}


@pytest.mark.parametrize("user, line", [
    ({"panels": {"p": {**SYNTHETIC, "analysis": ["cbc"]}}},
     "unknown key 'analysis' at panels.p.analysis: did you mean 'analyses'?"),
    ({"panels": {"p": SYNTHETIC}, "heldout": {"replicates": "many"}},
     "heldout.replicates: 'many' is not of type 'integer'"),
    ({"panels": {"p": {**SYNTHETIC, "score_range": [10, 1]}}},
     "panel 'p': score_range [10, 1] has low >= high"),
    ({"panels": {"p": {**SYNTHETIC, "analyses": ["external"]}}},
     "panel 'p': analysis 'external' needs a preference_margins panel"),
    ({"panels": {"p": {**SYNTHETIC, "calibrator": "p"}}},
     "panel 'p': `calibrator` names the panel itself"),
    ({"panels": {"p": {**SYNTHETIC, "extends": "q"}}},
     "panel 'p': `extends: q` is not a panel of this config (p)"),
    ({"panels": {"p": {"kind": "preference_margins", "collect": {"judges": ["j"]}}}},
     "panel 'p': endpoint 'j' is not defined"),
    ({"panels": {"p": {"kind": "preference_margins", "collect": {"judges": []}}}},
     "panel 'p': `collect.judges` names no endpoint"),
    ({"panels": {"p": {"kind": "preference_margins",
                       "collect": {"judges": [], "items": "nowhere.csv"}}}},
     "panel 'p': the item table `collect.items: nowhere.csv` is not there"),
    ({"panels": {"p": {"kind": "preference_margins",
                       "collect": {"judges": [], "stop": {"beta_halfwidth": 0.2,
                                                          "min_items": 50, "max_items": 10}}}}},
     "panel 'p': `collect.stop.min_items` (50) is above `max_items` (10)"),
])
def test_each_kind_of_problem_is_named(user, line):
    found = config_problems(user)
    assert any(line in problem for problem in found), found
    with pytest.raises(ValueError) as caught:
        workflow_config.check(completed(user), REPO / "data", SCHEMA)
    assert line in str(caught.value)


def test_one_error_lists_the_problems_of_every_kind():
    user = {"panels": {"p": {**SYNTHETIC, "analyses": ["external"], "calibrator": "p"},
                       "c": {"kind": "preference_margins", "collect": {"judges": ["j"]}}}}
    with pytest.raises(ValueError) as caught:
        workflow_config.check(completed(user), REPO / "data", SCHEMA)
    text = str(caught.value)
    for part in ("the config asks for analyses these panels cannot run:",
                 "  remove them from the panels' `analyses` lists",
                 "the config's panels cannot apply or extend as asked (nothing was run):",
                 "collections:", "panel 'c': endpoint 'j' is not defined"):
        assert part in text


def test_the_stop_targets_api_defaults_are_the_configs_but_for_a_direct_calls_rounds():
    from polyjudge.analyses.stopping.targets import API_DEFAULTS, StopTarget

    config = DEFAULTS["collection"]["stop_defaults"]
    assert set(API_DEFAULTS) == set(config) | {"score_range", "design_items"}
    assert set(API_DEFAULTS) == set(StopTarget.__dataclass_fields__)
    differ = {key for key in config if API_DEFAULTS[key] != config[key]}
    assert differ == {"min_items", "round_items"}  # a direct call decides after every item


# Top-level statements a stage file may hold (as Snakemake's parser compiles it to Python):
# rules and functions, includes, localrules and wildcard_constraints, imports, and constants.
DECLARATIONS = ("include", "localrules", "global_wildcard_constraints")


def is_rule(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
        and d.func.attr in ("rule", "userule") for d in node.decorator_list)


def work_at_include_time(node) -> bool:
    """Does a top-level statement of a stage file do work when the file is read?"""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
        return False
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False  # a docstring
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id == "workflow" and func.attr in DECLARATIONS)
    if isinstance(node, ast.Assign):  # a constant: UPPER_CASE names only
        return not all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)
    # rules declared per panel in a loop (report.smk's one figure job per panel) declare, too
    return not (isinstance(node, ast.For) and all(is_rule(n) for n in node.body))


def compiled_stage(path: Path) -> ast.Module:
    """A rules/*.smk file as Snakemake compiles it to Python."""
    from types import SimpleNamespace

    from snakemake import parser

    source = SimpleNamespace(get_path_or_uri=lambda secret_free=True: str(path))
    cache = SimpleNamespace(sourcecache=SimpleNamespace(open=lambda s: open(path)))
    return ast.parse(parser.parse(source, cache, {})[0])


def test_stage_files_do_no_work_when_they_are_read():
    """Config completion and checks run once, in rules/common.smk; every other rules/*.smk holds
    only declarations (no check_* call, no config change, no loop doing work)."""
    stages = sorted(p for p in (REPO / "rules").glob("*.smk") if p.name != "common.smk")
    assert len(stages) > 20
    found = [f"{path.name}:{node.lineno}: {ast.unparse(node).splitlines()[0]}"
             for path in stages for node in compiled_stage(path).body
             if work_at_include_time(node)]
    assert not found, "top-level work in a stage file:\n" + "\n".join(found)
    common = [node for node in compiled_stage(REPO / "rules" / "common.smk").body
              if work_at_include_time(node)]
    assert [ast.unparse(n).split("(")[0] for n in common] == ["config.update"]


def test_the_include_time_check_sees_work():
    for text in ("check_links()", "config['x'] = 1", "for p in PANELS:\n    p['a'] = 1",
                 "register_targets(lambda: [])", "_panel = PANELS['x']"):
        assert work_at_include_time(ast.parse(text).body[0]), text
    for text in ("workflow.include('x.smk')", "X = (1, 2)", "def f():\n    return 1",
                 "from a import b"):
        assert not work_at_include_time(ast.parse(text).body[0]), text
