"""Judge-LS metrics of one verdict panel: accuracy, flips, position, tie probes, audit."""
import json
import logging

import pandas as pd

from judgecal import judge_ls
from judgecal.io import read_table
from judgecal.scripting import run_step, write_csv

log = logging.getLogger("judgecal.judge_ls")


def load_verdicts(smk, panel):
    source = panel["source"]
    if source == "llmbar":
        return judge_ls.load_llmbar(smk.input.verdicts, rating=panel["rating"])
    frame = read_table(smk.input.verdicts, mapping=panel["columns"],
                       text=("item", "subset", "judge", "condition", "order"))
    return judge_ls.validate_verdicts(frame, smk.input.verdicts, panel["conditions"],
                                      panel["on_duplicate"])


def audit(smk, panel, thresholds):
    """Audit every translated variant against the reference texts (empty without texts)."""
    if "reference_texts" not in smk.input.keys():
        return judge_ls.audit_variants(None, {}, thresholds)
    variants = {condition: (read_table(smk.input[f"variant_{condition}"]), variant["kind"])
                for condition, variant in panel["variant_texts"].items()}
    return judge_ls.audit_variants(read_table(smk.input.reference_texts), variants, thresholds)


def main(smk):
    panel = smk.params.panel
    settings = smk.params.settings
    confidence = settings["confidence"]
    verdicts = load_verdicts(smk, panel)
    choices = judge_ls.normalise_choices(verdicts)
    log.info("%d judgments, %d unparseable", len(choices), int((~choices["valid"]).sum()))
    reference = panel["reference"]
    tables = {
        "accuracy": judge_ls.accuracy_table(choices, by_order=True, confidence=confidence),
        "flips": judge_ls.flip_table(choices, reference, confidence),
        "position": judge_ls.position_table(choices, confidence),
        "tie_probe": judge_ls.tie_probe_table(choices, confidence),
    }
    audited = audit(smk, panel, judge_ls.AuditThresholds(**settings["audit"]))
    flagged = audited.loc[audited["flagged"].astype(bool), ["item", "subset"]]
    sensitivity = judge_ls.flip_sensitivity(choices, flagged, reference, confidence)
    truth = json.loads(open(smk.input.truth).read()) if "truth" in smk.input.keys() else None
    recovered = (judge_ls.recovery_table(tables, truth) if truth
                 else pd.DataFrame(columns=judge_ls.RECOVERY_COLUMNS))
    if len(recovered):
        log.info("planted values inside their intervals: %d of %d",
                 int(recovered["covered"].sum()), len(recovered))
    for name, table in tables.items():
        write_csv(table, smk.output[name])
    write_csv(audited, smk.output.audit)
    write_csv(sensitivity, smk.output.sensitivity)
    write_csv(recovered, smk.output.recovery)
    summary = judge_ls.summary_markdown(tables["accuracy"], tables["flips"], tables["position"],
                                        tables["tie_probe"], sensitivity, audited,
                                        title=f"Judge-LS summary: {smk.wildcards.panel}")
    with open(smk.output.summary, "w") as handle:
        handle.write(summary)


run_step(main, snakemake)
