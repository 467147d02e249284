"""Human labels beside the judges: prediction-powered estimates per language (PPI++ with power
tuning, for the finite set of a panel's items), the predictors they use and a random subset of
the labels."""
from .estimates import LabelEstimates, collect, differences, label_estimates, language_rows
from .ppi import MeanEstimate, classical_mean, ppi_mean, tuned_lambda, z_quantile
from .predictors import KINDS, by_language, cross_fit, fixed_predictors, panel_predictions
from .sampling import sample_labels

__all__ = ["KINDS", "LabelEstimates", "MeanEstimate", "by_language", "classical_mean", "collect",
           "cross_fit", "differences", "fixed_predictors", "label_estimates", "language_rows",
           "ppi_mean",
           "panel_predictions", "sample_labels", "tuned_lambda", "z_quantile"]
