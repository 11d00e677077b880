"""Cached leaderboard computations, keyed by data digest + selection + parameters."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore import aggregate, bayes, publication
from evalcore.summaries import summary_from_log
from evalcore.weighting import ternary_winner_map

RANK_METHODS = {"mean": "mean accuracy", "geometric": "geometric mean", "avg_rank": "average per-task rank",
                "avg_rank_noise": "average rank, N(0,1)-point noise", "avg_rank_bins": "average rank, 1-point bins"}


@st.cache_resource(max_entries=32, show_spinner="Bootstrapping the leaderboard...")
def board(key: tuple, level: float, n_boot: int, seed: int, normalized: bool, _data: pd.DataFrame) -> pd.DataFrame:
    return aggregate.leaderboard(_data, level=level, n_boot=n_boot, seed=seed, normalized=normalized)


@st.cache_resource(max_entries=32, show_spinner="Bootstrapping rank intervals...")
def ranks(key: tuple, method: str, n_boot: int, seed: int, _data: pd.DataFrame) -> pd.DataFrame:
    return aggregate.rank_intervals(_data, method=method, level=0.95, n_boot=n_boot, seed=seed)


@st.cache_resource(max_entries=32, show_spinner="Bootstrapping pairwise differences...")
def differences(key: tuple, models: tuple[str, ...], n_boot: int, seed: int, _data: pd.DataFrame) -> pd.DataFrame:
    return aggregate.pairwise_differences(_data, models=list(models), level=0.95, n_boot=n_boot, seed=seed)


@st.cache_resource(max_entries=32, show_spinner="Computing the task-weighting map...")
def weighting_map(key: tuple, categories: tuple[str, ...], z: float, se_source: str, normalized: bool, seed: int,
                  _summary: pd.DataFrame) -> pd.DataFrame:
    return ternary_winner_map(_summary, categories=list(categories), step=0.01, z=z, se_source=se_source,
                              normalized=normalized, seed=seed)


@st.cache_resource(max_entries=16, show_spinner="Summarising the log per (model, task)...")
def summary(key: tuple, _rows: pd.DataFrame) -> pd.DataFrame:
    """Per-task counts of a per-example log (for the Bayesian model and the weighting map)."""
    return summary_from_log(_rows)


@st.cache_resource(max_entries=16, show_spinner="Sampling the Bayesian hierarchical model (Gibbs, 4 chains)...")
def bayes_tables(key: tuple, draws: int, seed: int, level: float,
                 _summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Bayesian leaderboard (with R-hat and ESS) and the posterior rank probabilities of one Gibbs fit."""
    fitted = bayes.fit(_summary, draws=draws, chains=4, seed=seed)
    return bayes.bayes_leaderboard(fitted, level=level), bayes.posterior_rank_probabilities(fitted)


@st.cache_resource(max_entries=16, show_spinner="Drawing the publication version...")
def static_map(key: tuple, categories: tuple[str, ...], z: float, se_source: str, normalized: bool, seed: int,
               fmt: str, _map: pd.DataFrame) -> bytes:
    return publication.figure_bytes(publication.ternary_static(_map), fmt)
