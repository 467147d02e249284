"""Judge-LS metrics of one verdict panel: accuracy, flips, position, tie probes, audit."""
import json
import logging

import polyjudge
from polyjudge.analyses import judge_ls as _jl
from polyjudge.data import sources
from polyjudge.data.checksums import input_files
from polyjudge.data.io import read_table
from polyjudge.judges.diagnosis import judge_ls_shortfall
from polyjudge.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("polyjudge.analyses.judge_ls")


def load_verdicts(smk, panel):
    """The verdict table, with the panel's column names (the LLMBar file is flattened first)."""
    if panel["source"] == "llmbar":
        return _jl.load_llmbar(smk.input.verdicts, rating=panel["rating"]), {}
    value = panel["verdicts"] if panel["source"] == "table" else smk.input.verdicts
    frame = sources.read_source(value, smk.input.verdicts, panel["columns"],
                                fields=sources.VERDICT_FIELDS, missing=panel["missing"],
                                text=("item", "subset", "judge", "condition", "order"),
                                table="verdicts", base_dir=smk.params.data_dir)
    return frame, {}


def verdicts_source(smk, panel):
    """How messages name the verdicts: the file, or the source of many files."""
    files = smk.input.verdicts
    return files if isinstance(files, str) else sources.describe(panel["verdicts"])


def check_collection(smk, panel):
    """A collected panel whose calls left a condition without usable judgments: the stage, the
    counts, the files and the setting to change (an error when nothing can be measured)."""
    texts = {c: read_table(smk.input[f"variant_{c}"]) for c in panel["collect"]["conditions"]}
    error, warning = judge_ls_shortfall(
        smk.wildcards.panel, read_table(smk.input.verdicts), texts, panel["reference"],
        panel["collect"]["translator"], smk.config.get("endpoints") or {})
    if error:
        raise ValueError(error)
    if warning:
        log.warning(warning)


def manifest(smk, panel):
    """inputs.json: the files the verdicts and texts were read from, with their SHA-256 (the
    results page's provenance); a synthetic panel has none, its seed says how it was made."""
    if panel["source"] == "synthetic":
        return {"kind": "pairwise_verdicts", "source": "synthetic", "files": {},
                "simulated": {"rule": "simulate_judge_ls", "seed": panel.get("seed")}}
    return {"kind": "pairwise_verdicts", "source": panel["source"],
            "files": input_files(dict(smk.input.items()))}


def main(smk):
    panel = smk.params.panel
    settings = smk.params.settings
    if panel["source"] == "collection":
        check_collection(smk, panel)
    verdicts, columns = load_verdicts(smk, panel)
    variants = None
    if "reference_texts" in smk.input.keys():
        variants = {condition: (read_table(smk.input[f"variant_{condition}"]), variant["kind"])
                    for condition, variant in panel["variant_texts"].items()}
    truth = json.loads(open(smk.input.truth).read()) if "truth" in smk.input.keys() else None
    result = polyjudge.judge_ls(
        verdicts, reference=panel["reference"], conditions=panel["conditions"],
        on_duplicate=panel["on_duplicate"], confidence=settings["confidence"], columns=columns,
        reference_texts=(read_table(smk.input.reference_texts) if variants is not None
                         else None),
        variant_texts=variants, audit=settings["audit"], truth=truth,
        title=f"Judge-LS summary: {smk.wildcards.panel}", source=verdicts_source(smk, panel))
    # invalid: unparseable or empty (a collection's no_input: nothing was judged), so not
    # called "unparseable"; collect/status.csv counts a collection's calls by outcome
    log.info("%d judgments, %d without a usable verdict (unparseable or missing)",
             result.n_judgments, result.n_invalid)
    if len(result.recovery):
        log.info("planted values inside their intervals: %d of %d",
                 int(result.recovery["covered"].sum()), len(result.recovery))
    for name, table in result.tables().items():
        write_csv(table, smk.output[name])
    write_parquet(result.choices, smk.output.choices)
    with open(smk.output.summary, "w") as handle:
        handle.write(result.summary)
    write_json(manifest(smk, panel), smk.output.manifest)


run_step(main, snakemake)
