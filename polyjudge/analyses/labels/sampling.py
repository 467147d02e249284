"""A random subset of the human labels, to show what a few labels per language give beside all
of them (the default run's DevAI panel holds the human label of every requirement)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def sample_labels(labels: pd.DataFrame, systems: pd.Series, n: int, seed: int = 0
                  ) -> pd.DataFrame:
    """``n`` labelled items per language and system, drawn uniformly without replacement.

    Every item gets one uniform key from ``seed`` (items in sorted order), and each language x
    system keeps its ``n`` labelled items of smallest key: a simple random sample within each
    stratum, and the same items in every language where they are labelled (a lab labels an
    item once, whatever the language its judges read). A stratum with ``n`` or fewer labelled
    items keeps them all. ``systems``: item -> system; ``labels``: one row per item and
    language (annotators combined).
    """
    items = np.sort(labels["item"].astype(str).unique())
    key = pd.Series(np.random.default_rng(seed).random(len(items)), index=items)
    frame = labels.assign(_system=labels["item"].map(systems).astype(str),
                          _key=labels["item"].map(key).to_numpy())
    frame = frame.sort_values(["language", "_system", "_key"], kind="stable")
    kept = frame.groupby(["language", "_system"], sort=False).head(n)
    return kept.drop(columns=["_system", "_key"]).sort_index().reset_index(drop=True)
