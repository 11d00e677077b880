"""evalcore.sampling.figures: pure plotly builders of the labeling-budget page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.sampling import figures as sf


def test_strata_histogram_counts_every_example_once():
    rng = np.random.default_rng(0)
    proxy = rng.beta(5, 1, 2000)
    strata = np.digitize(proxy, [0.6, 0.8, 0.9])
    fig = sf.strata_histogram(proxy, strata, bins=40)
    assert len(fig.data) == 4 and all(isinstance(t, go.Bar) for t in fig.data)
    assert sum(int(np.sum(t.y)) for t in fig.data) == 2000
    assert [int(np.sum(t.y)) for t in fig.data] == np.bincount(strata).tolist()


def test_strata_histogram_gives_every_stratum_its_own_colour():
    """Ten strata (and twenty): no two share a colour (a 9-colour cycle gave strata 1 and 10 the same one)."""
    for k in (10, 20):
        proxy = np.linspace(0.0, 1.0, 40 * k)
        fig = sf.strata_histogram(proxy, np.arange(40 * k) // 40, bins=k)
        assert [t.name for t in fig.data] == [f"stratum {h + 1}" for h in range(k)]
        assert len({t.marker.color for t in fig.data}) == k


def test_allocation_bars_one_series_per_allocation():
    table = pd.DataFrame({"stratum": [1, 2], "N_h": [100, 50], "proxy_mean": [0.2, 0.9], "proportional": [8, 4],
                          "neyman (actual, from the proxy)": [10, 2]})
    fig = sf.allocation_bars(table)
    assert [t.name for t in fig.data] == ["proportional", "neyman (actual, from the proxy)"]
    assert list(fig.data[1].y) == [10, 2]


def test_curves_draw_each_design_and_estimator():
    rows = [(b, d, e) for b in (100, 500) for d, e in sf.DESIGN_LABELS]
    frame = pd.DataFrame(rows, columns=["budget", "design", "estimator"]).assign(
        relative_efficiency=0.5, mse=1e-3, mse_se=1e-4, predicted_mse=1e-3, coverage=0.95)
    eff = sf.efficiency_curves(frame)
    assert [t.name for t in eff.data] == list(sf.DESIGN_LABELS.values())
    mc = sf.monte_carlo_curves(frame)
    assert len(mc.data) == 3 * len(sf.DESIGN_LABELS)  # band, empirical line, predicted line per design
    assert mc.layout.yaxis.type == "log"
