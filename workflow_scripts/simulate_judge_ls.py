"""Seeded synthetic Judge-LS protocol (EN / ZH / code-switched, tie probes) with its truth."""
import logging

from polyjudge.analyses.judge_ls import simulate_audit_texts, simulate_judge_ls
from polyjudge.scripting import run_step, write_json, write_parquet

log = logging.getLogger("polyjudge.simulate_judge_ls")


def main(smk):
    panel = smk.params.panel
    verdicts, truth = simulate_judge_ls(panel["seed"], panel["n_items"],
                                        unparseable_rate=panel["unparseable_rate"])
    log.info("%d synthetic judgments by %d judges", len(verdicts), verdicts["judge"].nunique())
    write_parquet(verdicts, smk.output.verdicts)
    write_json({name: frame.to_dict(orient="records") for name, frame in truth.items()},
               smk.output.truth)
    items = verdicts[["item", "subset"]].drop_duplicates()
    for condition, kind in [("zh", "full"), ("cs", "code_switched")]:
        # one seed for both kinds: the same reference texts, translated two ways
        reference, variant, planted = simulate_audit_texts(panel["seed"] + 1, items, kind)
        log.info("%s texts: %d fields, planted defects %s", condition, len(variant),
                 planted["defect"].value_counts().to_dict())
        write_parquet(variant, smk.output[condition])
    write_parquet(reference, smk.output.reference_texts)


run_step(main, snakemake)
