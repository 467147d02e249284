"""Auditing judges from Python and the command line: :func:`judge_card` on a verdict table
with your own column names, and ``polyjudge card`` (registered by :mod:`polyjudge.cli`).

The card itself is :func:`polyjudge.analyses.card.judge_card` (docs/methods.md section 11);
this module reads and checks the user's tables and names their columns in its messages.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from .analyses.card import JudgeCard
from .analyses.card import judge_card as _card
from .data import io
from .data.errors import InputError, api_messages

LEVELS = ("nominal", "ordinal", "interval")


def _numeric(frame: pd.DataFrame, column: str, source, role: str) -> pd.Series:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if bad.any():
        raise InputError(source, f"{int(bad.sum())} {role}(s) in column '{column}' are not "
                         f"numbers, e.g. {frame.loc[bad, column].iloc[0]!r}",
                         f"{role}s as numbers on one scale (e.g. 0/1, or 1-5)")
    return values


@api_messages
def judge_card(verdicts: pd.DataFrame, reference=None, *, item: str = "item",
               language: str = "language", judge: str = "judge", verdict: str = "verdict",
               cluster: str | None = None, label: str = "label", level: str = "nominal",
               length: str | None = None, author: str | None = None,
               families: dict | None = None, replicates: int = 1000, seed: int = 0,
               confidence: float = 0.95, source: str = "verdicts") -> JudgeCard:
    """Is each judge right, in each language? The judge card of a verdict table.

    Agreement of every judge with ``reference`` (percent agreement, Cohen's kappa, Gwet's AC1,
    Krippendorff's alpha; for ordinal and interval labels also rank correlations and the mean
    signed error) and among the judges (Krippendorff's alpha, Fleiss' kappa, each pair's
    kappa), per language and pooled, with cluster-bootstrap intervals, and a test of whether
    each judge's agreement differs between languages (docs/methods.md section 11). With a
    ``length`` column, each judge's length bias (the slope of its verdict on log2 length,
    adjusted for the reference); with an ``author`` column and ``families``, its
    self-preference; each per language with its interval and language test.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        One row per verdict: the item, its language, the judge and the verdict (a number).
    reference : pandas.DataFrame or pandas.Series, optional
        The right answer of each item: a table with columns ``item`` and ``label``, or a Series
        item -> label. None: agreement among the judges only.
    item, language, judge, verdict, label : str
        Your column names.
    cluster : str, optional
        Column of the unit the bootstrap resamples (items of one task, prompt or document
        together); default: each item on its own.
    level : {"nominal", "ordinal", "interval"}, default "nominal"
        Level of measurement of the verdicts and labels.
    length : str, optional
        Column of the length of the answer judged (characters or tokens, > 0): the length bias.
    author : str, optional
        Column naming who wrote the answer judged; with ``families``: self-preference.
    families : dict, optional
        Judge or author name -> model family (a name not listed is its own family).
    replicates, seed, confidence
        Bootstrap replicates (0: no intervals), their seed, and the intervals' level.
    source : str, default "verdicts"
        What error messages call the table.

    Returns
    -------
    JudgeCard
        ``agreement`` (language, judge, versus, measure, estimate, ci_low, ci_high, n_items,
        n_clusters), ``language_tests``, ``has_reference``, ``bias`` (language, judge, bias,
        estimate, ci_low, ci_high, n_items, n_clusters, unit), ``bias_tests``,
        ``bias_not_computed`` (bias -> why not), ``redundancy`` (error correlations, effective
        number of judges, the majority's gain over the best judge) and ``ranking`` (judges by
        agreement with the reference, simultaneous rank sets).

    Examples
    --------
    >>> import pandas as pd, polyjudge
    >>> verdicts = pd.DataFrame({"q": ["1", "2", "3", "4"] * 2, "lang": ["en"] * 4 + ["de"] * 4,
    ...                          "model": "m", "says": [1, 0, 1, 1, 1, 0, 0, 1]})
    >>> gold = pd.DataFrame({"q": ["1", "2", "3", "4"], "label": [1, 0, 1, 0]})
    >>> card = polyjudge.judge_card(verdicts, gold, item="q", language="lang", judge="model",
    ...                             verdict="says", replicates=0)
    >>> card.agreement.query("measure == 'percent_agreement'")[["language", "estimate"]]
    ... # doctest: +NORMALIZE_WHITESPACE
            language  estimate
    0             en     0.750
    1             de     0.500
    2  all languages     0.625
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    columns = [item, language, judge, verdict] + [c for c in (cluster, length, author) if c]
    missing = [c for c in columns if c not in verdicts.columns]
    if missing:
        raise InputError(source, f"no column {', '.join(map(repr, missing))}",
                         f"the columns {columns}; the table has {list(verdicts.columns)}")
    frame = pd.DataFrame({"item": verdicts[item].astype(str), "language": verdicts[language],
                          "judge": verdicts[judge],
                          "verdict": _numeric(verdicts, verdict, source, "verdict")})
    if cluster:
        frame["cluster"] = verdicts[cluster].astype(str)
    if length:
        size = _numeric(verdicts, length, source, "length")
        if (size <= 0).any():
            raise InputError(source, f"{int((size <= 0).sum())} length(s) in column "
                             f"'{length}' are not above 0, e.g. {size[size <= 0].iloc[0]!r}",
                             "the answer's length in characters or tokens, above 0")
        frame["log2_length"] = np.log2(size.to_numpy(float))
    if author:
        frame["author"] = verdicts[author].astype(str)
    if isinstance(reference, pd.DataFrame):
        absent = [c for c in (item, label) if c not in reference.columns]
        if absent:
            raise InputError("reference", f"no column {', '.join(map(repr, absent))}",
                             f"the columns '{item}' and '{label}'; the table has "
                             f"{list(reference.columns)}")
        keys = reference[item].astype(str)
        repeated = keys[keys.duplicated()]
        if len(repeated):
            raise InputError("reference", f"{len(repeated)} item(s) with two labels, e.g. "
                             f"{repeated.iloc[0]!r}", "one label per item")
        reference = pd.Series(_numeric(reference, label, "reference", "label").to_numpy(),
                              index=keys.to_numpy())
    elif reference is not None:
        reference = pd.to_numeric(reference, errors="coerce")
        reference.index = reference.index.astype(str)
    return _card(frame, reference, level=level, replicates=replicates, seed=seed,
                 confidence=confidence, languages=list(pd.unique(frame["language"])),
                 families=families)


EXAMPLE = """\
example:
  polyjudge card verdicts.csv --reference gold.csv --item question_id --language lang \\
      --judge model --verdict score -o card/

writes card/agreement.csv, language_tests.csv, bias.csv, bias_tests.csv, redundancy.csv and
ranking.csv (docs/outputs.md, "Judge card"); --length LENGTH_COL for the length bias,
--author AUTHOR_COL --family gpt-4o=openai --family gpt-4o-mini=openai for self-preference.
"""


def add_parser(commands) -> argparse.ArgumentParser:
    card = commands.add_parser(
        "card", help="the judge card: agreement with a reference and among judges, per language",
        description="Is each judge right, in each language? Agreement of each judge with the "
        "reference labels and among the judges, per language, with cluster-bootstrap "
        "intervals and a test of a difference between languages.", epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    card.add_argument("verdicts", help="verdict table (CSV or Parquet): one row per verdict")
    card.add_argument("--reference", metavar="FILE",
                      help="table of the right labels (columns ITEM and LABEL); none: "
                      "agreement among the judges only")
    for name in ("item", "language", "judge", "verdict", "label"):
        card.add_argument(f"--{name}", default=name, metavar="COL",
                          help=f"column holding the {name} (default: {name})")
    card.add_argument("--cluster", metavar="COL",
                      help="column of the unit the bootstrap resamples (default: the item)")
    card.add_argument("--length", metavar="COL",
                      help="column of the judged answer's length (> 0): the length bias")
    card.add_argument("--author", metavar="COL",
                      help="column naming who wrote the judged answer: self-preference, "
                      "with --family")
    card.add_argument("--family", action="append", default=[], metavar="NAME=FAMILY",
                      help="a judge's or author's model family (repeat for each name)")
    card.add_argument("--level", choices=LEVELS, default="nominal",
                      help="level of measurement of verdicts and labels (default nominal)")
    card.add_argument("--replicates", type=int, default=1000, metavar="N",
                      help="bootstrap replicates (default 1000; 0: no intervals)")
    card.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    card.add_argument("-o", "--output", required=True, metavar="DIR",
                      help="folder to write the card's six CSV files into")
    card.set_defaults(run=run)
    return card


def run(args) -> str:
    text = (args.item, args.language, args.judge, args.cluster, args.label, args.author)
    bad = [f for f in args.family if "=" not in f]
    if bad:
        raise InputError("--family", f"{bad[0]!r} is not NAME=FAMILY",
                         "one --family per name, e.g. --family gpt-4o=openai")
    verdicts = io.read_table(args.verdicts, text=tuple(c for c in text if c))
    reference = (io.read_table(args.reference, text=(args.item,)) if args.reference else None)
    card = judge_card(verdicts, reference, item=args.item, language=args.language,
                      judge=args.judge, verdict=args.verdict, cluster=args.cluster,
                      label=args.label, level=args.level, length=args.length,
                      author=args.author,
                      families=dict(f.split("=", 1) for f in args.family) or None,
                      replicates=args.replicates, seed=args.seed, source=args.verdicts)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    card.agreement.to_csv(out / "agreement.csv", index=False)
    card.language_tests.to_csv(out / "language_tests.csv", index=False)
    card.bias.to_csv(out / "bias.csv", index=False)
    card.bias_tests.to_csv(out / "bias_tests.csv", index=False)
    card.redundancy.to_csv(out / "redundancy.csv", index=False)
    card.ranking.to_csv(out / "ranking.csv", index=False)
    kappa = card.agreement[(card.agreement["versus"] == "reference")
                           & card.agreement["measure"].str.startswith("cohen_kappa")]
    said = (f"; Cohen's kappa with the reference {kappa['estimate'].min():.3f} to "
            f"{kappa['estimate'].max():.3f}" if len(kappa) else "; no reference: among judges")
    biases = ", ".join(pd.unique(card.bias["bias"])) or "none"
    return (f"wrote {out / 'agreement.csv'} ({len(card.agreement)} rows){said}; biases: "
            f"{biases} ({out / 'bias.csv'})")
