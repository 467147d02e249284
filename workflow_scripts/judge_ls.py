"""Judge-LS metrics of one verdict panel: accuracy, flips, position, tie probes, audit."""
import json
import logging

import judgecal
from judgecal.analyses import judge_ls as _jl
from judgecal.data.io import read_table
from judgecal.scripting import run_step, write_csv

log = logging.getLogger("judgecal.analyses.judge_ls")


def load_verdicts(smk, panel):
    """The verdict table, with the panel's column names (the LLMBar file is flattened first)."""
    if panel["source"] == "llmbar":
        return _jl.load_llmbar(smk.input.verdicts, rating=panel["rating"]), {}
    frame = read_table(smk.input.verdicts, mapping=panel["columns"],
                       text=("item", "subset", "judge", "condition", "order"))
    return frame, {}


def main(smk):
    panel = smk.params.panel
    settings = smk.params.settings
    verdicts, columns = load_verdicts(smk, panel)
    variants = None
    if "reference_texts" in smk.input.keys():
        variants = {condition: (read_table(smk.input[f"variant_{condition}"]), variant["kind"])
                    for condition, variant in panel["variant_texts"].items()}
    truth = json.loads(open(smk.input.truth).read()) if "truth" in smk.input.keys() else None
    result = judgecal.judge_ls(
        verdicts, reference=panel["reference"], conditions=panel["conditions"],
        on_duplicate=panel["on_duplicate"], confidence=settings["confidence"], columns=columns,
        reference_texts=(read_table(smk.input.reference_texts) if variants is not None
                         else None),
        variant_texts=variants, audit=settings["audit"], truth=truth,
        title=f"Judge-LS summary: {smk.wildcards.panel}", source=smk.input.verdicts)
    log.info("%d judgments, %d unparseable", result.n_judgments, result.n_invalid)
    if len(result.recovery):
        log.info("planted values inside their intervals: %d of %d",
                 int(result.recovery["covered"].sum()), len(result.recovery))
    for name, table in result.tables().items():
        write_csv(table, smk.output[name])
    with open(smk.output.summary, "w") as handle:
        handle.write(result.summary)


run_step(main, snakemake)
