"""Human labels beside the judges: prediction-powered estimates per language (PPI++ with power
tuning, for the finite set of a panel's items), the predictors they use and a random subset of
the labels; means valid at every look for labels that arrive in batches (``anytime``), the
items to label next and the weighted estimator their probabilities need (``active``), the label
plan of the workflow and ``polyjudge label-plan`` (``plan``), and planted panels for their
benchmarks and tests (``synthetic``)."""
from .active import (PPIEstimate, draw_items, error_model, ipw_ppi_mean, judge_spread,
                     sampling_probabilities)
from .anytime import anytime_ppi, labels_needed
from .estimates import LabelEstimates, collect, differences, label_estimates, language_rows
from .plan import item_predictions, label_plan, label_progress, next_batch
from .ranks import RANK_COLUMNS, rank_sets
from .ppi import MeanEstimate, classical_mean, ppi_mean, tuned_lambda, z_quantile
from .predictors import KINDS, by_language, cross_fit, fixed_predictors, panel_predictions
from .sampling import sample_labels

__all__ = ["KINDS", "LabelEstimates", "MeanEstimate", "PPIEstimate", "RANK_COLUMNS",
           "anytime_ppi", "by_language", "classical_mean", "collect", "cross_fit",
           "differences", "draw_items", "error_model", "fixed_predictors", "ipw_ppi_mean",
           "item_predictions", "judge_spread", "label_estimates", "label_plan",
           "label_progress", "labels_needed", "language_rows", "next_batch",
           "panel_predictions", "ppi_mean", "rank_sets", "sample_labels",
           "sampling_probabilities", "tuned_lambda", "z_quantile"]
