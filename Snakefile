# judgecal: reproduce the CBC paper and the Judge-LS protocol from raw judge runs.
# Usage: snakemake --cores N [--configfile my.yaml]; outputs go to results/.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


# common.smk fills the settings a user's --configfile leaves out from config/config.yaml
include: "rules/common.smk"


validate(config, "config/schema/config.schema.yaml")
check_analyses()


include: "rules/ingest.smk"
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
