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
    frame = read_table(smk.input.verdicts)
    frame = frame.rename(columns={user: std for std, user in panel["columns"].items()})
    return judge_ls.validate_verdicts(frame, smk.input.verdicts, panel["conditions"],
                                      panel["on_duplicate"])


def audit(smk, panel, thresholds):
    """Audit every translated variant against the reference texts (empty without texts)."""
    if "reference_texts" not in smk.input.keys():
        return pd.DataFrame(columns=["condition", *judge_ls.TEXT_KEYS, "flagged"])
    reference = read_table(smk.input.reference_texts)
    frames = []
    for condition, variant in panel["variant_texts"].items():
        texts = read_table(smk.input[f"variant_{condition}"])
        frames.append(judge_ls.translation_audit(reference, texts, variant["kind"], thresholds)
                      .assign(condition=condition))
    return pd.concat(frames, ignore_index=True)


def recovery(smk, tables):
    """Synthetic panels: each planted value beside its estimate and interval."""
    if "truth" not in smk.input.keys():
        return pd.DataFrame(columns=["table", "judge", "condition", "quantity", "truth",
                                     "estimate", "ci_low", "ci_high", "covered"])
    truth = json.loads(open(smk.input.truth).read())
    specs = [("accuracy", ["judge", "condition"], "strict_accuracy", "strict"),
             ("position", ["judge", "condition"], "position_inconsistency", "position"),
             ("flips", ["judge", "reference", "target"], "flip_rate", "flip"),
             ("tie_probe", ["judge", "condition"], "tie_share", "tie_share"),
             ("tie_probe", ["judge", "condition"], "non_tie_language_2_share", "non_tie")]
    rows = []
    for name, keys, quantity, prefix in specs:
        estimate = tables[name]
        for pooled in ("subset", "order"):  # compare with the pooled rows
            if pooled in estimate:
                estimate = estimate[estimate[pooled] == judge_ls.ALL]
        merged = pd.DataFrame(truth[name])[keys + [quantity]].merge(
            estimate, on=keys, suffixes=("_truth", ""))
        for row in merged.to_dict(orient="records"):
            low, high = row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"]
            value = row[f"{quantity}_truth"]
            rows.append({"table": name, "judge": row["judge"],
                         "condition": row.get("condition", row.get("target")),
                         "quantity": quantity, "truth": value, "estimate": row[quantity],
                         "ci_low": low, "ci_high": high, "covered": low <= value <= high})
    return pd.DataFrame(rows)


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
    recovered = recovery(smk, tables)
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
