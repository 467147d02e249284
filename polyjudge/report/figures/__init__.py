"""Figures of the reproduction report: one function per figure, each returning a Figure.

One module per analysis (``cbc``, ``rankings``, ``ablations``, ``information``, ``judge_ls``,
``simulation``, ``calibration``, ``collection``); ``style`` holds the shared look and
:func:`save_figure`. Every figure function is re-exported here, so ``figures.interaction_heatmap``
is the one name to use.

Every function takes the tidy table(s) a workflow step writes (the columns are listed in its
docstring; the section of docs/methods.md / the CBC paper it illustrates is named there too),
validates the columns it needs, and returns a :class:`matplotlib.figure.Figure` built without
pyplot: no global figure state is created, so nothing needs closing and nothing leaks between
calls. The layout is computed when the figure is built and then fixed (so saving is byte-stable);
after changing a returned figure, call ``fig.set_layout_engine("constrained")`` to re-run it.
Categories (languages, backbones, methods, conditions) keep their order of first appearance in the
table unless a docstring says otherwise.

Style: Okabe & Ito (2008) colour-blind-safe colours, each series also has its own marker; the
diverging map is ColorBrewer RdBu centred at 0; the font is the DejaVu Sans shipped with
matplotlib, so the output does not depend on the fonts installed. :func:`save_figure` writes PNG
and SVG byte-stably (fixed dpi, no timestamp or software tag, fixed SVG id salt).
"""
from .ablations import (
    backbone_subsets_panel,
    deletion_mae,
    lolo_panel,
    task_count_curve,
)
from .calibration import applied_ranks, new_judge
from .collection import stopping_curve
from .cbc import band_vs_radius, interaction_heatmap
from .information import cmi_null_histogram
from .judge_ls import judge_ls_flips, judge_ls_position
from .rankings import heldout_tau_forest, ranking_bump_chart, reversal_strength
from .simulation import simulation_coverage
from .style import DPI, STYLE, TITLES, not_drawn, save_figure

__all__ = ['DPI', 'STYLE', 'TITLES', 'save_figure', 'interaction_heatmap', 'band_vs_radius',
           'ranking_bump_chart', 'heldout_tau_forest', 'reversal_strength', 'task_count_curve',
           'backbone_subsets_panel', 'lolo_panel', 'deletion_mae', 'cmi_null_histogram',
           'judge_ls_flips', 'judge_ls_position', 'simulation_coverage', 'applied_ranks',
           'new_judge', 'stopping_curve', 'not_drawn']
