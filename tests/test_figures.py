"""Report figures: each builder on small synthetic tables (always) and on the workflow's real
outputs (when present), checking what is drawn, the saved files, and byte-stable output."""
import json
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from polyjudge.cbc.estimator import double_center
from polyjudge.report import figures as fg
from polyjudge.report.figures.style import OKABE_ITO

LANGUAGES = ("English", "Arabic", "Spanish", "Swahili")
BACKBONES = ("gpt-4o", "gpt-5.4", "qwen3.5-9b")


# --- small synthetic tables with the pipeline's columns -------------------------------------------
def cell_means() -> np.ndarray:
    """A 4 x 3 language x backbone cell-mean matrix with a rank reversal (gpt-4o / gpt-5.4)."""
    return np.array([[60.0, 40.0, 20.0], [50.0, 45.0, 30.0], [35.0, 55.0, 25.0],
                     [52.0, 50.0, 10.0]])


def long_frame(matrix: np.ndarray, name: str) -> pd.DataFrame:
    return pd.DataFrame({"language": np.repeat(LANGUAGES, len(BACKBONES)),
                         "backbone": np.tile(BACKBONES, len(LANGUAGES)),
                         name: matrix.ravel()})


def beta_table() -> pd.DataFrame:
    return long_frame(double_center(cell_means()), "beta")


def rankings_table() -> pd.DataFrame:
    means, beta = cell_means(), double_center(cell_means())
    rank = lambda m: (-m).argsort(axis=1).argsort(axis=1) + 1  # noqa: E731 (1 = best per row)
    frame = long_frame(means, "mean_raw").assign(mean_cbc=(means - beta).ravel())
    return frame.assign(rank_raw=rank(means).ravel(), rank_cbc=rank(means - beta).ravel())


def tau_table() -> pd.DataFrame:
    return pd.DataFrame({"method": ["Raw", "CBC", "Oracle", "Quantile", "Dawid-Skene"],
                         "mean": [0.65, 0.90, 1.0, -0.10, np.nan],
                         "ci_low": [0.61, 0.80, 1.0, -0.12, np.nan],
                         "ci_high": [0.71, 0.97, 1.0, -0.07, np.nan],
                         "full_fit": [0.63, 1.0, 1.0, -0.12, np.nan],
                         "n_replicates": [1000, 1000, 1000, 1000, 0]})


def pairs_table() -> pd.DataFrame:
    return pd.DataFrame({"backbone_i": ["gpt-4o", "gpt-4o", "gpt-5.4"],
                         "backbone_j": ["gpt-5.4", "qwen3.5-9b", "qwen3.5-9b"],
                         "witness_a": ["English", "English", "Arabic"],
                         "witness_b": ["Spanish", "Arabic", "Spanish"],
                         "d_a": [20.0, 40.0, 15.0], "d_b": [-20.0, 20.0, 30.0],
                         "delta": [400.0, 0.0, 12.5], "p_value": [1e-8, 1.0, 0.2],
                         "q_value": [3e-8, 1.0, 0.3], "reversed": [True, False, True],
                         "significant": [True, False, False]})


def task_count_table(with_truth: bool = True) -> pd.DataFrame:
    n = np.array([10, 20, 30, 40, 55])
    frame = pd.DataFrame({"n_tasks": n, "tau_mean": [0.76, 0.84, 0.85, 0.89, 0.91],
                          "tau_sd": [0.10, 0.06, 0.06, 0.05, 0.05],
                          "raw_tau_mean": [0.66, 0.66, 0.65, 0.66, 0.65],
                          "error_mean": 5.0 / np.sqrt(n), "error_sd": 1.0 / np.sqrt(n),
                          "radius": 74.0 / np.sqrt(n)})
    return frame.assign(error_true_mean=5.5 / np.sqrt(n), error_true_sd=1.1 / np.sqrt(n)) \
        if with_truth else frame


def subsets_table() -> pd.DataFrame:
    subsets = pd.DataFrame({"level": "subset", "size": [2, 2, 2, 3],
                            "backbones": ["a+b", "a+c", "b+c", "a+b+c"], "n_subsets": 1,
                            "tau_mean": [1.0, 0.6, 0.9, 0.85], "tau_sd": [0.0, 0.3, 0.1, 0.05],
                            "raw_tau_mean": [0.5, 0.1, 0.9, 0.6]})
    sizes = pd.DataFrame({"level": "size", "size": [2, 3], "backbones": np.nan,
                          "n_subsets": [3, 1], "tau_mean": [2.5 / 3, 0.85],
                          "tau_sd": [np.std([1.0, 0.6, 0.9], ddof=1), 0.0],
                          "raw_tau_mean": [0.5, 0.6]})
    return pd.concat([subsets, sizes], ignore_index=True)


def lolo_table() -> pd.DataFrame:
    raw, cbc = np.array([0.61, 0.75, 0.41, 0.74]), np.array([0.62, 0.90, 0.50, 0.88])
    frame = pd.DataFrame({"language": LANGUAGES, "raw_tau": raw, "raw_tau_low": raw - 0.07,
                          "raw_tau_high": raw + 0.06, "cbc_tau": cbc, "cbc_tau_low": cbc - 0.1,
                          "cbc_tau_high": cbc + 0.08})
    frame = frame.assign(cbc_imputed_tau=frame["cbc_tau"], cbc_imputed_tau_low=frame["cbc_tau_low"],
                         cbc_imputed_tau_high=frame["cbc_tau_high"])
    overall = {"language": "overall", "raw_tau": raw.mean(), "cbc_tau": cbc.mean(),
               "cbc_imputed_tau": cbc.mean()}
    return pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)


def cmi_tables() -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(3)
    null = pd.DataFrame({"convention": np.repeat(["protocol", "sklearn"], 200),
                         "shard": np.tile(np.repeat([0, 1], 100), 2),
                         "draw": np.tile(np.arange(100), 4),
                         "statistic": np.r_[rng.normal(-0.29, 0.005, 200),
                                            rng.normal(0.056, 0.005, 200)]})
    summary = {"k": 2,
               "protocol": {"observed": -0.115, "null_mean": -0.29, "debiased": 0.178,
                            "band_low": 0.168, "band_high": 0.186, "p_value": 1 / 201},
               "sklearn": {"observed": 0.192, "null_mean": 0.056, "debiased": 0.137,
                           "band_low": 0.127, "band_high": 0.146, "p_value": 1 / 201}}
    return null, summary


def flips_table() -> pd.DataFrame:
    rows = []
    for judge, base in (("GPT-4", 0.08), ("Falcon", 0.2)):
        for target, shift in (("CoT", 0.0), ("Swap", 0.05), ("Rating", 0.3)):
            for subset, extra in (("natural", 0.01), ("adversarial", -0.01), ("all", 0.0)):
                rate = base + shift + extra
                rows.append({"judge": judge, "reference": "Vanilla", "target": target,
                             "subset": subset, "n_pairs": 400, "flip_rate": rate,
                             "flip_ci_low": rate - 0.03, "flip_ci_high": rate + 0.03,
                             "gold_flip_rate": rate})
    return pd.DataFrame(rows)


def position_table() -> pd.DataFrame:
    rows = []
    for judge, base in (("GPT-4", 0.1), ("Falcon", 0.7), ("PaLM2", 0.3), ("LLaMA2", 0.25)):
        for condition in ("Vanilla", "CoT", "Swap") + (("Rating",) if judge == "GPT-4" else ()):
            for subset in ("natural", "all"):
                rows.append({"judge": judge, "condition": condition, "subset": subset, "n": 400,
                             "position_inconsistency": base, "position_ci_low": base - 0.04,
                             "position_ci_high": base + 0.04})
    return pd.DataFrame(rows)


def mae_table() -> pd.DataFrame:
    methods = ["available_means", "task_adjusted", "least_squares"]
    return pd.DataFrame({"rate": np.repeat([0.05, 0.10], 3), "method": methods * 2,
                         "n_deleted": np.repeat([132, 264], 3),
                         "mae_mean": [0.34, 0.23, 0.17, 0.51, 0.34, 0.25],
                         "mae_sd": [0.06, 0.03, 0.02, 0.07, 0.04, 0.04], "n_replicates": 200})


def band_tables() -> tuple[pd.DataFrame, dict]:
    frame = beta_table().assign(se=1.0)
    frame = frame.assign(band_low=frame["beta"] - 3.6, band_high=frame["beta"] + 3.6)
    summary = {"level": 0.95, "critical_value": 3.6, "radius_total_sd": 9.96,
               "radius_residual_sd": 4.88}
    return frame, summary


# builder name -> (synthetic arguments, real arguments or None when the outputs are missing)
def read_json(path):
    return json.loads(Path(path).read_text())


SYNTHETIC = {
    "interaction_heatmap": lambda: {"beta": beta_table()},
    "ranking_bump_chart": lambda: {"rankings": rankings_table()},
    "heldout_tau_forest": lambda: {"tau": tau_table(), "published": {"Raw": 0.650, "CBC": 0.902}},
    "reversal_strength": lambda: {"pairs": pairs_table()},
    "task_count_curve": lambda: {"task_count": task_count_table()},
    "backbone_subsets_panel": lambda: {"subsets": subsets_table()},
    "lolo_panel": lambda: {"lolo": lolo_table()},
    "cmi_null_histogram": lambda: dict(zip(("null", "summary"), cmi_tables())),
    "judge_ls_flips": lambda: {"flips": flips_table()},
    "judge_ls_position": lambda: {"position": position_table()},
    "deletion_mae": lambda: {"mae": mae_table()},
    "band_vs_radius": lambda: dict(zip(("bands", "summary"), band_tables())),
    "simulation_coverage": lambda: {"summary": pd.DataFrame({
        "scenario": ["paper_size", "few_tasks"], "n_panels": [1000, 300],
        "coverage_radius_total": [1.0, 0.997], "coverage_radius_residual": [0.999, 0.99],
        "coverage_band": [0.945, 0.97]})},
    "stopping_curve": lambda: {"stopping": stopping_table()},
}


def stopping_table():
    return pd.DataFrame({"round": [1, 2, 3, 4], "items": [50, 100, 150, 200],
                         "cost_usd": [1.2, 2.4, 3.6, 4.8],
                         "max_beta_halfwidth": [0.61, 0.40, 0.31, 0.26],
                         "undecided_pairs": [6, 3, 1, 0], "stop": [False, False, False, True]})

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
    assert texts[0] == "not available" and texts[3] == "0.900 [0.800, 0.970]"
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
                 if line.get_marker() not in ("None", "") and line.get_markerfacecolor() != "white")
    assert filled == int((np.abs(bands["beta"]) > 3.6).sum())
    legend_text = " ".join(text.get_text() for legend in fig.legends for text in legend.get_texts())
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
    assert own == ["mean, 95% interval"]
    assert legend_labels(fg.heldout_tau_forest(tau_table(), published={"Other": 0.5})) == own
    paper = legend_labels(fg.heldout_tau_forest(tau_table(), published={"CBC": 0.9}))
    assert paper == ["reproduced mean, 95% interval", "published mean"]
