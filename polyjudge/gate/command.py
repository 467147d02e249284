"""``polyjudge check``: hold a finished results folder (or a run table) to conditions and
return an exit code a CI can use: 0 when every condition holds, 1 when one fails, 2 when the
input is bad (registered by :mod:`polyjudge.cli`, which prints the message of bad input)."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..data import io
from ..data.atomic import write_atomically
from ..data.errors import InputError
from .checks import evaluate
from .conditions import KINDS, flag_condition, read_conditions
from .evidence import ResultsFolder, RunTable
from .junit import junit_xml

EXIT_FAILED = 1

EXAMPLE = """\
examples:
  polyjudge check results --conditions gate.yaml --junit check.xml
  polyjudge check results --agreement panel=devai measure=cohen_kappa at_least=0.4 \\
      --reversal panel=devai languages=English,Swahili
  polyjudge check runs.csv --mean judge=gpt-4o language=en at_least=20 at_most=60

Prints one line per checked cell: the number, its interval, the threshold, PASS or FAIL.
Exit code 0: every condition holds; 1: one fails; 2: bad input (a missing file, column,
judge, language or measure; a conditions file the schema refuses). docs/ci.md has the
conditions' keys and a GitHub Actions workflow.
"""


class _Condition(argparse.Action):
    """A condition flag: its KEY=VALUE words, kept in the order the flags were given."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.flag_conditions = [*namespace.flag_conditions, (self.dest, values)]


def add_parser(commands) -> argparse.ArgumentParser:
    check = commands.add_parser(
        "check", help="exit 1 when a judge, a bias, a reversal or a calibrated mean breaks a "
        "condition (for CI)", description="Hold a finished results folder, or a run table, to "
        "conditions written in a YAML file or as flags: a judge's agreement with the reference "
        "above a floor, a bias's interval below a ceiling, no significant rank reversal "
        "between two languages, a calibrated mean inside a range.", epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("path", metavar="RESULTS_OR_RUNS",
                       help="a results folder (results/, or one panel's folder) or a run table "
                       "(a CSV, Parquet, JSON Lines or JSON file, a folder of them or a glob)")
    check.add_argument("--conditions", metavar="YAML", help="conditions file (docs/ci.md)")
    for kind in KINDS:
        check.add_argument(f"--{kind}", nargs="+", action=_Condition, metavar="KEY=VALUE",
                           help=f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} condition as "
                           "KEY=VALUE words (the conditions file's keys)")
    check.add_argument("--junit", metavar="XML", help="also write the checks as JUnit XML")
    table = check.add_argument_group("a run table (computed here: polyjudge.calibrate, "
                                     "polyjudge.judge_card, the reversal tests)")
    for name in ("task", "language", "backbone", "score", "framework"):
        table.add_argument(f"--{name}", metavar="COL", default=name,
                           help=f"column holding the {name} (default: {name})")
    table.add_argument("--reference", metavar="FILE", help="reference labels of the tasks "
                       "(columns TASK and --label), for agreement conditions")
    table.add_argument("--label", default="label", metavar="COL",
                       help="column of the reference label (default: label)")
    table.add_argument("--level", choices=("nominal", "ordinal", "interval"), default="nominal",
                       help="level of measurement of scores and labels (default nominal)")
    table.add_argument("--replicates", type=int, default=1000, metavar="N",
                       help="bootstrap replicates of the intervals (default 1000)")
    table.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    check.set_defaults(flag_conditions=[])
    return check


def _evidence(args):
    if ResultsFolder.holds(args.path):
        return ResultsFolder(args.path)
    from ..data.sources import read_runs
    columns = {name: getattr(args, name) for name in ("task", "language", "backbone", "score",
                                                      "framework")}
    runs = read_runs(args.path, {k: v for k, v in columns.items() if k != v})
    reference = None
    if args.reference:
        reference = io.read_table(args.reference, [args.label], text=("task",),
                                  mapping={"task": args.task})
    return RunTable(runs, args.path, reference, args.reference or "reference", args.label,
                    args.level, args.replicates, args.seed)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + "s" * (count != 1)


def run(args) -> tuple[str, int]:
    """The report (one line per check, then the verdict) and the exit code: 0 or 1. Bad input
    raises, so the command prints its message and returns 2, writing nothing."""
    conditions = read_conditions(args.conditions) if args.conditions else []
    conditions += [flag_condition(kind, words) for kind, words in args.flag_conditions]
    if not conditions:
        raise InputError("polyjudge check", "no conditions",
                         "--conditions FILE or a condition flag (--agreement, --bias, "
                         "--reversal, --mean); docs/ci.md")
    if not Path(args.path).exists() and not any(c in args.path for c in "*?["):
        raise InputError(args.path, "no such file or folder", "a results folder or a run table")
    checks = evaluate(conditions, _evidence(args))
    failed = sorted({check.number for check in checks if not check.passed})
    lines = [check.line() for check in checks]
    n_failed = sum(not check.passed for check in checks)
    counted = f"{plural(len(checks), 'check')} of {plural(len(conditions), 'condition')}"
    if failed:
        lines.append(f"FAIL: {n_failed} of {counted} fail{'s' * (n_failed == 1)} "
                     f"(condition{'s' * (len(failed) > 1)} "
                     f"{', '.join(map(str, failed))})")
    else:
        lines.append(f"PASS: {'all ' * (len(checks) > 1)}{counted} hold"
                     + "s" * (len(checks) == 1))
    if args.junit:
        document = junit_xml(checks)
        write_atomically(args.junit, lambda path: Path(path).write_text(document,
                                                                        encoding="utf-8"))
    return "\n".join(lines), EXIT_FAILED if failed else 0
