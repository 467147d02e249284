"""``polyjudge compare RUN_A RUN_B -o diff.html``: run B's results page with the differences from
run A (beta shifts, rank changes, claims whose status changed) listed and outlined.

Registered by :mod:`polyjudge.cli` (:func:`add_parser`); :func:`run` returns the one-line summary
the command prints.
"""
from __future__ import annotations

import argparse

EXAMPLE = """\
example:
  polyjudge compare results_before/ results/ -o diff.html

RUN_A and RUN_B are results folders of two workflow runs (the folder holding claims.csv and one
folder per panel). The page shows run B; cells whose beta moved beyond relative 1e-9 / absolute
1e-12, ranks that changed and claims whose status changed are listed at the top and outlined.
"""


def add_parser(commands) -> argparse.ArgumentParser:
    compare = commands.add_parser(
        "compare", help="the results page of run B with its differences from run A",
        description="Build the self-contained results page of run B with the differences "
        "from run A highlighted.", epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("run_a", metavar="RUN_A", help="results folder of the first run")
    compare.add_argument("run_b", metavar="RUN_B", help="results folder of the second run")
    compare.add_argument("-o", "--output", required=True, metavar="HTML",
                         help="page to write (e.g. diff.html)")
    compare.set_defaults(run=run)
    return compare


def run(args) -> str:
    from .build import compare_pages
    from .results_folder import Results

    for folder in (args.run_a, args.run_b):
        if not Results(folder).panels():
            raise ValueError(f"{folder}: no panel outputs found (expected a results folder "
                             "with e.g. <panel>/cbc/rankings.csv or <panel>/judge_ls/)")
    path, counts = compare_pages(args.run_a, args.run_b, args.output)
    return (f"wrote {path}: {counts['beta']} beta cell(s) shifted, {counts['ranks']} rank(s) "
            f"changed, {counts['claims']} claim status(es) changed")
