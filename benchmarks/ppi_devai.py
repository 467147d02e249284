"""Prediction-powered estimates of DevAI's human satisfaction rates from a few human labels:
coverage of the all-labels rate and width against the labels alone, over random draws.

DevAI holds the human consensus label of every requirement of three agent frameworks
(data/devai_original/). Each draw takes n labels per framework uniformly without replacement,
and estimates each framework's satisfaction rate (the mean of all its human labels, the target)
with the labels alone and with PPI++ (``polyjudge.analyses.labels.ppi_mean``, the finite
population's interval) using as predictor:

* ``agent``: the original English Agent-as-a-Judge label (Cohen's kappa 0.78 with the humans);
* ``<language>:panel``: the mean of the six multilingual judges' verdicts in that language
  (data/devai_ml_aaaj/; kappa -0.05 to 0.06), and ``<language>:crossfit``, their cross-fitted
  least-squares combination (fitted on the draw's labels of all three frameworks, 5 folds), and
  ``<language>:<judge>`` each judge alone.

Also measured: the simultaneous (Bonferroni) coverage of the three framework differences, and
the coverage of each multilingual judge's bias and mean absolute error (stratified by
framework), as labels/differences.csv and labels/judge_errors.csv give them. Everything is
vectorised over the draws. ``plain ratio`` is ppi_py's superpopulation interval
(no finite-population correction) over the labels-alone one of the same kind.

    python benchmarks/ppi_devai.py [--draws 1000] [--n 50 100 200]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from polyjudge.analyses.labels import classical_mean, ppi_mean, z_quantile

DATA = Path(__file__).resolve().parents[1] / "data"
KEY = ["framework", "task", "requirement_id"]


def load() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per requirement: human, agent (original) and the multilingual verdicts."""
    long = pd.read_parquet(DATA / "devai_original/requirement_labels_long.parquet")
    labels = long.pivot_table(index=KEY, columns="judge", values="satisfied").reset_index()
    ml = pd.read_parquet(DATA / "devai_ml_aaaj/requirement_judgments.parquet")
    wide = ml.pivot_table(index=KEY, columns=["language", "backbone"], values="satisfied")
    return labels, wide


def draw(rng, n_items: int, n: int, draws: int) -> np.ndarray:
    """(draws, n) positions drawn uniformly without replacement."""
    return np.argsort(rng.random((draws, n_items)), axis=1)[:, :n]


def cross_fit_draws(design: np.ndarray, idx: np.ndarray, y: np.ndarray, folds: int = 5):
    """Cross-prediction for every draw at once: design (N, p), idx (B, n) labelled positions,
    y (B, n) their labels -> (on_all (B, N), on_labelled (B, n))."""
    draws, n = idx.shape
    fold = np.arange(n) % folds  # the draw's order is already random
    on_all = np.zeros((draws, len(design)))
    on_labelled = np.empty((draws, n))
    ridge = 1e-9 * np.eye(design.shape[1])
    for k in range(folds):
        train = fold != k
        x = design[idx[:, train]]
        coef = np.linalg.solve(np.einsum("bij,bik->bjk", x, x) + ridge,
                               np.einsum("bij,bi->bj", x, y[:, train])[..., None])[..., 0]
        on_all += coef @ design.T / folds
        on_labelled[:, ~train] = np.einsum("bij,bj->bi", design[idx[:, ~train]], coef)
    return on_all, on_labelled


def summarise(name, n, truth, human, ppi, plain=None) -> dict:
    covers = (ppi.ci_low <= truth) & (truth <= ppi.ci_high)
    h_covers = (human.ci_low <= truth) & (truth <= human.ci_high)
    row = {"predictor": name, "n": n, "coverage": covers.mean(),
           "human_coverage": h_covers.mean(), "width_ratio": ppi.width.mean() / human.width.mean()}
    if plain is not None:
        row["plain_ratio"] = plain
    return row


def agent_rows(labels: pd.DataFrame, ns, draws: int, seed: int) -> list[dict]:
    rows = []
    for f, (framework, block) in enumerate(labels.groupby("framework")):
        y, pred = block["human"].to_numpy(float), block["agent_gray_box"].to_numpy(float)
        big_n, truth = len(y), y.mean()
        for n in ns:
            idx = draw(np.random.default_rng([seed, f, n]), big_n, n, draws)
            human = classical_mean(y[idx], n_population=big_n, label_range=(0, 1))
            ppi = ppi_mean(y[idx], pred[idx], pred, n_population=big_n, label_range=(0, 1))
            plain_fit = ppi_mean(y[idx], pred[idx], pred)
            plain = plain_fit.width.mean() / classical_mean(y[idx]).width.mean()
            rows.append({"framework": framework,
                         **summarise("agent", n, truth, human, ppi, plain),
                         "plain_coverage": np.mean((plain_fit.ci_low <= truth)
                                                   & (truth <= plain_fit.ci_high))})
    return rows


def multilingual_rows(labels: pd.DataFrame, wide: pd.DataFrame, ns, draws: int, seed: int
                      ) -> list[dict]:
    table = labels.set_index(KEY)
    common = table.index.intersection(wide.index)  # the 1,095 requirements judged
    table, wide = table.loc[common], wide.loc[common]
    frameworks = table.index.get_level_values("framework").to_numpy()
    names = sorted(set(frameworks))
    y_all = table["human"].to_numpy(float)
    rows, checks = [], []
    for language in wide.columns.get_level_values(0).unique():
        verdicts = wide[language].to_numpy(float)
        design = np.column_stack([np.ones(len(verdicts)), verdicts])
        predictors = {"panel": verdicts.mean(axis=1),
                      **{j: verdicts[:, i] for i, j in enumerate(wide[language].columns)}}
        for n in ns:
            rng = np.random.default_rng([seed, n, len(language)])
            where = {f: np.flatnonzero(frameworks == f) for f in names}
            idx = {f: where[f][draw(rng, len(where[f]), n, draws)] for f in names}
            pooled = np.concatenate([idx[f] for f in names], axis=1)
            on_all, on_lab = cross_fit_draws(design, pooled, y_all[pooled])
            fits = {}
            for i, f in enumerate(names):
                y, big_n, truth = y_all[idx[f]], len(where[f]), y_all[where[f]].mean()
                human = classical_mean(y, n_population=big_n, label_range=(0, 1))
                fits.setdefault("human_only", []).append((human, truth))
                for name, pred in predictors.items():
                    ppi = ppi_mean(y, pred[idx[f]], pred[where[f]], n_population=big_n,
                                   label_range=(0, 1))
                    if name == "panel":
                        fits.setdefault("ppi:panel", []).append((ppi, truth))
                    rows.append({"framework": f, "language": language,
                                 **summarise(name, n, truth, human, ppi)})
                cols = slice(i * n, (i + 1) * n)
                ppi = ppi_mean(y, on_lab[:, cols], on_all[:, where[f]], n_population=big_n,
                               label_range=(0, 1))
                rows.append({"framework": f, "language": language,
                             **summarise("crossfit", n, truth, human, ppi)})
            for estimator, found in fits.items():
                checks.append({"check": f"differences ({estimator})", "n": n,
                               "coverage": simultaneous(found)})
            for j, judge in enumerate(wide[language].columns):
                for measure, error in (("bias", verdicts[:, j] - y_all),
                                       ("mae", np.abs(verdicts[:, j] - y_all))):
                    checks.append({"check": f"judge {measure}", "n": n,
                                   "coverage": stratified(error, where, idx, names)})
    return rows, checks


def simultaneous(found) -> float:
    """Share of draws in which every pairwise difference's Bonferroni interval covers."""
    a, b = np.triu_indices(len(found), k=1)
    z = z_quantile(0.95, len(a))
    ok = np.ones(len(found[0][0].estimate), bool)
    for i, k in zip(a, b):
        (fi, ti), (fk, tk) = found[i], found[k]
        half = z * np.hypot(fi.se, fk.se)
        ok &= np.abs(fi.estimate - fk.estimate - (ti - tk)) <= half
    return ok.mean()


def stratified(error, where, idx, names) -> float:
    """Coverage of a judge's stratified mean error (labels/judge_errors.csv's interval)."""
    sizes = np.array([len(where[f]) for f in names], float)
    share = sizes / sizes.sum()
    fits = [classical_mean(error[idx[f]], n_population=len(where[f])) for f in names]
    estimate = sum(w * fit.estimate for w, fit in zip(share, fits))
    se = np.sqrt(sum(w ** 2 * fit.se ** 2 for w, fit in zip(share, fits)))
    truth = sum(w * error[where[f]].mean() for w, f in zip(share, names))
    return np.mean(np.abs(estimate - truth) <= z_quantile(0.95) * se)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    labels, wide = load()
    pd.set_option("display.width", 120)
    agent = pd.DataFrame(agent_rows(labels, args.n, args.draws, args.seed))
    print("Original Agent-as-a-Judge labels as predictor, per framework:")
    print(agent.round(3).to_string(index=False))
    found, checks = multilingual_rows(labels, wide, args.n, args.draws, args.seed)
    ml = pd.DataFrame(found)
    ml["kind"] = np.where(ml["predictor"].isin(["panel", "crossfit"]), ml["predictor"],
                          "one judge")
    summary = ml.groupby(["kind", "n"]).agg(
        coverage_min=("coverage", "min"), coverage_mean=("coverage", "mean"),
        human_coverage_min=("human_coverage", "min"),
        width_ratio_mean=("width_ratio", "mean"), width_ratio_max=("width_ratio", "max"))
    print("\nMultilingual judges as predictor (8 languages x 3 frameworks; one judge: x 6):")
    print(summary.round(3).to_string())
    checks = pd.DataFrame(checks).groupby(["check", "n"])["coverage"].agg(["min", "mean"])
    print("\nMultilingual judges: simultaneous coverage of the framework differences (8 "
          "languages) and coverage of each judge's errors (48 judge x language):")
    print(checks.round(3).to_string())


if __name__ == "__main__":
    main()
