"""The judge card (results/{panel}/card/): agreement with the reference and among the judges,
and the judges' biases, redundancy and the ranking by agreement."""
import logging

import pandas as pd

from polyjudge.analyses.card import (choice_verdicts, headline, judge_card, margin_verdicts,
                                     reference_labels, requirement_verdicts,
                                     with_output_lengths)
from polyjudge.data import io
from polyjudge.data.errors import InputError
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.card")
SMALL_PANEL = 40
"""Clusters below which the intervals of the effective number of judges and of the majority's
gain undercover in simulation (benchmarks/card_coverage.py)."""


def main(smk):
    panel, settings = smk.params.panel, smk.params.settings
    biases = panel["card_bias"]
    reference = comparison = None
    languages, judges = panel.get("languages"), panel.get("backbones")
    if "choices" in smk.input.keys():  # pairwise verdicts: the gold answer is the reference
        verdicts, reference = choice_verdicts(pd.read_parquet(smk.input.choices))
        languages, judges = panel.get("conditions"), None
        log.info("%d pairwise judgments with a usable verdict against their gold answer "
                 "(tie probes left out)", len(verdicts))
        if "texts" in smk.input.keys():
            verdicts = with_output_lengths(verdicts, io.read_table(smk.input.texts,
                                                                   text=("subset",)),
                                           smk.input.texts)
            log.info("output lengths of %s: %d of %d judgments have both outputs' lengths",
                     smk.input.texts, verdicts["log2_length_ratio"].notna().sum(),
                     len(verdicts))
    elif "runs" in smk.input.keys():  # preference margins: is the chosen response preferred?
        verdicts, reference = margin_verdicts(pd.read_parquet(smk.input.runs))
        log.info("%d margins: each judge's verdict on the chosen side (1 chosen higher, 0 tie, "
                 "-1 rejected higher) against the preference labels", len(verdicts))
    else:
        requirements = io.read_table(smk.input.requirements)
        verdicts = requirement_verdicts(requirements)
        author = biases["author_column"]
        if author:
            if author not in requirements:
                raise InputError(smk.input.requirements, f"no column {author!r}",
                                 "the author of each answer (card_bias.author_column); the "
                                 f"table has {list(requirements.columns)}")
            verdicts["author"] = requirements[author].astype(str).to_numpy()
    if panel.get("reference_labels"):
        spec = panel["reference_labels"]
        table = io.read_table(smk.input.reference, text=tuple(spec["keys"]))
        reference, comparison = reference_labels(table, spec, smk.input.reference)
        log.info("reference: %d labelled items of %s; %d verdicts of other raters (%s)",
                 reference.notna().sum(), smk.input.reference, len(comparison),
                 ", ".join(map(str, comparison["judge"].unique())) or "none")
    level = (panel.get("reference_labels") or {}).get("level", "nominal")
    card = judge_card(verdicts, reference, level=level,
                      replicates=settings["replicates"], seed=settings["seed"],
                      confidence=settings["confidence"], languages=languages,
                      judges=judges, comparison=comparison, families=biases["families"])
    rows, label = headline(card.agreement)
    rows = rows[rows["judge"].isin(verdicts["judge"].unique())]  # the panel's own judges
    if len(rows):
        log.info("%s of the panel's judges with the reference: %.3f to %.3f over %d language x "
                 "judge cells", label, rows["estimate"].min(), rows["estimate"].max(), len(rows))
    else:
        log.info("no reference labels: the card gives agreement among the judges only")
    for bias, reason in card.bias_not_computed.items():
        log.info("bias %s not computed: %s", bias, reason)
    for bias, rows in card.bias.groupby("bias", sort=False):
        shown = rows[rows["language"].isin(verdicts["language"].unique())]
        excludes = ((shown["ci_low"] > 0) | (shown["ci_high"] < 0)).sum()
        log.info("bias %s (%s): %.3f to %.3f over %d language x judge cells, %d intervals "
                 "exclude 0", bias, rows["unit"].iloc[0], shown["estimate"].min(),
                 shown["estimate"].max(), len(shown), excludes)
    report_redundancy(card, settings["confidence"])
    write_csv(card.agreement, smk.output.agreement)
    write_csv(card.language_tests, smk.output.tests)
    write_csv(card.bias, smk.output.bias)
    write_csv(card.bias_tests, smk.output.bias_tests)
    write_csv(card.redundancy, smk.output.redundancy)
    write_csv(card.ranking, smk.output.ranking)


def report_redundancy(card, confidence):
    """The effective number of judges per language, and a warning where the intervals rest on
    too few clusters to reach their coverage (docs/methods.md section 11)."""
    n_eff = card.redundancy[card.redundancy["measure"] == "effective_judges"]
    if len(n_eff):
        log.info("effective number of independent judges per language: %s", ", ".join(
            f"{row.language} {row.estimate:.2f}" for row in n_eff.itertuples()))
    panel = card.redundancy[card.redundancy["judge"].isin(["panel", "majority"])]
    few = panel["n_clusters"].lt(SMALL_PANEL) & panel["n_clusters"].gt(0)
    if few.any():
        log.warning("%d redundancy rows (effective judges, the majority) rest on fewer than %d "
                    "clusters: their %.0f%% intervals covered 91-93%% in simulation at 20 "
                    "clusters, below 93%% (docs/methods.md section 11)", few.sum(), SMALL_PANEL,
                    100 * confidence)


run_step(main, snakemake)
