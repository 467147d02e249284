"""The configuration: a user's panels replace the defaults wherever snakemake runs from, every
other setting comes from config/config.yaml, and unknown keys stop the run naming the key."""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

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
    config = {"panels": {"any_name": {"kind": "preference_margins", "files": {"judge x": "a.csv",
                                                                              "judge y": "b.csv"}}},
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


def test_user_panels_only_from_the_repository_root(user_config):
    code, text = dry_run(REPO, "--configfile", str(user_config))
    assert code == 0, text
    assert planned_panels(text) == {"mine"}


def test_user_panels_only_with_s_from_another_folder(user_config, tmp_path):
    code, text = dry_run(tmp_path, "-s", str(REPO / "Snakefile"), "--configfile", str(user_config))
    assert code == 0, text
    assert planned_panels(text) == {"mine"}


def test_user_panels_only_with_the_slurm_workflow_profile(user_config):
    code, text = dry_run(REPO, "--workflow-profile", "profiles/slurm", "--configfile",
                         str(user_config))
    assert code == 0, text
    assert planned_panels(text) == {"mine"}


def test_default_panels_without_a_user_config():
    code, text = dry_run(REPO)
    assert code == 0, text
    assert planned_panels(text) == set(DEFAULTS["panels"])


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


def test_default_panels_with_s_from_another_folder_read_the_repository_data(tmp_path):
    code, text = dry_run(tmp_path, "-s", str(REPO / "Snakefile"))
    assert code == 0, text
    assert str(REPO / "data" / "devai_ml_aaaj") in text
