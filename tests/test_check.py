"""`polyjudge check`, the exit code for CI: a results folder built here in the workflow's column
layout (docs/outputs.md) by the functions the workflow runs, with planted agreement, a planted
rank reversal and planted calibrated means; exit codes 0, 1 and 2 through the installed console
script, one line per check, and a JUnit file that parses."""
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import polyjudge
from polyjudge.analyses.card import judge_card
from polyjudge.analyses.leaderboard import leaderboard
from polyjudge.analyses.reversal import rank_reversal
from polyjudge.cli import main
from polyjudge.data.panel import Panel
from polyjudge.gate import evaluate, read_conditions
from polyjudge.gate.checks import holds
from polyjudge.gate.evidence import BIAS, ResultsFolder

BIN = Path(sys.executable).parent / "polyjudge"
COMMAND = str(BIN) if BIN.exists() else shutil.which("polyjudge")
LANGUAGES = ("en", "de", "fr")
ERRORS = {("en", "good"): 0.05, ("de", "good"): 0.05, ("fr", "good"): 0.05,
          ("en", "poor"): 0.05, ("de", "poor"): 0.40, ("fr", "poor"): 0.05}
"""Planted error rates of two judges: ``poor`` guesses in German (kappa about 0.2)."""


def check(*args, cwd=None):
    assert COMMAND, "the polyjudge console script is not installed (pip install -e .)"
    return subprocess.run([COMMAND, "check", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def planted_panel(seed=3, n_tasks=40) -> Panel:
    """Three backbones: A above B by 20 points in en and fr, B above A by 20 in de, C in the
    middle: every pair reverses between en and de, none between en and fr (planted)."""
    rng = np.random.default_rng(seed)
    means = np.array([[60, 40, 50], [40, 60, 50], [61, 41, 50]], dtype=float)
    values = means[None] + rng.normal(0, 5, (n_tasks, 3, 3))
    return Panel(values, tuple(f"t{t:02d}" for t in range(n_tasks)), LANGUAGES,
                 ("A", "B", "C"))


def planted_card():
    rng = np.random.default_rng(8)
    items = [f"i{i:03d}" for i in range(400)]
    truth = pd.Series(rng.integers(0, 2, len(items)).astype(float), index=items)
    rows = []
    for (language, judge), error in ERRORS.items():
        wrong = rng.random(len(items)) < error
        rows.append(pd.DataFrame({"item": items, "cluster": [i[:3] for i in items],
                                  "language": language, "judge": judge,
                                  "verdict": np.where(wrong, 1 - truth, truth)}))
    return judge_card(pd.concat(rows, ignore_index=True), truth, replicates=200, seed=1,
                      languages=list(LANGUAGES))


BIASES = pd.DataFrame(
    [("en", "good", "position", 0.01, -0.02, 0.04, 400, 40, "first-seat share minus 1/2"),
     ("de", "good", "position", 0.12, 0.08, 0.16, 400, 40, "first-seat share minus 1/2"),
     ("en", "good", "length", 0.02, -0.01, 0.05, 400, 40, "per doubling"),
     ("all languages", "good", "position", 0.06, 0.04, 0.08, 800, 40,
      "first-seat share minus 1/2")], columns=BIAS)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """``results/`` of one panel, ``web``, with the files `polyjudge check` reads, each made by
    the function the workflow's rule runs (card, leaderboard, reversal) on planted data."""
    root = tmp_path_factory.mktemp("gate") / "results"
    folder = root / "web"
    for sub in ("card", "cbc", "reversal"):
        (folder / sub).mkdir(parents=True)
    panel = planted_panel()
    planted_card().agreement.to_csv(folder / "card" / "agreement.csv", index=False)
    BIASES.to_csv(folder / "card" / "bias.csv", index=False)
    leaderboard(panel, None, 200, 0.95, 0).to_csv(folder / "cbc" / "leaderboard.csv",
                                                  index=False)
    rank_reversal(panel, 0.05).to_csv(folder / "reversal" / "pairs.csv", index=False)
    (folder / "reversal" / "summary.json").write_text('{"fdr": 0.05}')
    panel.to_frame().to_parquet(folder / "tensor.parquet", index=False)
    (root / "panels.json").write_text('{"panels": ["web"]}')
    return root


PASSING = """\
conditions:
  - check: agreement
    judge: good
    language: "*"
    at_least: 0.7
  - check: bias
    bias: position
    language: en
    at_most: 0.05
  - check: reversal
    languages: [en, fr]
  - check: mean
    judge: C
    language: [en, de]
    at_least: 40
    at_most: 60
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_all_conditions_hold_exit_0_one_line_per_check_and_junit(results, tmp_path):
    conditions = write(tmp_path, "gate.yaml", PASSING)
    done = check(results, "--conditions", conditions, "--junit", tmp_path / "check.xml")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # 3 languages + 1 + 1 + 2 cells, then the verdict
    assert len(lines) == 8 and lines[-1] == "PASS: all 7 checks of 4 conditions hold"
    assert all(line.endswith(": PASS") for line in lines[:-1])
    card = pd.read_csv(results / "web" / "card" / "agreement.csv").query(
        "language == 'en' and judge == 'good' and measure == 'cohen_kappa'").iloc[0]
    assert lines[0] == (f"1 agreement web en good cohen_kappa: {card['estimate']:.4g}, interval "
                        f"{card['ci_low']:.4g} to {card['ci_high']:.4g}; needs interval >= 0.7: "
                        "PASS") and card["ci_low"] > 0.85  # planted: 5% errors, kappa 0.9
    assert lines[3].startswith("2 bias web en good position (first-seat share minus 1/2): "
                               "0.01, interval -0.02 to 0.04; needs interval <= 0.05")
    assert lines[4].startswith("3 reversal web en vs fr: 0 significant (of 3 backbone pairs)")
    suite = ET.parse(tmp_path / "check.xml").getroot()
    cases = suite.findall("./testsuite/testcase")
    assert suite.get("tests") == "7" and suite.get("failures") == "0" and len(cases) == 7
    assert not suite.findall(".//failure")
    assert [c.findtext("system-out") for c in cases] == lines[:-1]


def test_a_failing_condition_exits_1_and_junit_names_the_failures(results, tmp_path):
    conditions = write(tmp_path, "gate.yaml", PASSING.replace("judge: good", "judge: '*'")
                       .replace("[en, fr]", "[en, de]"))
    done = check(results, "--conditions", conditions, "--junit", tmp_path / "check.xml")
    assert done.returncode == 1, done.stderr
    failed = [line for line in done.stdout.splitlines() if line.endswith(": FAIL")]
    # the poor judge in German, and the planted reversals between en and de
    assert len(failed) == 2
    assert failed[0].startswith("1 agreement web de poor cohen_kappa: 0.")
    assert failed[1].startswith("3 reversal web en vs de: 3 significant (of 3 backbone pairs: "
                                "A/B en 21.4 vs de -19.54, q ")
    assert done.stdout.splitlines()[-1] == ("FAIL: 2 of 10 checks of 4 conditions fail "
                                            "(conditions 1, 3)")
    suite = ET.parse(tmp_path / "check.xml").getroot()
    failures = suite.findall("./testsuite/testcase/failure")
    assert suite.get("failures") == "2" and [f.get("message") for f in failures] == failed


def test_bad_input_exits_2_with_one_message_and_writes_nothing(results, tmp_path):
    conditions = write(tmp_path, "gate.yaml", PASSING.replace("judge: good", "judge: god"))
    done = check(results, "--conditions", conditions, "--junit", tmp_path / "check.xml")
    assert done.returncode == 2 and not done.stdout and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"polyjudge check: error: {results / 'web/card/agreement.csv'}"
                                  ": no judge 'god' (judge: god)")
    assert "did you mean 'good'?" in done.stderr
    assert not (tmp_path / "check.xml").exists()


@pytest.mark.parametrize("arguments, said", [
    (["--bias", "bias=position", "at_most=0.1", "judge=poor"], "no judge 'poor' (judge: poor)"),
    (["--agreement", "measure=kappa", "at_least=0.1"],
     "no measure 'kappa' (measure: kappa)\n  expected: one of percent_agreement, cohen_kappa"),
    (["--agreement", "language=es", "at_least=0.1"], "no language 'es' (language: es)"),
    (["--mean", "judge=C", "at_lest=40"], "--mean: Additional properties are not allowed "
                                          "('at_lest' was unexpected)"),
    (["--mean", "judge=C"], "--mean: needs a threshold: at_least, at_most or both"),
    (["--reversal", "languages=en"], "--reversal: languages: ['en'] is not two languages"),
    (["--reversal", "languages=en,es"], "tensor.parquet: no language 'es'"),
    (["--agreement", "panel=wbe", "at_least=0.1"], "no panel 'wbe' (panel: wbe)"),
    (["--mean", "judge=C", "at_least=x"], "--mean: at_least='x' is not a number"),
    ([], "no conditions"),
])
def test_every_kind_of_bad_input_is_named(results, capsys, arguments, said):
    assert main(["check", str(results), *arguments]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


@pytest.mark.parametrize("text, said", [
    ("conditions:\n  - check: agreement\n    judge: *\n    at_least: 1\n",
     "is not valid YAML at line 3"),
    ("conditions:\n  - check: agreemnt\n", "conditions[0].check: 'agreemnt' is not one of"),
    ("conditions:\n  - check: bias\n    bias: position\n    at_most: 0.1\n    by: mean\n",
     "conditions[0].by: 'mean' is not one of ['interval', 'estimate']"),
    ("checks:\n  - check: bias\n", "Additional properties are not allowed ('checks' was"),
])
def test_a_conditions_file_the_schema_refuses_is_named_with_its_key(results, tmp_path,
                                                                    capsys, text, said):
    path = write(tmp_path, "gate.yaml", text)
    assert main(["check", str(results), "--conditions", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: " in err and said in err


def test_a_missing_file_or_column_is_bad_input(results, tmp_path, capsys):
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    (copy / "web" / "card" / "bias.csv").unlink()
    pd.read_csv(results / "web" / "cbc" / "leaderboard.csv").drop(columns="mean_cbc_high") \
        .to_csv(copy / "web" / "cbc" / "leaderboard.csv", index=False)
    assert main(["check", str(copy), "--bias", "bias=position", "at_most=0.1"]) == 2
    assert f"{copy / 'web/card/bias.csv'}: no such file" in capsys.readouterr().err
    assert main(["check", str(copy), "--mean", "judge=C", "at_least=1"]) == 2
    assert "leaderboard.csv: no column 'mean_cbc_high'" in capsys.readouterr().err


def test_interval_and_estimate_thresholds_known_answers():
    assert holds({"at_least": 0.4}, 0.5, 0.41, 0.6) == (True, "")
    assert holds({"at_least": 0.4}, 0.5, 0.39, 0.6)[0] is False  # the interval crosses it
    assert holds({"at_least": 0.4, "by": "estimate"}, 0.5, 0.39, 0.6)[0] is True
    assert holds({"at_most": 0.1}, 0.05, 0.0, 0.1)[0] is True  # a bound is inclusive
    assert holds({"at_least": 1, "at_most": 3}, 2, 0.5, 2.5)[0] is False
    assert holds({"at_least": 0.4}, np.nan, np.nan, np.nan) == (False,
                                                                "not defined on these data")
    assert "no interval" in holds({"at_least": 0.4}, 0.5, np.nan, np.nan)[1]


def test_a_line_says_when_a_number_or_its_interval_is_missing():
    from polyjudge.gate import Check
    undefined = Check(2, "agreement", "web de poor cohen_kappa", np.nan, np.nan, np.nan,
                      "interval >= 0.4", False, "not defined on these data")
    assert undefined.line() == ("2 agreement web de poor cohen_kappa: undefined (not defined on "
                                "these data); needs interval >= 0.4: FAIL")
    bare = Check(1, "mean", "web en C calibrated mean", 50.0, np.nan, np.nan,
                 "estimate >= 40", True)
    assert bare.line() == ("1 mean web en C calibrated mean: 50, no interval; needs estimate "
                           ">= 40: PASS")


def test_a_flag_and_a_file_give_the_same_checks(results, tmp_path):
    path = write(tmp_path, "gate.yaml", PASSING)
    from_file = evaluate(read_conditions(path), ResultsFolder(results))
    assert main(["check", str(results), "--agreement", "judge=good", "language=*",
                 "at_least=0.7", "--bias", "bias=position", "language=en", "at_most=0.05",
                 "--reversal", "languages=en,fr", "--mean", "judge=C", "language=en,de",
                 "at_least=40", "at_most=60"]) == 0
    assert [c.line() for c in from_file] == [c.line() for c in evaluate(
        read_conditions(path), ResultsFolder(results / "web"))]  # a panel's own folder


def test_the_reversal_of_any_two_languages_is_the_panels_own_test(results):
    conditions = [{"check": "reversal", "languages": "*"}]
    [found] = evaluate(conditions, ResultsFolder(results))
    pairs = pd.read_csv(results / "web" / "reversal" / "pairs.csv")
    assert found.estimate == pairs["significant"].sum() == 3 and not found.passed
    assert "A/B en" in found.note and "vs de" in found.note


def test_a_pair_counts_when_it_reverses_with_q_at_most_the_fdr(tmp_path):
    from polyjudge.gate.checks import reversal_checks
    pairs = pd.DataFrame({"backbone_i": ["A", "A", "B"], "backbone_j": ["B", "C", "C"],
                          "witness_a": "en", "witness_b": "de", "d_a": [3.0, 1.0, 2.0],
                          "d_b": [-2.0, 1.0, -1.0], "delta": [6.0, 0.0, 2.0],
                          "p_value": [0.001, 1.0, 0.03], "q_value": [0.003, 1.0, 0.045],
                          "reversed": [True, False, True], "significant": [True, False, True]})
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    read = pd.read_csv(tmp_path / "pairs.csv", keep_default_na=False, na_values=[""])
    condition = {"check": "reversal", "languages": "*"}
    [at_5] = reversal_checks(1, condition, "p", read, 0.05, "pairs.csv")
    [at_1] = reversal_checks(1, condition, "p", read, 0.01, "pairs.csv")
    assert (at_5.estimate, at_1.estimate) == (2, 1) and not at_1.passed
    assert at_1.note == "of 3 backbone pairs: A/B en 3 vs de -2, q 0.003"


def test_a_run_table_is_checked_through_the_public_functions(tmp_path, capsys):
    panel = planted_panel()
    runs = panel.to_frame().drop(columns="n_runs", errors="ignore").rename(
        columns={"task": "prompt"})
    runs.to_csv(tmp_path / "runs.csv", index=False)
    done = check(tmp_path / "runs.csv", "--task", "prompt", "--mean", "judge=C",
                 "language=en", "at_least=0", "--reversal", "languages=en,de",
                 "--replicates", "100")
    assert done.returncode == 1, done.stderr
    mean, reversal, verdict = done.stdout.splitlines()
    calibrated = polyjudge.calibrate(runs, task="prompt").rankings
    expected = calibrated.query("language == 'en' and backbone == 'C'")["mean_cbc"].item()
    assert mean.startswith(f"1 mean runs en C calibrated mean: {expected:.4g}, interval ")
    assert reversal.startswith("2 reversal runs en vs de: 3 significant") and \
        reversal.endswith("FAIL")
    assert main(["check", str(tmp_path / "runs.csv"), "--task", "prompt", "--bias",
                 "bias=length", "at_most=1"]) == 2
    assert "a bias condition needs a results folder" in capsys.readouterr().err


def test_agreement_on_a_run_table_is_the_judge_card_of_its_scores(tmp_path, capsys):
    from sklearn.metrics import cohen_kappa_score
    rng = np.random.default_rng(4)
    tasks = [f"q{t:02d}" for t in range(80)]
    gold = rng.integers(0, 2, len(tasks))
    rows = []
    for language, judge, error in (("en", "a", 0.0), ("de", "a", 0.3)):
        said = np.where(rng.random(len(tasks)) < error, 1 - gold, gold)
        rows.append(pd.DataFrame({"prompt": tasks, "language": language, "backbone": judge,
                                  "score": said.astype(float)}))
    runs = pd.concat(rows)
    runs.to_csv(tmp_path / "runs.csv", index=False)
    pd.DataFrame({"prompt": tasks, "gold": gold}).to_csv(tmp_path / "gold.csv", index=False)
    assert main(["check", str(tmp_path / "runs.csv"), "--task", "prompt", "--reference",
                 str(tmp_path / "gold.csv"), "--label", "gold", "--agreement", "at_least=0.6",
                 "--replicates", "200"]) == 1
    en, de, verdict = capsys.readouterr().out.splitlines()
    assert en.startswith("1 agreement runs en a cohen_kappa: 1, interval 1 to 1;")
    kappa = cohen_kappa_score(gold, runs.query("language == 'de'")["score"])  # the peer
    assert de.startswith(f"1 agreement runs de a cohen_kappa: {kappa:.4g}, interval ")
    assert de.endswith("FAIL") and verdict == "FAIL: 1 of 2 checks of 1 condition fails " \
                                              "(condition 1)"


def test_the_junit_file_reads_with_a_junit_library(results, tmp_path):
    junitparser = pytest.importorskip("junitparser")
    conditions = write(tmp_path, "gate.yaml", PASSING.replace("[en, fr]", "[en, de]"))
    assert main(["check", str(results), "--conditions", str(conditions), "--junit",
                 str(tmp_path / "check.xml")]) == 1
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "check.xml"))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 7 and sum(not case.is_passed for case in cases) == 1


def docs_blocks(language: str) -> list[str]:
    """The ``language`` code blocks of docs/ci.md, in order."""
    import re
    page = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", page, flags=re.S)


def test_the_docs_conditions_and_github_workflow_are_valid(tmp_path):
    import shlex

    import yaml

    from polyjudge.cli import build_parser
    conditions = read_conditions(write(tmp_path, "gate.yaml", docs_blocks("yaml")[0]))
    assert [c["check"] for c in conditions] == ["agreement", "agreement", "reversal", "mean"]
    workflow = yaml.safe_load(docs_blocks("yaml")[1])
    steps = {step.get("name"): step for step in workflow["jobs"]["judges"]["steps"]}
    command = shlex.split(steps["Check the judges"]["run"])
    assert command[:2] == ["polyjudge", "check"]
    args = build_parser().parse_args(command[1:])
    assert (args.path, args.conditions, args.junit) == ("results", "gate.yaml", "check.xml")
    assert steps["Show the checks"]["if"] == "always()"
    shown = [line for block in docs_blocks("bash") for line in
             block.replace("\\\n", " ").splitlines() if line.startswith("polyjudge check")]
    assert len(shown) == 3  # every command the page shows parses
    for line in shown:
        build_parser().parse_args(shlex.split(line)[1:])


@pytest.mark.slow
def test_the_default_runs_results_are_checked_as_the_docs_show(readme_reproduction, tmp_path):
    # DevAI's judges do not agree with the human labels in any language; the original English
    # Agent-as-a-Judge does (kappa about 0.78; docs/methods.md section 11)
    conditions = write(tmp_path, "gate.yaml", docs_blocks("yaml")[0])
    done = check("results", "--conditions", conditions, "--junit", tmp_path / "check.xml",
                 cwd=readme_reproduction)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    shown = [line for line in docs_blocks("text")[0].splitlines() if line != "..."]
    assert set(shown) <= set(lines) and len(lines) == 10  # the page's lines, verbatim
    assert lines[0].endswith("PASS") and lines[-2].endswith("PASS")
    assert sum(line.startswith("2 agreement devai Swahili") and line.endswith("FAIL")
               for line in lines) == 6
    assert len(ET.parse(tmp_path / "check.xml").getroot().findall(".//testcase")) == 9
