"""A YAML file that does not parse names the file, the line and column, what YAML expected and
the fix, in one message without a traceback: the package's own reads (polyjudge.data.yamlfile:
the workflow's config and claims, prompt files) and `polyjudge check-yaml`. Snakemake reads a
user's --configfile itself, before any of the workflow's code runs, and says only "Config file is
not valid JSON or YAML": the test of that start-up holds what Snakemake prints, so a Snakemake
that names the line shows up here, and that the command named in its place finds the line. A
slip YAML accepts (a key indented into another mapping) reaches the workflow's check, whose
message names the file and line of the key.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from polyjudge.data import yamlfile
from polyjudge.data.errors import InputError
from polyjudge.judges import load_prompt

REPO = Path(__file__).resolve().parents[1]
# a user's config with one key indented by 3 spaces among keys indented by 4
MISINDENTED = """\
data_dir: my_data
panels:
  mine:
    kind: judge_runs
    runs: my_runs.csv
   columns: {task: prompt_id, backbone: judge_model, score: pct}
    analyses: [cbc]
"""


def error_of(function, *args) -> str:
    with pytest.raises(InputError) as caught:
        function(*args)
    return str(caught.value)


@pytest.mark.parametrize("loader", ["libyaml", "python"])
def test_a_misindented_key_names_file_line_and_column(tmp_path, monkeypatch, loader):
    if loader == "python":  # where PyYAML has no libyaml: its own words, the same place
        monkeypatch.setattr(yamlfile, "LOADER", yaml.SafeLoader)
    path = tmp_path / "my.yaml"
    path.write_text(MISINDENTED)
    message = error_of(yamlfile.read_yaml, path)
    words = {"libyaml": "did not find expected key",
             "python": "expected <block end>, but found '<block mapping start>'"}[loader]
    assert message.startswith(f"{path}: is not valid YAML at line 6, column 4: {words} (while "
                              "parsing a block mapping that starts at line 3, column 3)\n")
    assert "       6 |    columns: {task: prompt_id" in message  # the line, and a caret
    assert "\n         |    ^\n" in message
    assert message.endswith("line 6 is indented by 3 space(s), line 5 above it by 4")


def test_a_tab_and_a_value_under_a_scalar(tmp_path):
    tab = tmp_path / "tab.yaml"
    tab.write_text("panels:\n\tmine: {kind: judge_runs}\n")
    message = error_of(yamlfile.read_yaml, tab)
    assert f"{tab}: is not valid YAML at line 2, column 1" in message
    assert "spaces, not tabs, to indent (line 2 has a tab)" in message
    nested = tmp_path / "nested.yaml"
    nested.write_text("panels:\n  mine:\n    runs: my_runs.csv\n      kind: judge_runs\n")
    message = error_of(yamlfile.read_yaml, nested)
    assert f"{nested}: is not valid YAML at line 4, column 11: mapping values are not " \
        "allowed" in message
    assert "line 4 is indented by 6 space(s), line 3 above it by 4" in message


def test_valid_yaml_reads_as_safe_load(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(MISINDENTED.replace("   columns", "    columns"))
    assert yamlfile.read_yaml(path) == yaml.safe_load(path.read_text())
    assert yamlfile.read_yaml(REPO / "config" / "config.yaml")["data_dir"] == "data"


def test_a_prompt_file_that_is_not_yaml_names_its_line(tmp_path):
    good = (REPO / "config" / "prompts").glob("*.yaml")
    text = next(iter(sorted(good))).read_text().splitlines()
    indented = next(i for i, line in enumerate(text) if line.startswith("  ") and ":" in line)
    text[indented] = " " + text[indented]  # one key one space further in
    path = tmp_path / "prompt.yaml"
    path.write_text("\n".join(text) + "\n")
    message = error_of(load_prompt, path)
    assert message.startswith(f"{path}: is not valid YAML at line ") and "^" in message


# the same slip where YAML accepts it: `analyses` two spaces too far left is a panel of that name
MISPLACED = MISINDENTED.replace("   columns", "    columns").replace("    analyses", "  analyses")


def test_key_lines_and_the_config_check_name_where_a_key_was_set(tmp_path):
    from polyjudge.workflow_config import located
    path = tmp_path / "my.yaml"
    path.write_text(MISPLACED + "heldout:\n  methods: [Raw,\n    CBC]\n")
    lines = yamlfile.key_lines(path)
    assert lines["panels.mine.columns"] == 6 and lines["panels.analyses"] == 7
    assert lines["heldout.methods.1"] == 10 and lines["panels.analyses.0"] == 7
    said = located(["  panels.analyses: ['cbc'] is not of type 'object'",
                    "  unknown key 'analysis' at panels.mine.kind: did you mean?\n    more",
                    "  unknown value 'x y' in heldout.methods: one of",
                    "  panels.mine.score_range: from the defaults, no line"], [path])
    assert said == [f"  panels.analyses: ['cbc'] is not of type 'object' ({path}, line 7)",
                    f"  unknown key 'analysis' at panels.mine.kind: did you mean? ({path}, "
                    "line 4)\n    more",
                    f"  unknown value 'x y' in heldout.methods: one of ({path}, line 9)",
                    "  panels.mine.score_range: from the defaults, no line"]


@pytest.mark.slow
def test_snakemake_start_up_with_a_key_indented_into_the_wrong_mapping(tmp_path):
    """Valid YAML, the wrong place: the workflow's own check names the file and the line."""
    from conftest import dry_run_in
    result = dry_run_in(tmp_path, MISPLACED)
    said = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in said, said
    assert "  panels.analyses: ['cbc'] is not of type 'object' (my.yaml, line 7)\n" in said, \
        said
    assert said.count("panels.analyses") == 1  # one line per problem


@pytest.mark.slow
def test_snakemake_start_up_with_a_misindented_configfile(tmp_path):
    """What a user meets: `snakemake -n --configfile my.yaml` (Snakemake 9.27 names neither
    the file nor the line, and prints no traceback), then the command docs/running.md gives."""
    from conftest import dry_run_in
    started = dry_run_in(tmp_path, MISINDENTED)
    said = started.stdout + started.stderr
    assert started.returncode != 0 and "Traceback" not in said, said
    assert "Config file is not valid JSON or YAML" in said, said  # Snakemake's own words
    if "line 6" in said:  # pragma: no cover - a Snakemake that names the line
        pytest.fail("Snakemake now names the line: docs/running.md can drop check-yaml")
    command = shutil.which("polyjudge", path=str(Path(sys.executable).parent)) or "polyjudge"
    checked = subprocess.run([command, "check-yaml", "my.yaml"], cwd=tmp_path,
                             capture_output=True, text=True)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert checked.stderr.startswith("polyjudge check-yaml: error: my.yaml: is not valid YAML "
                                     "at line 6, column 4:"), checked.stderr


@pytest.mark.slow
def test_the_workflows_own_config_not_yaml_stops_naming_its_line(tmp_path):
    """config/config.yaml edited by hand: `snakemake -n` stops at start-up with its line."""
    from conftest import dry_run_in
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    for part in ("Snakefile", "rules", "config", "workflow_scripts", "report", "profiles"):
        copy = shutil.copytree if (REPO / part).is_dir() else shutil.copy
        copy(REPO / part, workflow / part)
    config = workflow / "config" / "config.yaml"
    lines = config.read_text().splitlines()
    at = lines.index(next(line for line in lines if line.startswith("  columns:")))
    lines[at] = " " + lines[at]
    config.write_text("\n".join(lines) + "\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    result = dry_run_in(mine, {"simulation": {"scenarios": {}}},
                        snakefile=workflow / "Snakefile")
    said = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in said, said
    assert f"{config}: is not valid YAML at line {at + 2}, column 3" in said, said
