"""A CBC calibration fitted once and carried to new runs: :class:`Calibrator`.

``Calibrator(...).fit(runs)`` learns the language x backbone interaction ``beta`` of a run table
exactly as :func:`polyjudge.calibrate` does (same validation, same estimator, same numbers);
``transform(new_runs)`` subtracts it from new scores of the same languages and backbones;
``rank(new_runs)`` ranks the backbones within each language on the new runs with rank intervals
and the probability of ranking first; ``save`` / ``load`` keep it in a small JSON file
(docs/api.md, "A calibrator for new runs"; docs/methods.md section 10.6).

The class follows scikit-learn's estimator conventions without importing scikit-learn: the
constructor only stores its settings, ``fit`` learns, learned attributes end in ``_``, and
``get_params`` / ``set_params`` make ``sklearn.base.clone`` work.
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._version import __version__
from .api import estimate_cbc
from .data import io
from .data.atomic import write_atomically
from .data.calibrator_file import (BAND_COLUMNS, EXPECTED_FILE, FORMAT, FORMAT_VERSION,
                                   cells_from_file, cells_to_file, read_calibrator_file,
                                   settings_from_file, settings_to_file)
from .data.calibrator_file import checksum as _checksum
from .data.digest import training_sha256, training_sha256_file  # noqa: F401 (public here)
from .data.errors import InputError, api_messages
from .data.spec import COLUMNS as COLUMN_PARAMS
from .data.spec import RunSpec

PARAMS = ("task", "language", "backbone", "score", "framework", "languages", "backbones",
          "score_range", "missing", "estimator", "band_replicates", "band_level", "seed", "unseen")
UNSEEN_POLICIES = ("error", "raw")
OUTPUT_COLUMNS = ("beta", "score_cbc", "score_cbc_low", "score_cbc_high", "calibrated")
DEFAULT_BAND_REPLICATES = 500
"""Task bootstraps of the default band: about 0.02 s of CPU on 55 tasks x 8 languages x 6
backbones, 0.7 s on 1,000 x 10 x 8 (docs/methods.md section 10.6)."""
NO_BAND_WARNING = (
    "rank intervals of a calibrator without a band take beta as exact, so they are too narrow "
    "(about 0.90 coverage per language at a nominal 0.95: docs/methods.md section 10.6); fit "
    "with a band for intervals that hold: Calibrator(band_replicates=500) (the default), "
    "`polyjudge fit --band-replicates 500`, or `bands` in the fitting panel's analyses")


class Calibrator:
    """CBC learned on one run table and applied to new runs (scikit-learn estimator conventions).

    Parameters
    ----------
    task, language, backbone, score, framework, languages, backbones, score_range, missing
        The run-table settings of :class:`~polyjudge.data.spec.RunSpec`, as in
        :func:`polyjudge.calibrate` (the same axis order gives bit-identical beta).
    estimator : str, optional
        As in :func:`polyjudge.calibrate`.
    band_replicates : int, default :data:`DEFAULT_BAND_REPLICATES`
        Task bootstraps (at least 100) of the simultaneous band of
        :func:`polyjudge.cbc.band.bootstrap_band`: calibrated scores get their interval and
        :meth:`rank` the calibration's uncertainty; 0: no band, which an incomplete panel needs.
    band_level : float, default 0.95
        Level of the band.
    seed : int, default 0
        Seed of the band.
    unseen : {"error", "raw"}, default "error"
        New runs of a language or backbone not fitted: refused, or passed through uncorrected
        (``calibrated`` False).

    Attributes
    ----------
    beta_ : pandas.DataFrame
        language, backbone, beta, n_runs, n_tasks and, with a band, se, band_low, band_high
        (``beta -/+ critical_value x se``).
    languages_, backbones_, estimator_, score_range_, n_runs_, n_tasks_
        What the fit saw; ``training_sha256_`` (:func:`training_sha256`) of its runs,
        ``band_`` (level, n_replicates, seed, critical_value; or None), ``version_``.

    >>> from polyjudge.analyses.synthetic import simulate_panel
    >>> runs = simulate_panel(seed=1, n_tasks=20, n_languages=3, n_backbones=3).runs
    >>> cal = Calibrator().fit(runs)
    >>> cal.beta_.shape  # with the default band: se, band_low, band_high
    (9, 8)
    >>> out = cal.transform(runs)
    >>> bool((out["score_cbc"] == out["score"] - out["beta"]).all())
    True
    """

    def __init__(self, task: str = "task", language: str = "language",
                 backbone: str = "backbone", score: str = "score",
                 framework: str = "framework", languages=None, backbones=None,
                 score_range=None, missing: str = "error",
                 estimator: str | None = None,
                 band_replicates: int = DEFAULT_BAND_REPLICATES,
                 band_level: float = 0.95, seed: int = 0, unseen: str = "error"):
        settings = locals()
        for name in PARAMS:  # stored as given (scikit-learn): checked by fit
            setattr(self, name, settings[name])

    # --- scikit-learn conventions ----------------------------------------------------------------

    def get_params(self, deep: bool = True) -> dict:
        """The constructor settings, name -> value (``deep`` is accepted for scikit-learn)."""
        return {name: getattr(self, name) for name in PARAMS}

    def set_params(self, **params) -> "Calibrator":
        """Change settings (names of the constructor); returns self. Refit afterwards."""
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ValueError(f"invalid parameter(s) {unknown} for Calibrator; "
                             f"valid: {list(PARAMS)}")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = Calibrator()
        changed = [f"{name}={getattr(self, name)!r}" for name in PARAMS
                   if getattr(self, name) != getattr(defaults, name)]
        return f"Calibrator({', '.join(changed)})"

    @property
    def is_fitted(self) -> bool:
        return hasattr(self, "beta_")

    @property
    def has_band(self) -> bool:
        """Fitted with a band: calibrated scores get intervals, ranks use its uncertainty."""
        return self.is_fitted and self.band_ is not None

    def _spec(self, source="runs", fitted: bool = False) -> RunSpec:
        """The run-table settings as a :class:`~polyjudge.data.spec.RunSpec`; ``fitted``: those
        new runs are read with (the fitted score range, any order of the axes)."""
        spec = RunSpec.from_kwargs(**self.get_params(), source=source)
        return dataclasses.replace(spec, languages=None, backbones=None,
                                   score_range=self.score_range_) if fitted else spec

    def _check_settings(self) -> None:
        if self.unseen not in UNSEEN_POLICIES:
            raise ValueError(f"unseen must be one of {UNSEEN_POLICIES}, got {self.unseen!r}")
        replicates = self.band_replicates
        if not isinstance(replicates, (int, np.integer)) or isinstance(replicates, bool) or (
                replicates != 0 and replicates < 100):
            raise ValueError("band_replicates must be 0 (no band) or an integer of at least 100, "
                             f"got {replicates!r}")
        if not 0 < self.band_level < 1:
            raise ValueError(f"band_level must be in (0, 1), got {self.band_level!r}")
        if self.score_range is not None and (len(self.score_range) != 2
                                             or not self.score_range[0] < self.score_range[1]):
            raise ValueError(f"score_range must be None or (low, high) with low < high, got "
                             f"{self.score_range!r}")

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise ValueError("this Calibrator is not fitted yet: call fit(runs) or "
                             "Calibrator.load(path) first")

    # --- fit -------------------------------------------------------------------------------------

    @api_messages
    def fit(self, runs: pd.DataFrame, y=None, *, source="runs") -> "Calibrator":
        """Learn ``beta`` from a run table, validated as :func:`polyjudge.calibrate` does.

        Parameters
        ----------
        runs : pandas.DataFrame
            One row per judge run, in the columns of the settings.
        y : ignored
            For scikit-learn.
        source : str, default "runs"
            What error messages call the table.

        Returns
        -------
        Calibrator
            self, fitted.
        """
        self._check_settings()
        checked, panel = self._spec(source).prepare(runs)
        return self.fit_panel(panel, len(checked), training_sha256(checked), source=source)

    def fit_panel(self, panel, n_runs: int, sha256: str, *, source="runs") -> "Calibrator":
        """:meth:`fit` on the task-level panel of validated runs already averaged (the
        workflow's ``tensor.parquet``), with their number and :func:`training_sha256`: the run
        table itself is not needed (the workflow hashes it in batches,
        :func:`training_sha256_file`). Returns self."""
        self._check_settings()
        estimate, result = estimate_cbc(panel, self.estimator, source)
        beta = panel.matrix_frame(result.beta, "beta")
        beta["n_runs"] = panel.n_runs.sum(axis=0).ravel().astype(np.int64)
        beta["n_tasks"] = np.isfinite(panel.values).sum(axis=0).ravel().astype(np.int64)
        band = None
        if self.band_replicates:
            if not panel.is_complete:
                missing = int((~np.isfinite(panel.values)).sum())
                raise InputError(source, f"{missing} task x language x backbone cells are "
                                 f"missing: the bootstrap band (band_replicates="
                                 f"{self.band_replicates}) needs a complete panel",
                                 "a complete panel, or band_replicates=0 (`polyjudge fit "
                                 "--band-replicates 0`) to fit without a band (rank intervals "
                                 "then take beta as exact and are too narrow)")
            from .cbc.band import bootstrap_band
            fitted = bootstrap_band(panel, int(self.band_replicates), self.seed, self.band_level)
            critical = float(fitted.critical_value)
            beta["se"] = fitted.frame["se"].to_numpy(dtype=float)
            beta["band_low"] = beta["beta"] - critical * beta["se"]
            beta["band_high"] = beta["beta"] + critical * beta["se"]
            band = {"level": float(self.band_level), "n_replicates": int(self.band_replicates),
                    "seed": self.seed, "critical_value": critical}
        self.beta_ = beta
        self.languages_ = list(panel.languages)
        self.backbones_ = list(panel.backbones)
        self.estimator_ = estimate.method
        self.score_range_ = None if self.score_range is None else [
            float(self.score_range[0]), float(self.score_range[1])]
        self.band_ = band
        self.training_sha256_ = sha256
        self.n_runs_ = int(n_runs)
        self.n_tasks_ = int(panel.shape[0])
        self.version_ = __version__
        return self

    # --- transform -------------------------------------------------------------------------------

    def _standard(self, runs: pd.DataFrame, source) -> pd.DataFrame:
        """New runs validated as the training runs were (columns, keys, scores in range)."""
        if not isinstance(runs, pd.DataFrame):
            raise TypeError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
        clash = [c for c in OUTPUT_COLUMNS if c in runs.columns]
        if clash:
            raise InputError(source, f"already has column(s) {clash}",
                             f"a run table without the columns {list(OUTPUT_COLUMNS)} that "
                             "calibrating adds (is it calibrated already?)")
        spec = self._spec(source, fitted=True)
        spec.standard(runs)
        return io.with_single_framework(io.rename_columns(runs, spec.columns))

    def _lookup(self, languages, backbones, source):
        """Row of ``beta_`` of each (language, backbone), -1 where unseen (refused unless
        ``unseen="raw"``)."""
        table = pd.MultiIndex.from_arrays([self.beta_["language"].astype(str),
                                           self.beta_["backbone"].astype(str)])
        wanted = pd.MultiIndex.from_arrays([pd.Series(languages).astype(str).to_numpy(),
                                            pd.Series(backbones).astype(str).to_numpy()])
        position = table.get_indexer(wanted)
        if (position < 0).any() and self.unseen != "raw":
            raise self._unseen_error(wanted[position < 0].unique(), source)
        return position

    def _unseen_error(self, pairs, source) -> InputError:
        pairs = sorted(pairs, key=lambda p: (io.natural_key(p[0]), io.natural_key(p[1])))
        languages = sorted({l for l, _ in pairs} - set(self.languages_), key=io.natural_key)
        backbones = sorted({b for _, b in pairs} - set(self.backbones_), key=io.natural_key)
        new = "; ".join(part for part in (
            f"new language(s) {languages}" if languages else "",
            f"new backbone(s) {backbones}" if backbones else "") if part)
        shown = [list(p) for p in pairs[:10]] + (["..."] if len(pairs) > 10 else [])
        return InputError(
            source, f"{len(pairs)} (language, backbone) pair(s) the calibrator was not fitted on: "
            f"{shown} ({new})",
            f"languages {self.languages_} and backbones {self.backbones_} (the calibrator's), or "
            "unseen='raw' (`polyjudge apply --unseen raw`) to pass those runs through uncorrected "
            "and flagged calibrated=False; beta of a language or backbone cannot be inferred "
            "from the others (docs/methods.md section 10.6): refit on a panel that includes it")

    @api_messages
    def transform(self, runs: pd.DataFrame, *, source="runs") -> pd.DataFrame:
        """Subtract the fitted beta from new runs.

        Parameters
        ----------
        runs : pandas.DataFrame
            New runs of the fitted languages and backbones, in the columns of the settings.
        source : str, default "runs"
            What error messages call the table.

        Returns
        -------
        pandas.DataFrame
            The runs (your columns, same rows in the same order) with ``beta``, ``score_cbc``
            (= score - beta), with a band ``score_cbc_low`` / ``score_cbc_high`` (= score -
            band_high / score - band_low) and ``calibrated`` (False where ``unseen="raw"``
            passed a run through: beta NaN, score_cbc = score).
        """
        self._check_fitted()
        self._check_settings()
        frame = self._standard(runs, source)
        position = self._lookup(frame["language"], frame["backbone"], source)
        seen = position >= 0
        score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=float)

        def column(name):
            values = self.beta_[name].to_numpy(dtype=float)
            return np.where(seen, values[np.where(seen, position, 0)], np.nan)

        out = runs.copy()
        beta = column("beta")
        out["beta"] = beta
        out["score_cbc"] = np.where(seen, score - beta, score)
        if self.has_band:
            out["score_cbc_low"] = np.where(seen, score - column("band_high"), score)
            out["score_cbc_high"] = np.where(seen, score - column("band_low"), score)
        out["calibrated"] = seen
        return out

    def fit_transform(self, runs: pd.DataFrame, y=None, *, source="runs") -> pd.DataFrame:
        """``fit(runs)`` then ``transform(runs)``."""
        return self.fit(runs, source=source).transform(runs, source=source)

    # --- rank ------------------------------------------------------------------------------------

    @api_messages
    def rank(self, runs: pd.DataFrame, n_replicates: int = 1000, level: float = 0.95,
             seed: int = 0, *, source="runs") -> pd.DataFrame:
        """Rank the backbones within each language on new runs, raw and calibrated.

        Parameters
        ----------
        runs : pandas.DataFrame
            New runs, in the columns of the settings.
        n_replicates, level, seed : int, float, int (defaults 1000, 0.95, 0)
            Bootstrap replicates (at least 100), level of the rank intervals, their seed.
        source : str, default "runs"
            What error messages call the table.

        Returns
        -------
        pandas.DataFrame
            One row per language x backbone of the new runs: language, backbone, n_tasks, mean_raw
        (mean over the new tasks of the task-level scores), beta, mean_cbc (mean_raw - beta),
        rank_raw, rank_cbc (1 = best; ties share the lower rank), rank_low, rank_high (the
        ``level`` interval of the calibrated rank) and p_first (share of replicates in which the
        backbone ranks first in its language), calibrated. Replicate ``r`` resamples the new
        tasks (a ``(R, n)`` weight matrix) and, with a band, draws ``beta*_r`` from the
        calibrator's per-cell standard errors with the correlation of a double-centred matrix
        (docs/methods.md section 10.6); without a band beta is taken as exact, the intervals
        are too narrow, and a warning (:data:`NO_BAND_WARNING`) says so.
        """
        self._check_fitted()
        if not self.has_band:
            warnings.warn(NO_BAND_WARNING, UserWarning, stacklevel=2)
        if n_replicates < 100:
            raise ValueError(f"use at least 100 replicates for rank intervals, got {n_replicates}")
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level}")
        from .cbc.band import calibrated_rank_replicates
        from .cbc.estimator import rank_within_language
        from .data.panel import nanmean
        if any(c in runs.columns for c in OUTPUT_COLUMNS):
            self._standard(runs, source)  # the same refusal as transform
        _, panel = self._spec(source, fitted=True).prepare(runs)
        lang, bb = np.meshgrid(panel.languages, panel.backbones, indexing="ij")
        self._lookup(lang.ravel(), bb.ravel(), source)  # refuses unseen pairs unless "raw"
        rows = np.array([self.languages_.index(l) if l in self.languages_ else -1
                         for l in panel.languages])
        cols = np.array([self.backbones_.index(b) if b in self.backbones_ else -1
                         for b in panel.backbones])
        seen = (rows[:, None] >= 0) & (cols[None, :] >= 0)
        grid = np.ix_(np.maximum(rows, 0), np.maximum(cols, 0))
        beta = np.where(seen, self._grid("beta")[grid], 0.0)
        means = nanmean(panel.values, axis=0)
        se = np.where(seen, self._grid("se")[grid], 0.0) if self.has_band else None
        replicated = calibrated_rank_replicates(panel.values, beta, se, grid, self._grid(
            "beta").shape, n_replicates, seed)
        valid = np.isfinite(replicated)
        with np.errstate(invalid="ignore"):
            low = np.nanquantile(replicated, (1 - level) / 2, axis=0, method="lower")
            high = np.nanquantile(replicated, (1 + level) / 2, axis=0, method="higher")
            p_first = (replicated == 1).sum(axis=0) / valid.sum(axis=0)
        frame = panel.matrix_frame(means, "mean_raw")
        frame.insert(2, "n_tasks", np.isfinite(panel.values).sum(axis=0).ravel())
        frame["beta"] = np.where(seen, beta, np.nan).ravel()
        frame["mean_cbc"] = (means - beta).ravel()
        frame["rank_raw"] = rank_within_language(means).ravel()
        frame["rank_cbc"] = rank_within_language(means - beta).ravel()
        frame["rank_low"] = low.ravel().astype(int)
        frame["rank_high"] = high.ravel().astype(int)
        frame["p_first"] = p_first.ravel()
        frame["calibrated"] = seen.ravel()
        return frame

    def _grid(self, name: str) -> np.ndarray:
        """A column of ``beta_`` as the (languages, backbones) matrix."""
        return self.beta_[name].to_numpy(dtype=float).reshape(len(self.languages_),
                                                              len(self.backbones_))

    # --- the file --------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """The calibrator file's content (see :meth:`save`)."""
        self._check_fitted()
        document = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "polyjudge_version": self.version_,
            "estimator": self.estimator_, "score_range": self.score_range_,
            "languages": list(self.languages_), "backbones": list(self.backbones_),
            "settings": settings_to_file(self.get_params()),
            "training": {"sha256": self.training_sha256_, "n_runs": self.n_runs_,
                         "n_tasks": self.n_tasks_},
            "band": self.band_, "cells": cells_to_file(self.beta_, self.band_ is not None)}
        document["checksum"] = _checksum(document)
        return document

    def save(self, path) -> Path:
        """Write the calibrator as indented JSON (UTF-8), atomically. Fields: format,
        format_version, polyjudge_version, estimator, score_range, languages, backbones,
        settings, training (sha256, n_runs, n_tasks), band, cells (language, backbone, beta,
        n_runs, n_tasks[, se, band_low, band_high]) and checksum (SHA-256 of the canonical JSON
        of the rest). Returns the path."""
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        write_atomically(path, lambda temporary: Path(temporary).write_text(text,
                                                                             encoding="utf-8"))
        return Path(path)

    @classmethod
    def load(cls, path) -> "Calibrator":
        """Read a file of :meth:`save`; refuses (:class:`~polyjudge.data.errors.InputError`
        naming the file) one that is not a calibrator, comes from a newer format or whose
        checksum no longer matches its content."""
        document = read_calibrator_file(path)
        try:
            return cls._from_dict(document)
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(Path(path), "is not a valid calibrator file "
                             f"({type(error).__name__}: {error})", EXPECTED_FILE)

    @classmethod
    def _from_dict(cls, document: dict) -> "Calibrator":
        calibrator = cls(**settings_from_file(document["settings"]))
        beta = cells_from_file(document)
        languages, backbones = list(document["languages"]), list(document["backbones"])
        band = document["band"]
        calibrator.beta_ = beta
        calibrator.languages_ = languages
        calibrator.backbones_ = backbones
        calibrator.estimator_ = document["estimator"]
        calibrator.score_range_ = document["score_range"]
        calibrator.band_ = band
        training = document["training"]
        calibrator.training_sha256_ = training["sha256"]
        calibrator.n_runs_ = training["n_runs"]
        calibrator.n_tasks_ = training["n_tasks"]
        calibrator.version_ = document["polyjudge_version"]
        return calibrator
