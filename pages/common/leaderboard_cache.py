"""Cached leaderboard computations, keyed by data digest + selection + parameters."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore import aggregate

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
