"""Static, publication-ready versions of figures (matplotlib through python-ternary), as PNG, SVG or PDF bytes.

Builders return a ``matplotlib.figure.Figure`` made without pyplot (no global state, no display backend);
:func:`figure_bytes` renders it. Names from the data are drawn literally (:func:`evalcore.data.display.mathtext_literal`:
matplotlib would typeset ``$...$`` as maths).
"""

from __future__ import annotations

import io
import warnings

import pandas as pd
import ternary
from matplotlib.figure import Figure

from evalcore.data.display import mathtext_literal
from evalcore.stats.figures import color
from evalcore.leaderboard.figures import TERNARY_GRAY

FORMATS = ("png", "svg", "pdf")
SCALE = 100


def ternary_static(map_frame: pd.DataFrame, categories: tuple[str, str, str] | None = None,
                   title: str = "Which model wins under which category weighting") -> Figure:
    """The task-weighting map of :func:`evalcore.leaderboard.weighting.ternary_winner_map` drawn with python-ternary.

    Each grid point is a hexagon coloured by its winner, gray where the top two are within ``z`` standard errors;
    ``w1, w2, w3`` go on the bottom, right and left axes (python-ternary's order of coordinates).
    """
    cats = tuple(mathtext_literal(c) for c in categories or map_frame.attrs.get("categories") or ("w1", "w2", "w3"))
    fig = Figure(figsize=(7.5, 6.5))
    ax = fig.add_subplot()
    tax = ternary.TernaryAxesSubplot(ax=ax, scale=SCALE)
    step = float(map_frame["w1"].diff().abs().replace(0, float("nan")).min() or 0.01)
    size = max(4.0, 18 * (0.01 / step) ** -2) if step > 0 else 6.0
    clear = map_frame[~map_frame["gray"].astype(bool)]
    layers = [(clear[clear["winner"] == model], color(i), mathtext_literal(model))  # colours as in ternary_figure
              for i, model in enumerate(clear["winner"].value_counts().index)]
    gray = map_frame[map_frame["gray"].astype(bool)]
    if len(gray):
        z = map_frame.attrs.get("z")
        layers.append((gray, TERNARY_GRAY, "too close to call" + (f" (within {z:g} SE)" if z else "")))
    for part, fill, label in layers:
        with warnings.catch_warnings():  # python-ternary always passes vmin/vmax, which matplotlib flags unused
            warnings.filterwarnings("ignore", message="No data for colormapping", category=UserWarning)
            tax.scatter((part[["w1", "w2", "w3"]].to_numpy() * SCALE).tolist(), marker="h", s=size, linewidths=0,
                        color=fill, label=label)
    tax.boundary(linewidth=1.0)
    tax.gridlines(multiple=SCALE // 10, color="white", linewidth=0.4)
    tax.ticks(axis="lbr", multiple=SCALE // 5, linewidth=1, offset=0.02, tick_formats="%d%%")
    tax.bottom_axis_label(f"{cats[0]} weight", offset=0.04)
    tax.right_axis_label(f"{cats[1]} weight", offset=0.14)
    tax.left_axis_label(f"{cats[2]} weight", offset=0.14)
    tax.set_title(mathtext_literal(title))
    tax.legend(loc="upper left", bbox_to_anchor=(0.82, 1.0), fontsize=8, frameon=False, markerscale=2)
    tax.clear_matplotlib_ticks()
    ax.axis("off")
    return fig


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """``fig`` rendered as PNG (200 dpi), SVG or PDF."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=200 if fmt == "png" else None)
    return buffer.getvalue()
