"""Which extra numeric columns of a log are example features by default, and why the others are set aside.

Validation keeps every extra numeric column of a log (:func:`numeric_columns`: what a user may choose as a
feature). Only some of them describe the *example* in a way a regression or k-means can use, so the views that
take features (subgroup regression and automatic subgroups, the holdout study, feature strata of the labeling
budget) start from :func:`default_features`. A column is set aside by default, with the first reason that applies,
when it is

1. **empty** (no value) or **constant** (one value): it carries no information; or it has **infinite values**,
   which no mean or distance can use;
2. **index-like**: named like a row index (``Unnamed: 0``, ``index``, ``idx``, ``level_0``, ``row``, ``row_id``,
   ``rownum``), or integers that number the rows -- distinct, consecutive values over all rows or within each
   model (``0..n-1``, ``1..n``, any start);
3. **identifier-like**: integer values (more than two) that are codes rather than quantities -- named like an
   id, a class, a label or a prediction (``id``, ``*_id``, ``qid``, ``class``, ``metaclass``, ``label``, ``pred``,
   ``code``, ``key``, ``category``, ``cluster``, ``type``...) or at least 10 distinct integers starting at 0 or 1
   with every value in between used and none on more than half of the rows (class ids, trial counters; a count
   piled on one value, such as a number of answer options, stays a feature); their order means nothing to a
   regression or a distance;
4. **label-derived**: named with a metric or label word (``correct``, ``label``, ``target``, ``answer``, ``gold``,
   ``truth``, ``score``, ``accuracy``, ``loss``, ``reward``...), present only on the rows that carry the metric
   (recorded with the label), or nearly determining the metric: :math:`|r| > 0.9` with it on the labeled rows
   (at least 10). Such a column leaks the answer into estimates that are meant to be checked against it;
5. **model-level**: constant within each model of a log with several models -- a property of the model (e.g.
   ``is_human``), which the model indicators already carry, not of the example;
6. **mostly missing**: no value on more than half of the rows.

Names are split into words at non-letters and camelCase humps (``predictedClass`` -> predicted, class).

Missing values of the features used (chosen or default) never stop a computation: per-unit and per-example means
skip them, and a unit or example with no value at all gets the feature's mean over the others (:func:`fill_missing`;
for the XGBoost regression, its native handling of missing values). Columns missing on most rows are left out by
default (rule 6) rather than filled in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcore.data.schema import LOG_ROLES
from evalcore.data.repeats import N_REPEATS

#: |correlation| with the metric on labeled rows above which a column counts as label-derived.
LEAK_CORRELATION = 0.9
#: Rows with both the metric and the column needed before the correlation is used.
LEAK_MIN_ROWS = 10
#: Distinct integers from which a dense 0/1-based run counts as codes...
CODE_MIN_DISTINCT = 10
#: ... when no value holds more than this share of the rows (a count piled on one value, such as MMLU-Pro's
#: n_options at 10 on 83% of the questions, is a quantity).
CODE_MAX_SHARE = 0.5
#: Fraction of rows without a value above which a column is "mostly missing".
MOSTLY_MISSING = 0.5

_INDEX_NAME = re.compile(r"^(unnamed:?\s*\d+|index|idx|level_\d+|row|row_?id|row_?idx|row_?num(ber)?|#)$")
_ID_WORDS = {"id", "ids", "uid", "uuid", "guid", "key", "code", "codes", "class", "classes", "cls", "label",
             "labels", "idx", "index", "hash", "seed", "pred", "preds", "prediction", "predicted", "category",
             "cluster", "group", "type", "kind"}
_LABEL_WORDS = {"correct", "incorrect", "wrong", "label", "labels", "target", "targets", "answer", "answers", "gold",
                "truth", "groundtruth", "y", "score", "scores", "accuracy", "acc", "em", "f1", "bleu", "rouge",
                "reward", "loss", "error", "errors", "pass", "passed", "success", "solved", "outcome"}


@dataclass(frozen=True)
class FeatureScreen:
    """The numeric columns of a log split into default features and columns set aside (with a reason each)."""

    features: tuple[str, ...]
    set_aside: tuple[tuple[str, str], ...]

    def note(self) -> str | None:
        """The validation report's sentence about the set-aside columns (None when there are none)."""
        if not self.set_aside:
            return None
        listed = "; ".join(f"{column} ({reason})" for column, reason in self.set_aside)
        return (f"Columns set aside as features by default: {listed}. Choose them on the Subgroups page if you "
                "want them.")


def numeric_columns(log: pd.DataFrame) -> list[str]:
    """Every extra numeric column of a canonical log (not a role): the columns a user may choose as features."""
    return [c for c in log.columns if c not in LOG_ROLES and c != N_REPEATS
            and pd.api.types.is_numeric_dtype(log[c]) and log[c].dtype.kind != "c"]


def default_features(log: pd.DataFrame, metric: str | None = None) -> list[str]:
    """The numeric columns used as features unless the user chooses others (module doc for the rules)."""
    return list(screen_features(log, metric).features)


def screen_features(log: pd.DataFrame, metric: str | None = None) -> FeatureScreen:
    """:func:`default_features` with the reason for each column set aside.

    ``metric`` (``correct`` or ``score``) is the label checked for leaks; None uses ``correct`` when the log has
    it, else ``score``, else none.
    """
    if metric is None:
        metric = next((m for m in ("correct", "score") if m in log), None)
    target = log[metric] if metric is not None and metric in log else None
    models = pd.factorize(log["model"])[0] if "model" in log else None  # integer codes: fast groupby
    if models is not None and models.max(initial=0) < 1:
        models = None  # one model: the per-model rules say nothing
    features, aside = [], []
    for column in numeric_columns(log):
        reason = _reason(column, log[column].astype(float), target, models)
        if reason is None:
            features.append(column)
        else:
            aside.append((column, reason))
    return FeatureScreen(tuple(features), tuple(aside))


def fill_missing(values: pd.DataFrame) -> pd.DataFrame:
    """Missing feature values replaced by the column's mean (module doc); a column with no value is an error of
    the caller (:func:`default_features` never returns one)."""
    return values.fillna(values.mean())


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^a-z]+", spaced.lower()) if w]


def _reason(name: str, values: pd.Series, target: pd.Series | None, models: np.ndarray | None) -> str | None:
    present = values.dropna()
    if present.empty:
        return "empty: no row has a value"
    v = present.to_numpy()
    infinite = int(np.isinf(v).sum())
    if infinite:
        return f"infinite values on {infinite:,} rows"
    if v.min() == v.max():
        return "constant: one value"
    words = _words(name)
    integer = bool(np.all(v == np.round(v)))
    distinct = np.unique(v) if integer else None  # sorted; only integer columns need it
    if _INDEX_NAME.match(name.strip().lower()):
        return "index-like: named like a row index"
    if integer and (_numbers_rows(present) or (models is not None and _numbers_rows_per_model(values, models))):
        return "index-like: consecutive integers numbering the rows"
    id_word = next((w for w in reversed(words) if _id_word(w)), None)  # the last: the noun of 'predicted_class'
    if integer and len(distinct) > 2 and id_word:
        return f"identifier-like: integer codes, '{id_word}' in the name"
    if integer and len(distinct) >= CODE_MIN_DISTINCT and distinct[0] in (0, 1) \
            and len(distinct) == distinct[-1] - distinct[0] + 1 \
            and present.value_counts(normalize=True).iloc[0] <= CODE_MAX_SHARE:
        return f"identifier-like: integer codes {distinct[0]:.0f} to {distinct[-1]:.0f}"
    leak = _label_words(words)
    if leak:
        return f"label-derived: '{leak}' in the name"
    if target is not None:
        labeled = target.notna()
        if labeled.any() and not labeled.all() and values.notna().equals(labeled):
            return "label-derived: has values exactly on the labeled rows"
        both = labeled & values.notna()
        if both.sum() >= LEAK_MIN_ROWS:
            r = _correlation(values[both].to_numpy(), target[both].to_numpy(dtype=float))
            if abs(r) > LEAK_CORRELATION:
                return f"label-derived: correlation {r:+.2f} with the metric on labeled rows"
    if models is not None:
        spread = values.groupby(models).agg(["min", "max"])
        if ((spread["min"] == spread["max"]) | spread["min"].isna()).all():
            return "model-level: constant within each model"
    missing = 1 - len(present) / len(values)
    if missing > MOSTLY_MISSING:
        return f"mostly missing: {missing:.0%} of rows have no value"
    return None


def _id_word(word: str) -> bool:
    """An id word, or a word ending in 'class' (superclass, metaclass) or a short '...id' (qid, pid)."""
    return word in _ID_WORDS or word.endswith("class") or (word.endswith("id") and len(word) <= 3)


def _label_words(words: list[str]) -> str | None:
    return next((w for w in words if w in _LABEL_WORDS), None)


def _numbers_rows(values: pd.Series) -> bool:
    """Distinct integers forming one consecutive run (at least 3 values)."""
    v = values.to_numpy()
    return len(v) >= 3 and v.max() - v.min() + 1 == len(v) and len(np.unique(v)) == len(v)


def _numbers_rows_per_model(values: pd.Series, models: np.ndarray) -> bool:
    """:func:`_numbers_rows` within each model (e.g. a row index written per model before concatenating);
    ``values`` aligned with the model codes ``models``; missing values are not counted."""
    stats = values.groupby(models).agg(["min", "max", "count", "nunique"])
    return bool(((stats["count"] >= 3) & (stats["max"] - stats["min"] + 1 == stats["count"])
                 & (stats["nunique"] == stats["count"])).all())


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])
