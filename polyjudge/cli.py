"""The ``polyjudge`` console script: fit a calibrator on a run table, apply it to new runs.

``polyjudge fit runs.csv -o calibrator.json`` and ``polyjudge apply --calibrator calibrator.json
new_runs.csv -o calibrated.csv [--rankings rankings.csv]`` (docs/api.md, "From the shell");
``polyjudge check-yaml my.yaml`` names the line of a YAML error (Snakemake does not);
``polyjudge check results --conditions gate.yaml`` returns 1 when a condition fails (docs/ci.md).
Run tables are the workflow's sources (:mod:`polyjudge.data.sources`): a CSV, Parquet, JSON Lines
or JSON file, a folder of them or a glob, with ``--template`` / ``--partitioning`` for fields
in the paths; the column flags are the workflow's ``columns`` mapping. Bad input gets one
message on stderr naming the flag to change, exit code 2, no traceback, and no output file
(outputs are written to a temporary file and renamed).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import warnings

from . import audit, labelling
from .calibrator import COLUMN_PARAMS, DEFAULT_BAND_REPLICATES, UNSEEN_POLICIES, Calibrator
from .data import io, sources
from .data.atomic import write_atomically
from .data.errors import messages_for
from .data.path_fields import POLICIES
from .data.spec import RunSpec
from .data.yamlfile import read_yaml
from .gate import command as check_command
from .report.page import command as compare_command

EXIT_INPUT = 2

FIT_EXAMPLE = """\
example:
  polyjudge fit data/devai_ml_aaaj/run_level_scores.parquet -o calibrator.json
  polyjudge fit my_runs.csv -o calibrator.json --task prompt_id --backbone judge_model \\
      --score pct --score-range 0 100 --framework seed
  polyjudge fit judges/ -o calibrator.json --template "{backbone}/{language}.jsonl"

The run table is long: one row per judge run with task, language, backbone, score and optionally
framework columns (name yours with the column options). It may be one file, a folder of CSV,
Parquet, JSON Lines or JSON files, or a glob (quoted: 'runs/*.csv'); --template takes fields
from the paths. The calibrator carries a band of beta (500 task bootstraps by default), so
`polyjudge apply --rankings` gives rank intervals that hold.
"""

APPLY_EXAMPLE = """\
example:
  polyjudge apply --calibrator calibrator.json new_runs.csv -o calibrated.csv \\
      --rankings rankings.csv
  polyjudge apply --calibrator calibrator.json new_runs.parquet -o calibrated.parquet --unseen raw

Writes the runs with columns beta, score_cbc (= score - beta), score_cbc_low / score_cbc_high
(when the calibrator has a band) and calibrated; --rankings writes the per-language ranking of
the backbones on the new runs with rank intervals and the probability of ranking first.
Column names default to those the calibrator was fitted with.
"""


def _column_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    group = parser.add_argument_group("columns (the workflow's `columns` mapping)")
    for name in COLUMN_PARAMS:
        extra = "" if name != "framework" else " (no such column: one run per cell)"
        group.add_argument(f"--{name}", metavar="COL", default=name if defaults else None,
                           help=f"column holding the {name}{extra}" + (
                               f" (default: {name})" if defaults else
                               " (default: the calibrator's)"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="polyjudge", description="Calibrate multilingual LLM judges with CBC "
        "(double-centring): fit a calibrator on a run table, apply it to new runs.",
        epilog="`polyjudge fit --help` and `polyjudge apply --help` show examples.")
    commands = parser.add_subparsers(
        dest="command", required=True,
        metavar="{fit,apply,compare,card,check,label-plan,check-yaml}")
    formatter = argparse.RawDescriptionHelpFormatter

    fit = commands.add_parser("fit", help="learn beta from a run table and save the calibrator",
                              description="Learn the language x backbone interaction beta of a "
                              "run table (as polyjudge.calibrate) and save it as a calibrator "
                              "JSON file.", epilog=FIT_EXAMPLE, formatter_class=formatter)
    fit.add_argument("runs", help="run table: a CSV, Parquet, JSON Lines or JSON file, a folder "
                     "of them or a glob")
    fit.add_argument("-o", "--output", required=True, metavar="JSON",
                     help="calibrator file to write")
    _column_options(fit, defaults=True)
    _source_options(fit)
    fit.add_argument("--languages", nargs="+", metavar="LANG",
                     help="order of the languages (default: natural sort); every language of "
                     "the runs, each once")
    fit.add_argument("--backbones", nargs="+", metavar="BACKBONE",
                     help="order of the backbones (default: natural sort); every backbone of "
                     "the runs, each once")
    fit.add_argument("--score-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                     help="scores must lie in [LOW, HIGH] (default: no bound)")
    fit.add_argument("--missing", choices=io.MISSING_POLICIES, default="error",
                     help="missing (NaN) scores: stop (error, default) or leave them out (omit)")
    fit.add_argument("--estimator", default=None,
                     help="beta estimator (default: plain on a complete panel, least_squares on "
                     "an incomplete one)")
    fit.add_argument("--band-replicates", type=int, default=DEFAULT_BAND_REPLICATES,
                     metavar="N", help="task bootstraps for the simultaneous band of beta "
                     f"(default {DEFAULT_BAND_REPLICATES}, at least 100; 0: no band, as an "
                     "incomplete panel needs, and rank intervals would be too narrow)")
    fit.add_argument("--band-level", type=float, default=0.95, metavar="LEVEL",
                     help="level of the band (default 0.95)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the band (default 0)")

    apply = commands.add_parser("apply", help="subtract a saved beta from new runs",
                                description="Calibrate new runs with a saved calibrator: "
                                "score_cbc = score - beta of their (language, backbone).",
                                epilog=APPLY_EXAMPLE, formatter_class=formatter)
    apply.add_argument("runs", help="run table to calibrate: a CSV, Parquet, JSON Lines or JSON "
                       "file, a folder of them or a glob")
    apply.add_argument("--calibrator", required=True, metavar="JSON",
                       help="calibrator file written by `polyjudge fit` or Calibrator.save")
    apply.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="calibrated runs to write (.csv or .parquet)")
    apply.add_argument("--unseen", choices=UNSEEN_POLICIES, default=None,
                       help="runs of a language or backbone the calibrator was not fitted on: "
                       "stop (error) or pass them through uncorrected, flagged calibrated=False "
                       "(raw); default: the calibrator's setting")
    apply.add_argument("--rankings", metavar="FILE",
                       help="also write the per-language ranking with rank intervals and p_first")
    apply.add_argument("--replicates", type=int, default=1000, metavar="N",
                       help="bootstrap replicates of the rankings (default 1000)")
    apply.add_argument("--level", type=float, default=0.95,
                       help="level of the rank intervals (default 0.95)")
    apply.add_argument("--seed", type=int, default=0, help="seed of the rankings (default 0)")
    _column_options(apply, defaults=False)
    _source_options(apply)
    compare_command.add_parser(commands)
    audit.add_parser(commands)
    check_command.add_parser(commands)
    labelling.add_parser(commands)
    check_yaml = commands.add_parser(
        "check-yaml", help="name the line of a YAML error in a config (snakemake does not)",
        description="Read YAML files as the workflow reads them: a config for --configfile, a "
        "prompt, a collection. Snakemake reads --configfile itself, before the workflow starts, "
        "and says only 'Config file is not valid JSON or YAML'; this names the file, the line "
        "and column, what YAML expected there and how to fix the usual slips.")
    check_yaml.add_argument("files", nargs="+", metavar="FILE", help="YAML files to read")
    return parser


def _source_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sources (as the workflow's, docs/configuration.md)")
    group.add_argument("--template", metavar="TEMPLATE",
                       help="fields from the paths, e.g. '{backbone}/{language}.jsonl' (each "
                       "{name} one folder or part of a file name, from the end of the path)")
    group.add_argument("--partitioning", choices=("hive",),
                       help="fields from key=value folders (backbone=gpt-4o/language=en/)")
    group.add_argument("--format", choices=sources.FORMATS,
                       help="the files' format, when their suffix does not tell")
    group.add_argument("--path-fields", choices=POLICIES,
                       help="a field the path gives that the records hold too: check (the "
                       "default: stop where they differ), path or record (trust that side)")


def read_runs(args, columns: dict, missing: str = "error"):
    """The run table of ``args.runs`` (a file, folder or glob, with ``--template`` /
    ``--partitioning`` / ``--format``) read as the workflow reads it, with the user's column
    names. Validation follows in the Calibrator, naming the files' rows."""
    mapping = {name: user for name, user in columns.items() if user != name}
    extra = {key: getattr(args, key) for key in ("template", "partitioning", "format",
                                                 "path_fields") if getattr(args, key)}
    source = {"path": args.runs, **extra} if extra else args.runs
    if not extra and Path(args.runs).is_file() and sources.is_single_file(source):
        frame = io.read_table(source, ["task", "language", "backbone", "score"], mapping)
    else:
        files = [str(path) for path in sources.source_files(source)]  # names a missing path
        frame = sources.read_source(source, files, mapping, missing=missing)
    return frame.rename(columns=mapping)


def write_table(frame, path) -> None:
    """CSV (floats as shortest round-trip text) or, for ``.parquet``, Parquet; atomically."""
    if Path(path).suffix == ".parquet":
        write_atomically(path, lambda temporary: frame.to_parquet(temporary, index=False))
    else:
        write_atomically(path, lambda temporary: frame.to_csv(temporary, index=False))


def run_fit(args) -> str:
    spec = RunSpec(**{name: getattr(args, name) for name in COLUMN_PARAMS},
                   languages=args.languages, backbones=args.backbones,
                   score_range=tuple(args.score_range) if args.score_range else None,
                   missing=args.missing, source=args.runs)
    calibrator = Calibrator(**spec.settings, estimator=args.estimator,
                            band_replicates=args.band_replicates, band_level=args.band_level,
                            seed=args.seed)
    calibrator.fit(read_runs(args, spec.columns, spec.missing), source=spec.source)
    calibrator.save(args.output)
    band = (f"band {calibrator.band_['level']:g} ({calibrator.band_['n_replicates']} replicates)"
            if calibrator.has_band else "no band")
    return (f"wrote {args.output}: {len(calibrator.languages_)} languages x "
            f"{len(calibrator.backbones_)} backbones from {calibrator.n_runs_} runs of "
            f"{calibrator.n_tasks_} tasks; estimator {calibrator.estimator_}; {band}")


def run_apply(args) -> str:
    calibrator = Calibrator.load(args.calibrator)
    calibrator.set_params(**{name: getattr(args, name) for name in COLUMN_PARAMS
                             if getattr(args, name) is not None})
    if args.unseen is not None:
        calibrator.set_params(unseen=args.unseen)
    spec = calibrator._spec(args.runs)
    runs = read_runs(args, spec.columns, spec.missing)
    calibrated = calibrator.transform(runs, source=args.runs)
    rankings = None
    if args.rankings:
        with warnings.catch_warnings(record=True) as caught:  # no band: said on stderr
            warnings.simplefilter("always")
            rankings = calibrator.rank(runs, n_replicates=args.replicates, level=args.level,
                                       seed=args.seed, source=args.runs)
        for warning in caught:
            print(f"polyjudge apply: warning: {warning.message}", file=sys.stderr)
    write_table(calibrated, args.output)  # every table is computed before anything is written
    if rankings is not None:
        write_table(rankings, args.rankings)
    passed = int((~calibrated["calibrated"]).sum())
    return (f"wrote {args.output}: {len(calibrated)} runs, {len(calibrated) - passed} calibrated"
            + (f", {passed} passed through uncorrected (unseen)" if passed else "")
            + (f"; rankings in {args.rankings}" if args.rankings else ""))


def run_check_yaml(args) -> str:
    for path in args.files:
        read_yaml(path)  # stops at the first file that does not parse, naming its line
    return "\n".join(f"{path}: valid YAML" for path in args.files)


COMMANDS = {"fit": run_fit, "apply": run_apply, "compare": compare_command.run,
            "card": audit.run, "check": check_command.run, "label-plan": labelling.run,
            "check-yaml": run_check_yaml}


def main(argv=None) -> int:
    """Entry point of the ``polyjudge`` command; returns the exit code (2 on bad input)."""
    args = build_parser().parse_args(argv)
    try:
        with messages_for("cli"):  # messages name this command's flags
            message = COMMANDS[args.command](args)
        code = 0
        if isinstance(message, tuple):  # `polyjudge check`: 1 when a condition fails
            message, code = message
    except ValueError as error:  # InputError and bad settings: the message says what to change
        print(f"polyjudge {args.command}: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as error:  # e.g. an output folder that does not exist
        print(f"polyjudge {args.command}: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    print(message)
    return code


if __name__ == "__main__":
    sys.exit(main())
