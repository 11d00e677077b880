"""What a log holds, at a glance: per model, and per (model, task) where the log has several tasks, the examples, the
rows, the repeats and the label's mean with its interval, with the label's name and scale. ``evalcore validate``
prints this table (and writes it with ``--json``) and the Data page shows it; the means and intervals are
:func:`evalcore.stats.overall.overall_table`'s, the numbers of the Models page, the Leaderboard and the report: a
model's row is its overall number (the mean over tasks), a task's row that model's number on the task alone (the
task's own Wilson or Student-t interval).

Columns (:data:`COLUMNS`): ``model``, ``task`` ("(all)" on a model's row), ``examples`` (distinct examples, labeled
or not; a summary's ``n``), ``labeled`` (examples with a label, those the mean is over), ``rows`` (the log's rows:
several per example with repeated samples), ``repeats`` (the most samples of one example; 1 without repeats),
``label`` (the label's column in the file), ``scale`` ("0/1" for correctness, else the values seen), ``estimate``,
``ci_low``, ``ci_high`` (at ``level``). Pairwise battles have no per-model label of their own: no rows.
"""

from __future__ import annotations

import pandas as pd

from evalcore.data.repeats import N_REPEATS, per_example
from evalcore.data.schema import BATTLES, SUMMARY
from evalcore.stats.level import DEFAULT_LEVEL
from evalcore.stats.overall import overall_table

COLUMNS = ["model", "task", "examples", "labeled", "rows", "repeats", "label", "scale", "estimate", "ci_low",
           "ci_high"]
#: the task of a model's own row (its overall number over every task)
ALL_TASKS = "(all)"


def label_of(log: pd.DataFrame) -> str | None:
    """The label a per-example log is measured by, as on the Models page and in the report: ``correct`` when any row
    has it, else ``score``; None when neither is labeled."""
    return next((m for m in ("correct", "score") if m in log and log[m].count()), None)


def readout(log: pd.DataFrame, report, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """The table of the module's docstring for a validated log in memory (:func:`evalcore.data.validation.validate`'s
    frame, every sample) and its :class:`~evalcore.data.validation.ValidationReport`, at the confidence ``level``;
    empty (with :data:`COLUMNS`) for battles and for a log without a label."""
    kind, mapping = report.kind, report.mapping
    alpha = 1 - level
    if kind == BATTLES:
        return pd.DataFrame(columns=COLUMNS)
    if kind == SUMMARY:
        metric, label, scale = "correct", mapping.get("n_correct") or mapping.get("accuracy", "accuracy"), "0/1"
        counts = log.groupby(["model", "task"], observed=True).agg(examples=("n", "sum"), rows=("n", "size"))
        counts = counts.assign(labeled=counts["examples"], repeats=1)
    else:
        metric = label_of(log)
        if metric is None:
            return pd.DataFrame(columns=COLUMNS)
        label = mapping.get(metric, metric)
        values = log[metric].dropna()
        scale = "0/1" if metric == "correct" else f"{values.min():g} to {values.max():g} (values seen)"
        examples = per_example(log)
        repeats = examples[N_REPEATS] if N_REPEATS in examples else pd.Series(1, index=examples.index)
        counts = pd.DataFrame({
            "examples": examples.groupby(["model", "task"], observed=True).size(),
            "labeled": examples[metric].notna().groupby([examples["model"], examples["task"]], observed=True).sum(),
            "rows": log.groupby(["model", "task"], observed=True).size(),
            "repeats": repeats.groupby([examples["model"], examples["task"]], observed=True).max(),
        })
    counts = counts.reset_index().astype({"model": str, "task": str})
    per_model = counts.groupby("model").agg(examples=("examples", "sum"), labeled=("labeled", "sum"),
                                            rows=("rows", "sum"), repeats=("repeats", "max"))
    frames = [_with_means(per_model.reset_index().assign(task=ALL_TASKS), overall_table(
        log, metric, alpha, summary=kind == SUMMARY))]
    tasks = counts["task"].unique()
    if len(tasks) > 1:
        for task in tasks:
            part = log[log["task"].astype(str) == task]
            frames.append(_with_means(counts[counts["task"] == task],
                                      overall_table(part, metric, alpha, summary=kind == SUMMARY)))
    table = pd.concat(frames, ignore_index=True).assign(label=label, scale=scale)
    table["order"] = table["task"] != ALL_TASKS
    table = table.sort_values(["model", "order", "task"], kind="stable", ignore_index=True)
    return table.astype({c: "int64" for c in ("examples", "labeled", "rows", "repeats")})[COLUMNS]


def _with_means(counts: pd.DataFrame, overall: pd.DataFrame) -> pd.DataFrame:
    """``counts`` (one row per model) with the estimate and interval of ``overall`` (NaN for a model without a
    label)."""
    means = overall.assign(model=overall["model"].astype(str))[["model", "estimate", "ci_low", "ci_high"]]
    return counts.merge(means, on="model", how="left")
