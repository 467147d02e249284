"""Synthetic judge runs with a planted language x backbone interaction.

The additive model behind CBC (CBC paper, section 3; docs/methods.md section 1), one score per run:

    S[t, l, b, f] = mean + mu(t) + alpha(b) + beta(l, b) + gamma(t, l) + delta(t, l, b)
                    + e[t, l, b, f]

with independent Gaussian components: task difficulty ``mu``, backbone leniency ``alpha``, the
interaction ``beta`` that CBC estimates (planted double-centred: every row and column sums to 0),
a task x language term ``gamma`` (it carries the language main effect and cancels in the
double-centring of a complete panel), an optional three-way term ``delta`` and run noise ``e``
(the frameworks are repeats). Options: drop a fraction of task x language x backbone cells (all
frameworks of a cell), clip scores to [0, 100], or judge ``n`` requirements per task with
Bernoulli verdicts, satisfied with probability ``clip(S / 100, 0, 1)``, so that a run's score is
``100 x satisfied / requirements`` (expectation ``clip(S, 0, 100)``).

Each component draws from its own stream spawned from the seed, so changing one setting (say the
SD of gamma) leaves the draws of every other component unchanged. Runs are built by
broadcasting, with categorical labels: ten million runs take about 1.5 s and 150 MB.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..cbc.estimator import double_center

SIMULATION_SETTINGS = ("seed", "n_tasks", "n_languages", "n_backbones", "n_frameworks", "mean",
                       "task_sd", "backbone_sd", "interaction_sd", "task_language_sd",
                       "three_way_sd", "noise_sd", "missing_fraction", "requirements_per_task",
                       "clip")
COMPONENTS = ("mu", "alpha", "beta", "gamma", "delta", "noise", "missing", "verdicts")
AXES = ("task", "language", "backbone", "framework")


@dataclass(frozen=True)
class SyntheticPanel:
    """Runs of a synthetic panel with their ground truth.

    ``runs``: task, language, backbone, framework (categoricals in axis order), score.
    ``requirements``: task, language, backbone, framework, requirement_id, category, satisfied
    (0/1); None without requirement-level verdicts.
    ``truth``: ``beta`` (DataFrame, languages x backbones), ``alpha`` (Series by backbone), ``mu``
    (Series by task), ``gamma`` (DataFrame, tasks x languages), ``delta`` ((t, l, b) array, None
    when its SD is 0) and ``settings`` (every setting of :func:`simulate_panel`, JSON-ready).
    """

    runs: pd.DataFrame
    requirements: pd.DataFrame | None
    truth: dict

    def beta_frame(self) -> pd.DataFrame:
        """The planted interaction, tidy: language, backbone, beta_true."""
        return self.truth["beta"].stack().rename("beta_true").reset_index()

    def truth_frames(self) -> dict[str, pd.DataFrame]:
        """Every planted effect as a tidy frame: ``beta`` (see :meth:`beta_frame`), ``alpha``
        (backbone, alpha_true), ``mu`` (task, mu_true), ``gamma`` (task, language, gamma_true)."""
        return {"beta": self.beta_frame(),
                "alpha": self.truth["alpha"].rename("alpha_true").reset_index(),
                "mu": self.truth["mu"].rename("mu_true").reset_index(),
                "gamma": self.truth["gamma"].stack().rename("gamma_true").reset_index()}

    def truth_summary(self) -> dict:
        """JSON-ready truth: the settings, beta (language -> backbone -> value) and alpha."""
        return {"settings": self.truth["settings"],
                "beta": {lang: row.to_dict() for lang, row in self.truth["beta"].iterrows()},
                "alpha": self.truth["alpha"].to_dict()}


def axis_labels(prefix: str, n: int, min_width: int = 1) -> list[str]:
    """``prefix`` + zero-padded 1-based numbers, so that sorting the labels keeps their order."""
    width = max(min_width, len(str(n)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, n + 1)]


def simulate_panel(seed: int, *, n_tasks: int = 55, n_languages: int = 8, n_backbones: int = 6,
                   n_frameworks: int = 3, mean: float = 50.0, task_sd: float = 10.0,
                   backbone_sd: float = 5.0, interaction_sd: float = 8.0,
                   task_language_sd: float = 5.0, three_way_sd: float = 0.0,
                   noise_sd: float = 15.0, missing_fraction: float = 0.0,
                   requirements_per_task: int = 0, clip: bool = True) -> SyntheticPanel:
    """Draw a panel of the additive model (module docstring) with its planted truth.

    Labels: tasks ``t01..``, languages ``L1..``, backbones ``B1..``, frameworks ``F1..``
    (zero-padded to the width of the count). ``interaction_sd`` is the SD of the normal draw
    that is then double-centred, so the SD of the planted beta is
    ``interaction_sd * sqrt((1 - 1/k)(1 - 1/m))``. ``missing_fraction`` drops
    ``round(fraction x cells)`` task x language x backbone cells. ``requirements_per_task > 0``
    switches on requirement-level verdicts (their probability is always clipped to [0, 1]);
    ``clip`` clips the scores of runs without requirements to [0, 100].
    """
    settings = _check_settings(dict(
        seed=seed, n_tasks=n_tasks, n_languages=n_languages, n_backbones=n_backbones,
        n_frameworks=n_frameworks, mean=mean, task_sd=task_sd, backbone_sd=backbone_sd,
        interaction_sd=interaction_sd, task_language_sd=task_language_sd,
        three_way_sd=three_way_sd, noise_sd=noise_sd, missing_fraction=missing_fraction,
        requirements_per_task=requirements_per_task, clip=clip))
    seeds = np.random.SeedSequence(settings["seed"]).spawn(len(COMPONENTS))
    streams = dict(zip(COMPONENTS, map(np.random.default_rng, seeds)))
    shape = (settings["n_tasks"], settings["n_languages"], settings["n_backbones"],
             settings["n_frameworks"])
    labels = dict(zip(AXES, (axis_labels("t", shape[0], 2), axis_labels("L", shape[1]),
                             axis_labels("B", shape[2]), axis_labels("F", shape[3]))))

    mu = streams["mu"].normal(0.0, task_sd, shape[0])
    alpha = streams["alpha"].normal(0.0, backbone_sd, shape[2])
    beta = double_center(streams["beta"].normal(0.0, interaction_sd, shape[1:3]))
    gamma = streams["gamma"].normal(0.0, task_language_sd, shape[:2])
    delta = streams["delta"].normal(0.0, three_way_sd, shape[:3]) if three_way_sd > 0 else None

    score = streams["noise"].normal(0.0, noise_sd, shape)
    score += mean + mu[:, None, None, None] + alpha[:, None] + beta[:, :, None] \
        + gamma[:, :, None, None]
    if delta is not None:
        score += delta[..., None]

    n_cells = int(np.prod(shape[:3]))
    present = np.ones(n_cells, dtype=bool)
    present[streams["missing"].choice(n_cells, round(missing_fraction * n_cells),
                                      replace=False)] = False
    keep = slice(None) if present.all() else \
        np.broadcast_to(present.reshape(shape[:3])[..., None], shape).ravel()
    codes = {axis: _axis_codes(shape, i)[keep] for i, axis in enumerate(AXES)}
    score = score.ravel()[keep]

    requirements = None
    if requirements_per_task:
        requirements, score = _requirement_verdicts(codes, labels, score, requirements_per_task,
                                                    streams["verdicts"])
    elif clip:
        np.clip(score, 0.0, 100.0, out=score)

    runs = _label_frame(codes, labels, slice(None))
    runs["score"] = score
    truth = {
        "beta": pd.DataFrame(beta, index=pd.Index(labels["language"], name="language"),
                             columns=pd.Index(labels["backbone"], name="backbone")),
        "alpha": pd.Series(alpha, index=pd.Index(labels["backbone"], name="backbone"),
                           name="alpha"),
        "mu": pd.Series(mu, index=pd.Index(labels["task"], name="task"), name="mu"),
        "gamma": pd.DataFrame(gamma, index=pd.Index(labels["task"], name="task"),
                              columns=pd.Index(labels["language"], name="language")),
        "delta": delta,
        "settings": settings,
    }
    return SyntheticPanel(runs=runs, requirements=requirements, truth=truth)


def _axis_codes(shape: tuple[int, ...], axis: int) -> np.ndarray:
    """Index along ``axis`` of every element of a C-ordered array of ``shape``."""
    index = np.arange(shape[axis], dtype=np.int32).reshape([-1 if a == axis else 1
                                                            for a in range(len(shape))])
    return np.broadcast_to(index, shape).ravel()


def _label_frame(codes: dict, labels: dict, rows) -> pd.DataFrame:
    """task, language, backbone, framework categoricals of the selected ``rows``."""
    return pd.DataFrame({axis: pd.Categorical.from_codes(codes[axis][rows], labels[axis])
                         for axis in AXES})


def _requirement_verdicts(codes: dict, labels: dict, score: np.ndarray, n_requirements: int,
                          rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    """Bernoulli verdicts with ``P(satisfied) = clip(S / 100, 0, 1)``, and the run scores
    ``100 x satisfied / requirements`` they give."""
    probability = np.clip(score / 100.0, 0.0, 1.0)
    satisfied = (rng.random((len(score), n_requirements)) < probability[:, None]).astype(np.int8)
    run = np.repeat(np.arange(len(score)), n_requirements)
    frame = _label_frame(codes, labels, run)
    frame["requirement_id"] = np.tile(np.arange(n_requirements, dtype=np.int32), len(score))
    frame["category"] = pd.Categorical.from_codes(np.zeros(len(run), dtype=np.int8), ["synthetic"])
    frame["satisfied"] = satisfied.ravel()
    return frame, 100.0 * satisfied.sum(axis=1) / n_requirements


def _is_number(value) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, bool) and bool(np.isfinite(value)))


def _check_settings(settings: dict) -> dict:
    """Validate the settings of :func:`simulate_panel`; returns them as plain Python values."""
    minimum = {"seed": 0, "n_tasks": 1, "n_languages": 2, "n_backbones": 2, "n_frameworks": 1,
               "requirements_per_task": 0}
    for name, low in minimum.items():
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"synthetic panel: {name} must be an integer >= {low}, got {value!r}")
        settings[name] = int(value)
    for name in ("mean", "task_sd", "backbone_sd", "interaction_sd", "task_language_sd",
                 "three_way_sd", "noise_sd"):
        value = settings[name]
        if not _is_number(value) or (name != "mean" and value < 0):
            bound = "" if name == "mean" else " >= 0"
            raise ValueError(f"synthetic panel: {name} must be a finite number{bound}, "
                             f"got {value!r}")
        settings[name] = float(value)
    fraction = settings["missing_fraction"]
    if not _is_number(fraction) or not 0.0 <= fraction < 1.0:
        raise ValueError(f"synthetic panel: missing_fraction must be in [0, 1), got {fraction!r}")
    settings["missing_fraction"] = float(fraction)
    if not isinstance(settings["clip"], (bool, np.bool_)):
        raise ValueError(f"synthetic panel: clip must be true or false, got {settings['clip']!r}")
    settings["clip"] = bool(settings["clip"])
    return settings
