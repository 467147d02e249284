"""Report figures: each builder on small synthetic tables (always) and on the workflow's real
outputs (when present), checking what is drawn, the saved files, and byte-stable output. The
tables are tests/figure_inputs.py."""
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from figure_inputs import (BACKBONES, LANGUAGES, SYNTHETIC, band_tables, beta_table, cmi_tables,
                           flips_table, lolo_table, mae_table, pairs_table, position_table,
                           rankings_table, stopping_table, subsets_table, task_count_table,
                           tau_table)
from polyjudge.report import figures as fg
from polyjudge.report.figures.style import OKABE_ITO


def save_and_check(fig: Figure, directory: Path, stem: str) -> tuple[bytes, bytes]:
    """Save ``fig``; check both files and the PNG's pixel size; return their bytes."""
    png, svg = directory / f"{stem}.png", directory / f"{stem}.svg"
    fg.save_figure(fig, png, svg)
    assert png.stat().st_size > 10_000 and svg.stat().st_size > 10_000
    width, height = fig.get_size_inches() * fg.DPI
    assert width.is_integer() and height.is_integer()  # sizes are whole pixels, no rounding
    image = matplotlib.image.imread(png)
    assert image.shape == (height, width, 4)
    assert image[..., :3].std() > 0.05  # something is drawn, not a blank page
    assert svg.read_text().lstrip().startswith("<?xml") and "</svg>" in svg.read_text()
    return png.read_bytes(), svg.read_bytes()


# --- every figure: files, pixel size, byte-stable saving -----------------------------------------
@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_figure_saves_byte_identical_png_and_svg(name, tmp_path):
    fig = getattr(fg, name)(**SYNTHETIC[name]())
    assert isinstance(fig, Figure)
    width, height = fig.get_size_inches()
    assert 4 <= width <= 8 and 2 <= height <= 10  # fits a report page
    first = save_and_check(fig, tmp_path, "first")
    second = save_and_check(fig, tmp_path, "second")
    assert first == second
    third = save_and_check(getattr(fg, name)(**SYNTHETIC[name]()), tmp_path, "rebuilt")
    assert third == first  # building again from the same tables gives the same bytes


def test_builders_leave_global_state_alone():
    before = dict(matplotlib.rcParams)
    fg.interaction_heatmap(beta_table())
    fg.save_figure(fg.deletion_mae(mae_table()), *(Path("/dev/null"),) * 2)
    assert dict(matplotlib.rcParams) == before


# --- what each figure shows ----------------------------------------------------------------------
def tick_labels(axis):
    return [label.get_text() for label in axis.get_ticklabels()]


def test_heatmap_shows_every_cell_in_file_order_centred_at_zero():
    beta = beta_table()
    fig = fg.interaction_heatmap(beta)
    ax = fig.axes[0]
    image = ax.images[0]
    vmin, vmax = image.get_clim()
    assert vmin == -vmax == -np.abs(beta["beta"]).max()
    assert tick_labels(ax.yaxis) == list(LANGUAGES) and tick_labels(ax.xaxis) == list(BACKBONES)
    np.testing.assert_array_equal(image.get_array(), beta["beta"].to_numpy().reshape(4, 3))
    assert [text.get_text() for text in ax.texts] == [f"{value:.1f}" for value in beta["beta"]]
    tiny = beta.assign(beta=np.r_[-0.01, beta["beta"].iloc[1:]])  # no "-0.0" label
    assert fg.interaction_heatmap(tiny).axes[0].texts[0].get_text() == "0.0"
    small = fg.interaction_heatmap(beta.assign(beta=beta["beta"] / 100))
    assert small.axes[0].texts[0].get_text() == f"{beta['beta'][0] / 100:.2f}"
    colorbar = fg.interaction_heatmap(beta, units="margin points").axes[1]
    assert colorbar.get_ylabel() == "interaction β (margin points)"


def test_bump_chart_puts_rank_one_on_top_and_draws_both_rankings():
    rankings = rankings_table()
    raw_ax, cbc_ax = fg.ranking_bump_chart(rankings).axes
    low, high = raw_ax.get_ylim()
    assert low > high  # inverted: rank 1 at the top
    for ax, column in ((raw_ax, "rank_raw"), (cbc_ax, "rank_cbc")):
        assert [line.get_label() for line in ax.lines] == list(BACKBONES)
        drawn = np.array([line.get_ydata() for line in ax.lines])
        expected = rankings.pivot(index="backbone", columns="language", values=column)
        np.testing.assert_array_equal(drawn, expected.loc[list(BACKBONES), list(LANGUAGES)])
    # CBC-calibrated means are additive: the same ranking in every language (flat lines)
    assert all(np.ptp(line.get_ydata()) == 0 for line in cbc_ax.lines)
    assert any(np.ptp(line.get_ydata()) > 0 for line in raw_ax.lines)


def test_forest_sorts_by_mean_and_marks_published_values():
    fig = fg.heldout_tau_forest(tau_table(), published={"Raw": 0.650, "CBC": 0.902, "Other": 0.5})
    ax = fig.axes[0]
    # y grows upwards: the unavailable method at the bottom, then ascending means, Oracle on top
    assert tick_labels(ax.yaxis) == ["Dawid-Skene", "Quantile", "Raw", "CBC", "Oracle"]
    published = [line for line in ax.lines if line.get_label() == "published mean"][0]
    assert published.get_markerfacecolor() == "none"
    np.testing.assert_array_equal(published.get_xdata(), [np.nan, np.nan, 0.650, 0.902, np.nan])
    texts = [text.get_text() for text in ax.texts]
    # the replicate spread in words, never in brackets: it is not a confidence interval
    assert texts[0] == "not available" and texts[3] == "0.900; replicates 0.800 to 0.970"
    assert any(line.get_xdata()[0] == 0 and line.get_xdata()[1] == 0 for line in ax.lines)


def test_reversal_bars_are_sorted_and_coloured_by_significance():
    pairs = pairs_table()
    ax = fg.reversal_strength(pairs).axes[0]
    widths = [bar.get_width() for bar in ax.patches]
    assert widths == sorted(pairs["delta"])
    colours = [to_hex(bar.get_facecolor()) for bar in ax.patches]
    assert colours == [OKABE_ITO[1].lower(), OKABE_ITO[1].lower(), OKABE_ITO[0].lower()]
    labels = tick_labels(ax.yaxis)
    assert labels[-1] == "gpt-4o vs gpt-5.4\n(English / Spanish)"
    assert labels[0] == "gpt-4o vs qwen3.5-9b\n(no reversal)"
    assert [text.get_text() for text in ax.texts] == ["q = 3.0e-01", "q = 3.0e-08"]
    assert "2 of 3 pairs reverse, 1 significantly" in ax.get_title()


def test_task_count_reference_passes_through_the_last_point():
    table = task_count_table()
    left, right = fg.task_count_curve(table).axes
    assert right.get_xscale() == right.get_yscale() == "log"
    reference = [line for line in right.lines if "through last point" in line.get_label()][0]
    x, y = reference.get_data()
    np.testing.assert_allclose(y * np.sqrt(x), 5.0)  # c / sqrt(n) with c = error(55) sqrt(55)
    assert y[-1] == pytest.approx(table["error_mean"].iloc[-1])
    labels = [text.get_text() for text in right.get_legend().get_texts()]
    assert any("true" in label for label in labels)
    radius = [line for line in right.lines if line.get_label() == "finite-sample radius"][0]
    np.testing.assert_allclose(radius.get_ydata(), table["radius"])
    without = fg.task_count_curve(task_count_table(with_truth=False)).axes[1]
    assert not any("true" in text.get_text() for text in without.get_legend().get_texts())
    np.testing.assert_allclose(left.lines[0].get_ydata(), table["tau_mean"])


def test_subset_panel_draws_each_subset_and_the_size_summary():
    table = subsets_table()
    ax = fg.backbone_subsets_panel(table).axes[0]
    points = ax.collections[0].get_offsets()
    subsets = table[table["level"] == "subset"]
    np.testing.assert_array_equal(points[:, 1], subsets["tau_mean"])
    assert np.all(np.abs(points[:, 0] - subsets["size"]) <= 0.2)
    assert tick_labels(ax.xaxis) == ["2\n(3 subsets)", "3\n(1 subset)"]
    summary = [line for line in ax.lines if line.get_marker() == "D"][0]
    np.testing.assert_allclose(summary.get_ydata().astype(float),
                               table.loc[table["level"] == "size", "tau_mean"])


def test_lolo_lists_languages_then_overall():
    ax = fg.lolo_panel(lolo_table()).axes[0]
    assert tick_labels(ax.yaxis) == [*LANGUAGES, "overall (mean)"]
    legend = [text.get_text() for text in ax.figure.legends[0].get_texts()]
    assert legend[0] == "raw" and legend[1].startswith("CBC, zero-shot")


def test_cmi_histogram_marks_observed_value_and_p_value():
    null, summary = cmi_tables()
    fig = fg.cmi_null_histogram(null, summary)
    assert [ax.get_title() for ax in fig.axes] == ["protocol convention", "sklearn convention"]
    for ax, convention in zip(fig.axes, ("protocol", "sklearn")):
        observed = [line for line in ax.lines if line.get_label().startswith("observed")][0]
        assert observed.get_xdata()[0] == summary[convention]["observed"]
        assert "p = 0.00498" in observed.get_label()
        low, high = ax.get_xlim()
        assert low < null.loc[null["convention"] == convention, "statistic"].min()
        assert high > summary[convention]["observed"]
        assert sum(patch.get_height() for patch in ax.patches) == 200


def test_flips_draw_only_pooled_rows_per_judge():
    flips = flips_table()
    fig = fg.judge_ls_flips(flips)
    ax = fig.axes[0]
    assert tick_labels(ax.yaxis) == ["CoT", "Swap", "Rating"]
    points = [line for line in ax.lines if line.get_linestyle() == "None"]
    assert [len(line.get_xdata()) for line in points] == [3, 3]  # 3 targets per judge
    pooled = flips[flips["subset"] == "all"]
    np.testing.assert_allclose(np.concatenate([line.get_xdata() for line in points]),
                               pooled["flip_rate"])
    assert [text.get_text() for text in fig.legends[0].get_texts()] == ["GPT-4", "Falcon"]
    assert "vs Vanilla" in ax.get_xlabel()


def test_position_has_one_panel_per_judge_with_empty_rows_for_missing_conditions():
    fig = fg.judge_ls_position(position_table())
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["GPT-4", "Falcon", "PaLM2", "LLaMA2"]
    assert len(fig.axes) == 6  # 2 x 3 grid, two panels hidden
    assert tick_labels(visible[0].yaxis) == ["Vanilla", "CoT", "Swap", "Rating"]
    assert [len(ax.lines[0].get_xdata()) for ax in visible] == [4, 3, 3, 3]


def test_deletion_mae_has_one_series_per_estimator():
    ax = fg.deletion_mae(mae_table()).axes[0]
    assert [text.get_text() for text in ax.get_legend().get_texts()] == [
        "available_means", "task_adjusted", "least_squares"]
    assert tick_labels(ax.xaxis) == ["5", "10"]
    assert ax.get_ylim()[0] == 0


def test_band_figure_shows_radii_and_which_bands_exclude_zero():
    bands, summary = band_tables()
    fig = fg.band_vs_radius(bands, summary)
    ax = fig.axes[0]
    assert tick_labels(ax.xaxis) == list(LANGUAGES)
    dashed = sorted(line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--")
    assert dashed == [-9.96, 9.96]
    span = ax.patches[0].get_path().get_extents().transformed(ax.patches[0].get_patch_transform())
    assert (span.y0, span.y1) == pytest.approx((-4.88, 4.88))
    filled = sum(len(line.get_xdata()) for line in ax.lines
                 if line.get_marker() not in ("None", "")
                 and line.get_markerfacecolor() != "white")
    assert filled == int((np.abs(bands["beta"]) > 3.6).sum())
    legend_text = " ".join(text.get_text() for legend in fig.legends
                           for text in legend.get_texts())
    assert "4.88" in legend_text and "9.96" in legend_text and "critical value 3.60" in legend_text


# --- input validation ----------------------------------------------------------------------------
@pytest.mark.parametrize("name, argument, column", [
    ("interaction_heatmap", "beta", "beta"), ("reversal_strength", "pairs", "delta"),
    ("lolo_panel", "lolo", "cbc_tau_high"), ("judge_ls_flips", "flips", "subset")])
def test_missing_columns_are_named(name, argument, column):
    arguments = SYNTHETIC[name]()
    arguments[argument] = arguments[argument].drop(columns=column)
    with pytest.raises(ValueError, match=column):
        getattr(fg, name)(**arguments)


def test_bad_inputs_raise_readable_errors():
    with pytest.raises(ValueError, match="subset == 'all'"):
        fg.judge_ls_position(position_table().query("subset != 'all'"))
    with pytest.raises(ValueError, match="more than one row"):
        fg.interaction_heatmap(pd.concat([beta_table(), beta_table()]))
    with pytest.raises(ValueError, match="no rows"):
        fg.deletion_mae(mae_table().iloc[:0])
    null, summary = cmi_tables()
    with pytest.raises(ValueError, match="sklearn"):
        fg.cmi_null_histogram(null, {"protocol": summary["protocol"]})
    with pytest.raises(ValueError, match="radius_residual_sd"):
        fg.band_vs_radius(band_tables()[0], {"radius_total_sd": 9.96})
    with pytest.raises(ValueError, match="level == 'subset' and 'size'"):
        fg.backbone_subsets_panel(subsets_table().query("level == 'size'"))


def test_stopping_curve_draws_every_round_and_rings_the_stop():
    fig = fg.stopping_curve(stopping_table())
    width_axis, pairs_axis = fig.axes
    assert list(width_axis.lines[0].get_ydata()) == [0.61, 0.40, 0.31, 0.26]
    assert list(pairs_axis.lines[0].get_xdata()) == [1.2, 2.4, 3.6, 4.8]
    ringed = pairs_axis.collections[0].get_offsets()
    assert ringed.tolist() == [[4.8, 0.0]]
# --- titles, legends of present series only, the FDR level ---------------------------------------
def legend_labels(fig: Figure) -> list[str]:
    legends = [*fig.legends] + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [text.get_text() for legend in legends for text in legend.get_texts()]


def test_the_figure_script_names_the_panel_in_every_title():
    """Every figure the workflow draws names its panel in the title, so figures of several
    panels are told apart (titles are passed by workflow_scripts/figure.py)."""
    source = (Path(__file__).resolve().parents[1] / "workflow_scripts" / "figure.py").read_text()
    builders = source[source.index("builders = {"):source.index("return builders")]
    entries = builders.split('\n        "')[1:]
    assert len(entries) == 14  # every figure of rules/report.functions.smk's FIGURES
    assert all("title=title(" in entry for entry in entries), [
        entry.split('"')[0] for entry in entries if "title=title(" not in entry]
    ax = fg.reversal_strength(pairs_table(), fdr=0.05, title="Rank reversal (my_panel)").axes[0]
    assert ax.get_title().startswith("Rank reversal (my_panel)\n2 of 3 pairs reverse")
    fig = fg.task_count_curve(task_count_table(), title="Task-count ablation (my_panel)")
    assert fig.get_suptitle() == "Task-count ablation (my_panel)"


def test_the_fdr_level_is_in_the_legend_and_absent_series_have_no_entry():
    pairs = pairs_table()
    fig = fg.reversal_strength(pairs, fdr=0.1)
    assert legend_labels(fig) == ["significant (BH q ≤ 0.1)", "not significant"]
    assert "(BH FDR 0.1)" in fig.axes[0].get_title()
    none_significant = pairs.assign(significant=False)
    assert legend_labels(fg.reversal_strength(none_significant, fdr=0.05)) == ["not significant"]
    bands, summary = band_tables()
    wide = bands.assign(band_low=bands["beta"] - 100, band_high=bands["beta"] + 100)
    labels = legend_labels(fg.band_vs_radius(wide, summary))
    assert not any("excludes 0" in label for label in labels)
    assert any(label.startswith("β ± simultaneous 95% band") and "contains 0" in label
               for label in labels)
    no_truth = task_count_table().assign(error_true_mean=np.nan, error_true_sd=np.nan)
    assert not any("true" in label for label in legend_labels(fg.task_count_curve(no_truth)))
    subsets = subsets_table().assign(raw_tau_mean=np.nan)
    assert "raw (mean across subsets)" not in legend_labels(fg.backbone_subsets_panel(subsets))


def test_the_heldout_legend_says_reproduced_only_beside_published_values():
    """Item 10: on a user's panel (no published values) the legend said "reproduced mean"."""
    own = legend_labels(fg.heldout_tau_forest(tau_table()))
    assert own == ["mean, replicate spread (2.5-97.5%), not a confidence interval"]
    assert legend_labels(fg.heldout_tau_forest(tau_table(), published={"Other": 0.5})) == own
    paper = legend_labels(fg.heldout_tau_forest(tau_table(), published={"CBC": 0.9}))
    assert paper == ["reproduced mean, replicate spread (2.5-97.5%), not a confidence interval",
                     "published mean"]
