"""The ``judgecal`` console script: fit a calibrator on a run table, apply it to new runs.

``judgecal fit runs.csv -o calibrator.json`` and ``judgecal apply --calibrator calibrator.json
new_runs.csv -o calibrated.csv [--rankings rankings.csv]`` (docs/api.md, "From the shell").
Tables are read with :func:`judgecal.data.io.read_table` (CSV or Parquet; the column options
are the workflow's ``columns`` mapping), so bad input gets the workflow's messages: one message
on stderr, exit code 2, no traceback, and no output file (outputs are written to a temporary
file and renamed).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .calibrator import COLUMN_PARAMS, UNSEEN_POLICIES, Calibrator, write_atomically
from .data import io
from .report.page import command as compare_command

EXIT_INPUT = 2

FIT_EXAMPLE = """\
example:
  judgecal fit data/devai_ml_aaaj/run_level_scores.parquet -o calibrator.json \\
      --band-replicates 1000
  judgecal fit my_runs.csv -o calibrator.json --task prompt_id --backbone judge_model \\
      --score pct --score-range 0 100

The run table is long: one row per judge run with task, language, backbone, score and optionally
framework columns (name yours with the column options).
"""

APPLY_EXAMPLE = """\
example:
  judgecal apply --calibrator calibrator.json new_runs.csv -o calibrated.csv \\
      --rankings rankings.csv
  judgecal apply --calibrator calibrator.json new_runs.parquet -o calibrated.parquet --unseen raw

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
        prog="judgecal", description="Calibrate multilingual LLM judges with CBC "
        "(double-centring): fit a calibrator on a run table, apply it to new runs.",
        epilog="`judgecal fit --help` and `judgecal apply --help` show examples.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{fit,apply,compare}")
    formatter = argparse.RawDescriptionHelpFormatter

    fit = commands.add_parser("fit", help="learn beta from a run table and save the calibrator",
                              description="Learn the language x backbone interaction beta of a "
                              "run table (as judgecal.calibrate) and save it as a calibrator "
                              "JSON file.", epilog=FIT_EXAMPLE, formatter_class=formatter)
    fit.add_argument("runs", help="run table (CSV or Parquet)")
    fit.add_argument("-o", "--output", required=True, metavar="JSON",
                     help="calibrator file to write")
    _column_options(fit, defaults=True)
    fit.add_argument("--score-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                     help="scores must lie in [LOW, HIGH] (default: no bound)")
    fit.add_argument("--missing", choices=io.MISSING_POLICIES, default="error",
                     help="missing (NaN) scores: stop (error, default) or leave them out (omit)")
    fit.add_argument("--estimator", default=None,
                     help="beta estimator (default: plain on a complete panel, least_squares on "
                     "an incomplete one)")
    fit.add_argument("--band-replicates", type=int, default=0, metavar="N",
                     help="task bootstraps for the simultaneous band of beta (0: no band; "
                     "else at least 100)")
    fit.add_argument("--band-level", type=float, default=0.95, metavar="LEVEL",
                     help="level of the band (default 0.95)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the band (default 0)")

    apply = commands.add_parser("apply", help="subtract a saved beta from new runs",
                                description="Calibrate new runs with a saved calibrator: "
                                "score_cbc = score - beta of their (language, backbone).",
                                epilog=APPLY_EXAMPLE, formatter_class=formatter)
    apply.add_argument("runs", help="run table to calibrate (CSV or Parquet)")
    apply.add_argument("--calibrator", required=True, metavar="JSON",
                       help="calibrator file written by `judgecal fit` or Calibrator.save")
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
    compare_command.add_parser(commands)
    return parser


def read_runs(path, columns: dict):
    """A run table read as the workflow reads it, returned with the user's column names."""
    mapping = {name: user for name, user in columns.items() if user != name}
    frame = io.read_table(path, ["task", "language", "backbone", "score"], mapping)
    return frame.rename(columns=mapping)


def write_table(frame, path) -> None:
    """CSV (floats as shortest round-trip text) or, for ``.parquet``, Parquet; atomically."""
    if Path(path).suffix == ".parquet":
        write_atomically(path, lambda temporary: frame.to_parquet(temporary, index=False))
    else:
        write_atomically(path, lambda temporary: frame.to_csv(temporary, index=False))


def run_fit(args) -> str:
    columns = {name: getattr(args, name) for name in COLUMN_PARAMS}
    calibrator = Calibrator(**columns, score_range=tuple(args.score_range) if args.score_range
                            else None, missing=args.missing, estimator=args.estimator,
                            band_replicates=args.band_replicates, band_level=args.band_level,
                            seed=args.seed)
    calibrator.fit(read_runs(args.runs, columns), source=args.runs)
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
    runs = read_runs(args.runs, calibrator._columns())
    calibrated = calibrator.transform(runs, source=args.runs)
    rankings = None
    if args.rankings:
        rankings = calibrator.rank(runs, n_replicates=args.replicates, level=args.level,
                                   seed=args.seed, source=args.runs)
    write_table(calibrated, args.output)  # every table is computed before anything is written
    if rankings is not None:
        write_table(rankings, args.rankings)
    passed = int((~calibrated["calibrated"]).sum())
    return (f"wrote {args.output}: {len(calibrated)} runs, {len(calibrated) - passed} calibrated"
            + (f", {passed} passed through uncorrected (unseen)" if passed else "")
            + (f"; rankings in {args.rankings}" if args.rankings else ""))


def main(argv=None) -> int:
    """Entry point of the ``judgecal`` command; returns the exit code (2 on bad input)."""
    args = build_parser().parse_args(argv)
    try:
        run = getattr(args, "run", None) or (run_fit if args.command == "fit" else run_apply)
        message = run(args)
    except ValueError as error:  # InputError and bad settings: the message says what to change
        print(f"judgecal {args.command}: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as error:  # e.g. an output folder that does not exist
        print(f"judgecal {args.command}: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    print(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
