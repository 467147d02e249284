"""Tables from a collection's shard files: translated texts, reference texts, the translation
audit, the verdict table, one judge's scores, the usage / status report, and for a collection
stopped at a target the intervals beside the fixed-n band and the stopping figure.

The Judge-LS analyses (scipy.stats), the band and the figures (matplotlib) are imported by the
rules that use them: the others, most jobs of a collection, start in a third of the time."""
import logging

import numpy as np
import pandas as pd

from polyjudge.data import io
from polyjudge.judges import protocols, rounds
from polyjudge.judges.stages import read_calls
from polyjudge.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("polyjudge.collect")


def main(smk):
    rule = smk.rule
    if rule == "reference_texts":
        collect = smk.params.panel["collect"]
        items = protocols.read_items(smk.input.item_table, "pairwise", collect["columns"],
                                     collect["n_items"])
        write_parquet(protocols.reference_texts(items), smk.output.texts)
    elif rule == "translations":
        texts = protocols.translated_texts(read_calls(smk.input), smk.wildcards.condition)
        log.info("%d fields, %d unusable", len(texts), int((texts["text"] == "").sum()))
        write_parquet(texts, smk.output.texts)
    elif rule == "audit_translations":
        from polyjudge.analyses import judge_ls
        conditions = smk.params.panel["collect"]["conditions"]
        variants = {c: (pd.read_parquet(smk.input[c]), spec["kind"])
                    for c, spec in conditions.items()}
        audit = judge_ls.audit_variants(pd.read_parquet(smk.input.reference), variants,
                                        judge_ls.AuditThresholds(**smk.params.thresholds))
        log.info("%d of %d translated fields flagged", int(audit["flagged"].sum()), len(audit))
        write_csv(audit, smk.output.audit)
    elif rule == "collected_verdicts":
        from polyjudge.analyses import judge_ls
        calls = read_calls(smk.input)
        verdicts = pd.concat([protocols.verdict_table(part, judge) for judge, part
                              in calls.groupby("endpoint", sort=False)], ignore_index=True)
        judge_ls.validate_verdicts(verdicts, smk.output.verdicts)
        log.info("%d judgments, statuses %s", len(verdicts),
                 verdicts["status"].value_counts().to_dict())
        write_parquet(verdicts, smk.output.verdicts)
    elif rule == "collected_scores":
        calls = read_calls(smk.input)
        calls = calls[calls["endpoint"] == smk.wildcards.judge]  # a rounds file has every judge
        write_parquet(protocols.score_table(calls), smk.output.scores)
    elif rule == "collection_intervals":
        from polyjudge.cbc.band import bootstrap_band
        # the fixed-n task-bootstrap band of the items collected (those with a complete block,
        # as the sequences use), beside the sequences' intervals at the stop
        panel, settings = io.read_panel(smk.input.tensor), smk.params.bands
        complete = np.flatnonzero(np.isfinite(panel.values).all(axis=(1, 2)))
        band = bootstrap_band(panel.subset(tasks=complete), settings["replicates"],
                              settings["seed"], settings["level"])
        table = rounds.intervals_table(pd.read_csv(smk.input.sequence), band.frame,
                                       pd.read_csv(smk.input.stopping))
        write_csv(table, smk.output.intervals)
    elif rule == "stopping_figure":
        from polyjudge.report import figures
        figures.save_figure(figures.stopping_curve(pd.read_csv(smk.input.stopping),
                                                   title=f"Stopping ({smk.wildcards.panel})"),
                            smk.output.png, smk.output.svg)
    elif rule == "collection_report":
        calls = read_calls(smk.input.calls)
        stopping = pd.read_csv(smk.input.stopping) if "stopping" in smk.input.keys() else None
        usage = protocols.usage_table(calls, rounds.design_note(stopping))
        status = protocols.status_table(calls)
        log.info("usage:\n%s\nstatus:\n%s", usage.to_string(), status.to_string())
        write_csv(usage, smk.output.usage)
        write_csv(status, smk.output.status)


run_step(main, snakemake)
