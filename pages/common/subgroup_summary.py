"""The Subgroups page's view of an uploaded per-subgroup summary (group, estimate, se): robust empirical Bayes
estimates as the R package ``ebci`` computes them (:mod:`evalcore.subgroups.area`), with the page's answer sentence
and forest plot (sorted by the EB estimate), at the sidebar's confidence level."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.stats import figures, glossary
from evalcore.subgroups import figures as subgroups_figures
from evalcore.subgroups.answer import range_sentence
from evalcore.subgroups.area import ROLES, REQUIRED, WEIGHTS, area_summary, suggest_roles
from evalcore.data.display import literal
from evalcore.errors import EvalDataError

from . import data_source as ds
from . import render
from . import subgroups_cache as sc

PAGE_SIZE = 60
WEIGHT_NAMES = {"precision": "precision 1/se² (as the ebci vignette)", "equal": "equal"}


def _numeric(column: pd.Series) -> bool:
    """Every non-empty cell is a number."""
    values = pd.to_numeric(column, errors="coerce")
    return bool(column.notna().any()) and not (values.isna() & column.notna()).any()


def show(level: float, answer_box=None) -> None:
    """Upload, column choice, settings, then the fit, the forest plot and the table, at ``level`` (the sidebar's:
    one level for every interval). ``answer_box``: where the answer sentence goes (the top of the page)."""
    st.caption("One row per subgroup, or per model and subgroup: `group`, `estimate` and its standard error "
               "`se`; optionally `model`, `n` (examples behind the estimate, shown only) and numeric feature "
               "columns, the covariates of the regression toward which the estimates are shrunk. Robust EB intervals "
               f"of {glossary.PAPERS['ebci']}, computed as their R package `ebci` does.", help=glossary.TERMS["EBCI"])
    upload = st.file_uploader("Per-subgroup summary: CSV, TSV, compressed CSV or Parquet", key="sga_upload",
                              type=["csv", "tsv", "txt", "gz", "bz2", "xz", "parquet", "pq"])
    if upload is None:
        st.info("Upload a summary with one row per subgroup (columns group, estimate, se; e.g. `group,estimate,se` "
                "then `small-task,0.71,0.08`).", icon=":material/upload_file:")
        return
    data = upload.getvalue()
    digest = ds.digest((("", data),))
    raw = sc.summary_table(digest, data)
    if isinstance(raw, EvalDataError):
        st.error(f"{literal(upload.name)} cannot be read: {literal(raw)}")
        return

    columns = list(raw.columns)
    suggested = suggest_roles(columns)
    st.caption(f"{literal(upload.name)}: {len(raw):,} rows, {len(columns)} columns.")
    pickers = st.columns(len(ROLES))
    roles = {}
    for box, role in zip(pickers, ROLES):
        options = columns if role in REQUIRED else [None, *columns]
        default = suggested[role]
        roles[role] = box.selectbox(
            role + ("" if role in REQUIRED else " (optional)"), options, key=f"sga_role_{role}",
            index=options.index(default) if default in options else (None if role in REQUIRED else 0),
            format_func=lambda c: "(none)" if c is None else str(c))
    candidates = [c for c in columns if c not in roles.values() and _numeric(raw[c])]
    features = st.multiselect("Feature columns (covariates of the regression; none: shrink toward the mean)",
                              candidates, default=candidates, key="sga_features")
    weights = st.radio("Regression and moment weights", WEIGHTS, format_func=WEIGHT_NAMES.get, horizontal=True,
                       key="sga_weights")
    st.caption(f"Confidence level {figures.percent(level)}: the sidebar's, the level of every interval.")
    if any(roles[r] is None for r in REQUIRED):
        st.info(f"Choose the columns for {', '.join(r for r in REQUIRED if roles[r] is None)} above.")
        return
    try:
        summary = area_summary(raw, roles, features)
        result = sc.area_fit(digest, tuple(sorted(roles.items(), key=lambda kv: kv[0])), tuple(features), level,
                             weights, summary)
    except EvalDataError as exc:
        st.error(f"{literal(upload.name)}: {literal(exc)}")
        return
    for note in result.notes:
        st.warning(literal(note), icon=":material/info:")

    pct = figures.percent(level)
    st.info(f"Empirical Bayes (EB) intervals are robust intervals: they cover the true subgroup values {pct} of the "
            f"time on average across subgroups, not for each subgroup. Direct (DT): the given estimate ± z·se, a "
            f"{pct} normal interval for each subgroup.", icon=":material/info:")
    with st.expander("Fit diagnostics", icon=":material/table:"):
        st.caption("mu2: variance of the true values around the regression; kappa: their kurtosis (both after the "
                   "finite-sample correction, PMT); delta: the regression coefficients.")
        small = st.column_config.NumberColumn(format="%.4e")  # mu2 is a variance: often below 1e-3
        render.table(result.fits, "summary empirical Bayes fit", mu2=small, mu2_uncorrected=small)

    st.subheader("Forest plot", anchor=False)
    table = result.table
    f1, f2, f3 = st.columns([2, 1, 2])
    if summary.has_model:
        model = f1.selectbox("Model", sorted(table["model"].unique()), key="sga_model")
        table = table[table["model"] == model]
    else:
        model = None
    orders = ["EB estimate"] + (["size"] if summary.has_n else []) + ["standard error", "name"]
    order = f2.selectbox("Sort by", orders, key="sga_sort")
    needle = f3.text_input("Filter subgroups", key="sga_filter", placeholder="part of a subgroup name")
    one = table[table["group"].str.contains(needle, case=False, regex=False)]
    one = {"size": lambda t: t.sort_values(["n", "group"], ascending=[False, True]),
           "EB estimate": lambda t: t.sort_values(["eb", "group"], ascending=[False, True]),
           "standard error": lambda t: t.sort_values(["se", "group"]),
           "name": lambda t: t.sort_values("group")}[order](one)
    pages = max(1, -(-len(one) // PAGE_SIZE))
    page = (st.number_input(f"Page (of {pages}, {PAGE_SIZE} subgroups each)", 1, pages, 1, key="sga_page")
            if pages > 1 else 1)
    shown = one.iloc[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    if answer_box is not None:
        with answer_box:
            render.answer(range_sentence(table, model, level, what="estimate"))
    st.caption(f"{len(one):,} subgroups match" + (f" for {literal(model)}." if model is not None else "."))
    if shown.empty:
        st.warning("No subgroup matches the filter.")
    else:
        title = f"{model}: subgroup estimates" if model is not None else "Subgroup estimates"
        render.chart(subgroups_figures.forest_plot(shown, level, title=title, direct_interval="normal"),
                     f"summary forest {model or ''}")
    render.table(result.table, "summary subgroup estimates")
