"""A new user's first hour, in what they write rather than in their tables: a misspelt key at
any depth of a config is named with the key meant, and every command written in a config,
docstring or doc parses as meant. The mistakes in a user's tables are tests/test_first_hour.py."""
import re
import subprocess
from pathlib import Path

import pytest

from conftest import dry_run_in
from polyjudge import cli

REPO = Path(__file__).resolve().parents[1]


# --- item 3: a typo at any depth of the config is named with the key meant ---------------------

def schema_keys(schema, root, path=(), fixed=()):
    """(path, fixed, key) for every key the schema declares, at every depth: ``path`` leads to
    the object holding ``key`` ("x" for an entry of a collection such as `panels`), ``fixed``
    lists the (path, key, value) the object needs for ``key`` to be valid (a panel's kind)."""
    while isinstance(schema, dict) and set(schema) == {"$ref"}:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        yield from schema_keys({"$ref": schema["$ref"]}, root, path, fixed)
    names = schema.get("propertyNames", {}).get("enum")
    for name in names or ():
        yield path, fixed, name
    for key, rule in schema.get("properties", {}).items():
        yield path, fixed, key
        yield from schema_keys(rule, root, path + (key,), fixed)
    if isinstance(schema.get("additionalProperties"), dict) and not names:
        yield from schema_keys(schema["additionalProperties"], root, path + ("x",), fixed)
    for branch in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        yield from schema_keys(branch, root, path, fixed)
    if "if" in schema:
        const = {key: rule["const"] for key, rule in schema["if"].get("properties", {}).items()
                 if "const" in rule}
        yield from schema_keys(schema.get("then", {}), root, path,
                               fixed + tuple((path, key, value) for key, value in const.items()))


def misspelt(key: str) -> str:
    """Two neighbouring letters swapped near the middle (task -> taks); a doubled last letter
    for a key without two different neighbours."""
    for i in range(max(len(key) // 2 - 1, 0), len(key) - 1):
        if key[i] != key[i + 1]:
            return key[:i] + key[i + 1] + key[i] + key[i + 2:]
    return key + key[-1]


def config_with(path, fixed, key) -> dict:
    config = {}

    def node(at):
        here = config
        for part in at:
            here = here.setdefault(part, {})
        return here
    for at, name, value in fixed:
        node(at)[name] = value
    node(path)[key] = 1
    return config


def test_every_schema_key_misspelt_is_named_with_the_key_meant():
    import yaml
    from polyjudge.data.config import check_keys
    schema = yaml.safe_load(open(REPO / "config/schema/config.schema.yaml"))
    cases = sorted(set(schema_keys(schema, schema)), key=str)
    assert len(cases) > 300 and any(key == "task" and path[-1] == "columns"
                                    for path, _, key in cases)
    wrong = []
    for path, fixed, key in cases:
        typo = misspelt(key)
        where = ".".join(map(str, path + (typo,)))
        with pytest.raises(ValueError) as caught:
            check_keys(config_with(path, fixed, typo), schema)
        lines = str(caught.value).splitlines()
        if not (len(lines) == 3 and
                f"unknown key '{typo}' at {where}: did you mean '{key}'?" in lines[1]):
            wrong.append((where, lines))
    assert not wrong, wrong[:5]


@pytest.mark.slow
def test_a_typo_in_a_users_config_stops_the_run_with_the_message_alone(tmp_path):
    """Snakemake framed the message as "ValueError in file .../rules/common.smk, line 30" and
    traceback lines, as if the workflow were at fault: the user now reads the message alone,
    and the key it offers runs."""
    (tmp_path / "my_data").mkdir()
    (tmp_path / "my_data" / "my_runs.csv").write_text(
        "prompt_id,lang,judge_model,pct\n" + "".join(
            f"p{t},{lang},{judge},{(7 * t + 3 * i + j) % 100}\n" for t in range(4)
            for i, lang in enumerate(["en", "de"]) for j, judge in enumerate(["a", "b"])))
    panel = {"kind": "judge_runs", "runs": "my_runs.csv", "score_rnage": [0, 100],
             "columns": {"task": "prompt_id", "language": "lang", "backbone": "judge_model",
                         "score": "pct"}, "analyses": ["cbc"]}
    config = {"data_dir": "my_data", "panels": {"mine": panel},
              "simulation": {"scenarios": {}}}

    result = dry_run_in(tmp_path, config)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    found = re.search(r"unknown key 'score_rnage' at panels\.mine\.score_rnage: did you mean "
                      r"'(\w+)'\?", out)
    assert found and found.group(1) == "score_range", out
    assert "Error in file" not in out and "Traceback" not in out and "common.smk" not in out
    assert not re.search(r'^\s*File "', out, re.M), out  # no traceback line
    panel[found.group(1)] = panel.pop("score_rnage")  # the key the message offers
    fixed = dry_run_in(tmp_path, config)
    assert fixed.returncode == 0, fixed.stdout[-2000:] + fixed.stderr[-2000:]


# --- item 4: every command written in a config, docstring or doc parses as meant ---------------

COMMAND = re.compile(r"(?:^|`|&&\s*)((?:snakemake|polyjudge) [^`\n]*)")


def written_commands() -> list[tuple[str, str]]:
    """(where, command) of every snakemake / polyjudge command line in the tracked configs, docs,
    rule files and docstrings (tests excluded): at a line start (after ``#`` / ``$``), in
    backticks or after ``&&``; continued lines (``\\``) joined, trailing comments cut."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    found = []
    for name in files:
        if name.startswith("tests/") or not re.search(r"(\.(md|ya?ml|py|smk)|Snakefile)$", name):
            continue
        text = re.sub(r"\\+\n\s*", " ", (REPO / name).read_text())  # continued lines
        for number, line in enumerate(text.splitlines(), 1):
            for match in COMMAND.finditer(line.strip().lstrip("#$ ")):
                command = re.split(r"\s{2,}#|\s#\s", match.group(1))[0].strip().rstrip(".;,:)")
                words = command.split()
                if words[0] == "polyjudge":  # a whole command, not a mention of one
                    complete = "-o" in words or "--help" in words
                else:
                    complete = len(words) > 1 and (words[1].startswith("-") or "/" in words[1]
                                                   or words[1] in RULES)
                if complete:
                    found.append((f"{name}:{number}", command))
    return found


RULES = set(re.findall(r"^(?:rule|checkpoint) (\w+)", "\n".join(
    p.read_text() for p in [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]), re.M))


def test_every_written_command_parses_with_its_targets_and_files():
    import shlex
    from snakemake.cli import get_argument_parser
    commands = written_commands()
    assert any("judge_ls_paper.yaml" in c for _, c in commands)
    assert any(c.startswith("polyjudge fit") for _, c in commands)
    snakemake_parser, polyjudge_parser = get_argument_parser(), cli.build_parser()
    wrong = []
    for where, command in commands:
        words = re.sub(r"\[[^]]*\]", "", command.replace("--cores N", "--cores 2"))  # [optional]
        words = shlex.split(words)
        if words[0] == "polyjudge":
            try:
                polyjudge_parser.parse_args(words[1:])
            except SystemExit as stop:
                if stop.code != 0:  # --help exits 0
                    wrong.append((where, command, "polyjudge's parser refuses it"))
            continue
        args = snakemake_parser.parse_args(words[1:])
        # a command run from a project folder beside the clone names the clone as ../polyjudge
        beside = args.snakefile is not None and str(args.snakefile).startswith("../polyjudge/")
        for path in args.configfile or ():
            if beside and str(path).startswith("../polyjudge/"):
                path = Path(str(path)[len("../polyjudge/"):])
            if path.suffix not in (".yaml", ".yml", ".json"):
                wrong.append((where, command, f"--configfile takes '{path}' as a config file"))
            elif "/" in str(path) and not (REPO / path).is_file():
                wrong.append((where, command, f"no config file {path}"))
        for target in args.targets:
            if target not in RULES and not re.match(r"(polyjudge/)?results/", target):
                wrong.append((where, command, f"target '{target}' is no rule or output"))
    assert not wrong, wrong
