"""Small synthetic tables with the pipeline's columns, the report figures' inputs in
tests/test_figures.py: one builder per table, and :data:`SYNTHETIC`, every figure builder's
arguments built from them."""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from polyjudge.cbc.estimator import double_center


LANGUAGES = ("English", "Arabic", "Spanish", "Swahili")
BACKBONES = ("gpt-4o", "gpt-5.4", "qwen3.5-9b")


# --- small synthetic tables with the pipeline's columns ------------------------------------------
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
                         "spread_low": [0.61, 0.80, 1.0, -0.12, np.nan],
                         "spread_high": [0.71, 0.97, 1.0, -0.07, np.nan],
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
    frame = frame.assign(cbc_imputed_tau=frame["cbc_tau"],
                         cbc_imputed_tau_low=frame["cbc_tau_low"],
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
