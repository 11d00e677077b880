"""Column-role mapping: which of the user's columns plays which role, and which data shape that makes.

A mapping is a dict ``{user column: role}``. :func:`suggest_mapping` proposes one from the column names
(exact synonyms first, then names that start with a synonym, e.g. ``n_correct_inferred``). :func:`suggest_group`
completes the automatic mapping of a per-example log without a group column from the values (issue 37): a text
column that splits the examples into 2 to 200 subgroups, such as ImageNet-X's ``metaclass_name`` (100 values).
"""

from __future__ import annotations

import re
from typing import Iterable

import pandas as pd

from evalcore.data.features import _label_words, _words
from evalcore.data.reading import EvalDataError
from evalcore.data.schema import BATTLES, KINDS, LOG, LOG_VALUE_ROLES, ROLES, SUMMARY

#: Names recognised for each role, most specific first (compared after lower-casing and turning
#: anything that is not a letter or digit into "_").
SYNONYMS: dict[str, tuple[str, ...]] = {
    "model": ("model", "model_name", "models", "system", "classifier", "method", "predictor", "llm"),
    "example_id": (
        "example_id", "example", "id", "item_id", "question_id", "sample_id", "uid", "instance_id",
        "image_id", "file_name", "filename", "imagename", "doc_id", "row_id",
    ),
    "task": ("task", "task_name", "dataset", "benchmark", "subset"),
    "category": ("category", "task_category", "domain", "task_type", "family"),
    "group": ("group", "subgroup", "topic", "subject", "slice", "cohort", "segment", "stratum", "src"),
    "repeat": ("repeat", "epoch", "sample", "attempt", "trial", "repetition", "replicate", "sample_index",
               "attempt_index"),
    "correct": ("correct", "is_correct", "correctness", "hit", "exact_match", "em", "label_correct"),
    "score": ("score", "metric", "metric_value", "reward", "f1", "bleu", "rouge"),
    "confidence": (
        "confidence", "conf", "prob", "probability", "predicted_probability", "max_prob", "top1_prob",
        "p_max", "softmax",
    ),
    "proxy": ("proxy", "judge_score", "surrogate", "annotator", "auto_label", "predicted_correct", "ai_label"),
    "weight": ("weight", "weights", "importance_weight", "sample_weight"),
    "n": ("n", "n_eval", "n_examples", "num_examples", "n_total", "count", "total", "test_size"),
    "n_correct": ("n_correct", "correct_count", "num_correct", "hits"),
    "accuracy": ("accuracy", "acc", "accuracy_percent", "top1"),
    "model_a": ("model_a", "a", "model_1", "left", "model_left"),
    "model_b": ("model_b", "b", "model_2", "right", "model_right"),
    "outcome": ("outcome", "winner_b", "b_wins", "human", "human_vote", "vote", "preference"),
    "judge": ("judge", "judge_prob", "ai_judge", "p_b", "judge_probability"),
    "se": ("se", "standard_error", "stderr", "std_err", "sem"),
    "input": ("input", "prompt", "question", "query", "instruction", "full_prompt", "input_text", "problem",
              "context"),
    "target": ("target", "reference", "answer", "gold", "expected", "expected_output", "ideal", "ground_truth",
               "references", "gold_answer", "correct_answer", "label_text"),
    "output": ("output", "response", "completion", "prediction", "generation", "model_output", "actual_output",
               "model_answer", "predicted_answer", "generated_text", "pred", "predicted"),
    "explanation": ("explanation", "reason", "reasoning", "rationale", "judgment", "judgement", "critique",
                    "feedback"),
    "options": ("options", "choices", "answer_options", "answer_choices", "option_list", "choice_list",
                "candidates", "mc_options"),
    "image": ("image", "image_path", "image_file", "img", "img_path", "filepath", "file_path", "file", "path",
              "media", "media_path", "picture", "photo"),
}

#: roles recognised only by an exact synonym ('sample_id' is an example id, not a repeat; 'prompt_tokens' is a
#: number, not the prompt)
EXACT_ONLY = frozenset({"repeat", "se", "input", "target", "output", "explanation", "options", "image"})


_EVERY_SYNONYM = frozenset(name for names in SYNONYMS.values() for name in names)
#: last words of a column name that make it text about the role, not the role ('correct_choice' is a letter)
_TEXT_WORDS = frozenset({"choice", "answer", "option", "letter", "text", "reason", "explanation"})


def normalize(name: object) -> str:
    """Lower-case name with every run of non-alphanumeric characters turned into one '_'."""
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


def _score(column: str, role: str) -> float | None:
    """Rank of ``column`` as a name for ``role``: the synonym's index for an exact match, +0.5 for a name that
    starts with a synonym (``n_eval_inferred`` before ``test_size``), except a name that is itself another role's
    synonym (``correct_answer`` is a target, ``model_output`` an output: not a label, not a model), an id
    (``task_id`` names examples, not tasks) or a kind of text (``correct_choice``, ``score_reason``)."""
    name = normalize(column)
    synonyms = SYNONYMS[role]
    if name in synonyms:
        return float(synonyms.index(name))
    if role in EXACT_ONLY or name in _EVERY_SYNONYM or (name.endswith("_id") and role != "example_id") or \
            name.rsplit("_", 1)[-1] in _TEXT_WORDS:
        return None
    for i, syn in enumerate(synonyms):
        if len(syn) > 2 and name.startswith(syn + "_"):
            return i + 0.5
    return None


def _suggest_roles(columns: list[str], roles: Iterable[str]) -> dict[str, str]:
    taken: set[str] = set()
    mapping: dict[str, str] = {}
    for role in roles:
        ranked = sorted(
            (s, i, c) for i, c in enumerate(columns) if c not in taken and (s := _score(c, role)) is not None
        )
        if ranked:
            column = ranked[0][2]
            taken.add(column)
            mapping[column] = role
    return mapping


def suggest_mapping(columns: Iterable[object], kind: str | None = None) -> dict[str, str]:
    """Propose ``{column: role}`` for ``columns``; ``kind`` None detects the shape from the names."""
    cols = [str(c) for c in columns]
    if kind is None:
        battles = _suggest_roles(cols, ROLES[BATTLES])
        if {"model_a", "model_b"} <= set(battles.values()) and not option_columns(cols):  # A, B, C: options
            return battles
        summary = _suggest_roles(cols, ROLES[SUMMARY])
        log = _suggest_roles(cols, ROLES[LOG])
        roles = set(summary.values())
        has_example_values = any(r in log.values() for r in LOG_VALUE_ROLES if r != "correct") or (
            "correct" in log.values() and "n_correct" not in roles
        )
        if "n" in roles and ({"n_correct", "accuracy"} & roles) and not has_example_values:
            return summary
        return log
    if kind not in KINDS:
        raise EvalDataError(f"Unknown data shape '{kind}': choose one of {', '.join(KINDS)}.")
    return _suggest_roles(cols, ROLES[kind])


#: names of option columns: a single letter, or option_a, choice_a, opt_a, answer_a (any case and separator)
_OPTION_COLUMN = re.compile(r"\A(?:(?:option|choice|opt|answer)_?)?([a-z])\Z")


def option_columns(columns: Iterable[object]) -> list[str]:
    """The columns of a multiple-choice example's options, in letter order: the run from A of columns named by a
    letter (three or more: ``A`` and ``B`` alone are a battle's models) or by a prefix and a letter (``option_a``,
    ``choice_b``, ``opt_c``, ``answer_d``: two or more); [] when there is none. Prefixed names win over bare letters."""
    found: dict[bool, dict[str, str]] = {True: {}, False: {}}
    for column in columns:
        name = normalize(column)
        match = _OPTION_COLUMN.match(name)
        if match:
            found[len(name) > 1].setdefault(match.group(1), str(column))
    for prefixed, fewest in ((True, 2), (False, 3)):
        run = []
        for letter in "abcdefghijklmnopqrstuvwxyz":
            if letter not in found[prefixed]:
                break
            run.append(found[prefixed][letter])
        if len(run) >= fewest:
            return run
    return []


def with_overrides(columns: Iterable[object], overrides: dict[str, str | None] | None,
                   kind: str | None = None) -> dict[str, str | None]:
    """The suggested mapping of ``columns`` with ``overrides`` (``{column: role}``, role None to leave the column
    out) on top: a role the overrides give to one column is taken from the column suggested for it."""
    given = {column: role for column, role in (overrides or {}).items() if column in {str(c) for c in columns}}
    taken = set(given.values())
    suggested = suggest_mapping(columns, kind)
    return {**{c: r for c, r in suggested.items() if r not in taken and c not in given}, **given}


#: the distinct values a text column takes to be suggested as the group: at least two subgroups, and at most as many
#: as a forest plot and empirical Bayes over subgroups read well
GROUP_VALUES = (2, 200)
#: rows counted at a time while counting a column's distinct values: the count stops once it passes GROUP_VALUES
_CHUNK_ROWS = 50_000
#: the first rows on which a candidate must hold one value per example (a bounded check of a property of examples)
_EXAMPLE_ROWS = 200_000
#: last words of a name that make a text column an identifier or a place, not a subgroup
_ID_WORDS = frozenset({"id", "ids", "uid", "uuid", "guid", "key", "hash", "idx", "index", "path", "file", "url",
                       "uri"})
#: words of a name that make a text column a model's answer, not a property of the example
_ANSWER_WORDS = frozenset({"pred", "preds", "prediction", "predicted", "output", "response", "completion"})


def suggest_group(frame: pd.DataFrame, mapping: dict[str, str | None]) -> tuple[str, int] | None:
    """The column to suggest as the ``group`` of a per-example log whose ``mapping`` has none, with its number of
    values; None when no column qualifies. A candidate is a text column (not numeric, boolean or a date)

    - not mapped to a role, and not named after one (a role's column the mapping leaves out stays out);
    - not named like an identifier or a place (last word id, uid, uuid, key, hash, index, path, file, url; qid) and
      not like a label or a model's answer (evalcore.data.features' label words: answer, label, target, correct ...;
      pred, prediction, output, response, completion);
    - with 2 to 200 distinct values (:data:`GROUP_VALUES`), counted :data:`_CHUNK_ROWS` rows at a time and stopped
      once past 200, so a column of many values (an id, free text) costs one chunk;
    - a property of the example, not an id: on the first :data:`_EXAMPLE_ROWS` rows each example (``example_id``)
      has one value (a model's answer varies between models) and there are at most half as many values as examples
      (as many as rows without an example column), so a subgroup holds two examples on average.

    Of the candidates, the one with the most values (the finest subgroups; empirical Bayes borrows strength across
    many of them), the first in the table on a tie."""
    if "group" in mapping.values():
        return None
    roles = {column for column, role in mapping.items() if role is not None}
    example = next((column for column, role in mapping.items() if role == "example_id"), None)
    low, high = GROUP_VALUES
    best: tuple[str, int] | None = None
    for column in frame.columns:
        name, values = str(column), frame[column]
        words = _words(name)
        if column in roles or normalize(name) in SYNONYMS or not words or _label_words(words) \
                or words[-1] in _ID_WORDS or (words[-1].endswith("id") and len(words[-1]) <= 3) \
                or _ANSWER_WORDS & set(words) or pd.api.types.is_numeric_dtype(values) \
                or pd.api.types.is_bool_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
            continue
        n = _distinct_up_to(values, high)
        if not low <= n <= high or (best is not None and n <= best[1]):
            continue
        head = frame[[example, column] if example is not None else [column]].iloc[:_EXAMPLE_ROWS].dropna()
        units = head[example].nunique() if example is not None else len(head)
        if example is not None and head.drop_duplicates()[example].duplicated().any():
            continue  # one example, several values: about the model's answer, not the example
        if 2 * head[column].nunique() > units:
            continue  # about one example per value: an identifier
        best = (name, n)
    return best


def _distinct_up_to(values: pd.Series, cap: int) -> int:
    """The distinct non-missing values of ``values``, counted :data:`_CHUNK_ROWS` rows at a time; ``cap + 1`` as soon
    as there are more than ``cap``."""
    seen: set = set()
    for start in range(0, len(values), _CHUNK_ROWS):
        seen.update(pd.unique(values.iloc[start:start + _CHUNK_ROWS].dropna()))
        if len(seen) > cap:
            return cap + 1
    return len(seen)


def detect_kind(roles: Iterable[str]) -> str:
    """The data shape implied by a set of mapped roles."""
    roles = set(roles)
    if {"model_a", "model_b"} & roles:
        return BATTLES
    if "n" in roles and ({"n_correct", "accuracy"} & roles) and not (set(LOG_VALUE_ROLES) & roles):
        return SUMMARY
    return LOG


def check_mapping(mapping: dict[str, str], columns: Iterable[object], kind: str) -> None:
    """Raise :class:`EvalDataError` when ``mapping`` names unknown columns or roles, or a role twice."""
    cols = {str(c) for c in columns}
    allowed = ROLES[kind]
    seen: dict[str, str] = {}
    for column, role in mapping.items():
        if column not in cols:
            raise EvalDataError(
                f"The mapping names a column '{column}' that is not in the file; the file's columns are: "
                f"{', '.join(sorted(cols))}."
            )
        if role not in allowed:
            raise EvalDataError(
                f"'{role}' (mapped from column '{column}') is not a role of a {kind} table; roles are: "
                f"{', '.join(allowed)}."
            )
        if role in seen:
            raise EvalDataError(
                f"Columns '{seen[role]}' and '{column}' are both mapped to the role '{role}': map only one."
            )
        seen[role] = column
