# polyjudge: reproduce the CBC paper and the Judge-LS protocol from raw judge runs.
# Usage: snakemake --cores N [--configfile my.yaml]; outputs go to results/ of the working
# directory (your own panels: run it from a folder of your own, docs/running.md).
import sys
import time

from snakemake.utils import min_version

min_version("9.0")

RUN_STARTED = time.time()  # the end-of-run summary counts the results written since


# No `configfile:` directive: Snakemake would merge a user's --configfile into it, adding the
# user's panels to the default ones. common.smk completes the user's config from
# config/config.yaml instead, so a user's `panels` replace the defaults wherever snakemake runs,
# and checks it once (polyjudge.workflow_config.check) before any stage is read.
include: "rules/common.smk"
include: "rules/ingest.smk"
include: "rules/card.smk"
include: "rules/labels.smk"
include: "rules/label_plan.smk"
include: "rules/calibrate.smk"
include: "rules/heldout.smk"
include: "rules/reversal.smk"
include: "rules/information.smk"
include: "rules/external.smk"
include: "rules/ablations.smk"
include: "rules/missing.smk"
include: "rules/diagnostics.smk"
include: "rules/collect.smk"
include: "rules/judge_ls.smk"
include: "rules/simulation.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(),
        "results/claims.csv",
        "results/index.html",


# The end of a run: what was computed, the claims count, where the results are, the report
# command (polyjudge.report.summary), instead of the last log line of a rule.
onsuccess:
    from polyjudge.report.summary import run_summary

    print(
        run_summary(
            {name: p["analyses"] for name, p in PANELS.items()},
            "results",
            RUN_STARTED,
            simulation=bool(config["simulation"]["scenarios"]),
        ),
        file=sys.stderr,
    )


# A failed run ends with each failed rule's own message (from its log), not with Snakemake's
# "At least one job did not complete successfully" 1,000 lines below the cause.
onerror:
    from polyjudge.report.summary import failure_summary

    print(failure_summary(log), file=sys.stderr)
