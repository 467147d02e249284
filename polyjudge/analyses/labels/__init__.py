"""A few human labels per language, spent well: prediction-powered means valid at every look
(``anytime``), the items to label next and the weighted estimator their probabilities need
(``active``), the label plan of the workflow and ``polyjudge label-plan`` (``plan``), and
planted panels for their benchmarks and tests (``synthetic``)."""
from .active import (PPIEstimate, draw_items, error_model, ipw_ppi_mean, judge_spread,
                     sampling_probabilities)
from .anytime import anytime_ppi, labels_needed
from .plan import item_predictions, label_plan, label_progress, next_batch

__all__ = ["PPIEstimate", "anytime_ppi", "draw_items", "error_model", "ipw_ppi_mean",
           "item_predictions", "judge_spread", "label_plan", "label_progress", "labels_needed",
           "next_batch", "sampling_probabilities"]
