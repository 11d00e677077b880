"""Several files into one raw table: the runs of several models or tasks, written by one tool or several.

:func:`read_logs` expands and imports the sources (:mod:`.detect`) and stacks what they hold. One plain table is
returned exactly as read, so that its columns can still be mapped onto roles by hand; tool logs and several files
come back with their columns named after the roles. Files of different shapes (a per-example log and pairwise
battles) are refused together, naming the files of each shape. A row that two files both hold — the same
(model, task, example, repeat) — is counted once when the files agree on its values (the same file uploaded twice;
its text may differ, the first file's is kept). When they do not, the files are runs of one model: per-example logs
that each hold one model and score a shared example differently (``base.csv`` and ``new.csv``, both of model ``m``)
become runs named after their files (:func:`run_name`, made unique: "base" and "new", as ``evalcore compare BASE NEW``
names them), ordered by when they ran where the tool records it (lm-evaluation-harness's time stamps), else in the
order given; :attr:`RawLog.runs` lists them, the base first. Files of one model that share no example (one run split
into files by task) stay one model; separate runs that a tool numbers (Inspect's eval ids) are further repeats
(:func:`_separate_runs`). A conflict is refused, with the row's ids and the two files, where a file in it holds
several models (which of its models is which run cannot be told: upload one file per run) or the files are
leaderboard summaries. Files that share no example id and no task with each other (two different benchmarks uploaded
together) are combined too, with a warning naming them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Iterable

import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.data.limits import ReadLimits
from evalcore.data.mapping import detect_kind, with_overrides
from evalcore.data.reading import Source
from evalcore.data.schema import BATTLES, EXAMPLE_TEXT_ROLES, LOG, LOG_DEFAULT_LABELS, SUMMARY
from evalcore.importers.base import Imported
from evalcore.importers.detect import TABLE, NamedSource, describe, expand, import_files

#: the columns that identify a row of each shape; rows that agree on them are the same row
KEYS = {LOG: ("model", "task", "example_id", "repeat"), SUMMARY: ("model", "task")}
_FILE = "__file__"


#: extensions dropped from a file's name to name its run (compression first)
COMPRESSION = (".gz", ".bz2", ".xz", ".zst", ".zip")


def run_name(name: str) -> str:
    """'runs/gpt-4o-feb.jsonl.gz' -> 'gpt-4o-feb' (the name itself if nothing is left)."""
    stem = PurePath(str(name).replace("\\", "/")).name
    for ext in COMPRESSION:
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
            break
    if "." in stem.strip("."):
        stem = stem.rsplit(".", 1)[0]
    return stem or str(name)


def unique_names(names: list[str]) -> list[str]:
    """Each name, with " (2)", " (3)" ... added to the second and later uses of a name."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        k = seen.get(name, 0) + 1
        seen[name] = k
        candidate = name if k == 1 else f"{name} ({k})"
        while candidate in out:
            k += 1
            seen[name] = k
            candidate = f"{name} ({k})"
        out.append(candidate)
    return out


@dataclass
class RawLog:
    """The raw table of some files: its shape when a tool said it (None for one plain table), the files, and what
    the import did (for the validation report)."""

    frame: pd.DataFrame
    kind: str | None
    files: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    mapped: bool = True  # columns already named after roles (False: one plain table, mapped by validate)
    warnings: list[str] = field(default_factory=list)  # files left out, files that share no example and no task
    tools: tuple[str, ...] = ()  # the tool that wrote each of ``files`` ("table" for a plain table)
    runs: tuple[str, ...] = ()  # the runs made of files of one model (module docstring), the base (oldest) first
    when: str = ""  # when the latest of the files' runs ran, where their tool records it (ISO 8601 text)
    #: every model of the log was named after its file by the importer, the files naming none (Ragas):
    #: ``--model NAME`` may rename it
    model_from_file: bool = False


def read_logs(sources: Iterable[Source | NamedSource], mapping: dict[str, str | None] | None = None,
              limits: ReadLimits | None = None, strict: bool = False) -> RawLog:
    """The raw table of ``sources``; ``mapping`` names the roles of plain tables' columns when several files
    are combined (a single plain table is mapped later, by :func:`evalcore.data.validation.validate`). A file
    that cannot be used among others that can is left out with a warning naming it and why; ``strict`` refuses
    the load instead."""
    limits = limits or ReadLimits.from_env()
    files = expand(list(sources), limits)
    imported, left_out = import_files(files, limits, strict)
    tools = tuple(item.tool for item in imported for _ in item.files)
    if len(imported) == 1 and imported[0].tool == TABLE:
        return RawLog(imported[0].frame, None, imported[0].files, [], mapped=False, warnings=left_out, tools=tools)
    for item in imported:
        if item.tool == TABLE:
            _name_roles(item, mapping)
    kinds: dict[str, list[str]] = {}
    for item in imported:
        kinds.setdefault(item.kind, []).extend(item.files)
    if len(kinds) > 1:
        shapes = "; ".join(f"{kind}: {listed(names, 3)}" for kind, names in kinds.items())
        raise EvalDataError(f"These files hold different shapes of data, which cannot be combined ({shapes}). "
                            "Upload the files of one shape together.")
    kind = next(iter(kinds))
    notes = [f"Read {describe(imported)}."] if len(files) > 1 or imported[0].tool != TABLE else []
    notes.extend(merged_notes([note for item in imported for note in item.notes],
                              [name for item in imported for name in item.files]))
    n_rows = sum(len(item.frame) for item in imported)
    if n_rows > limits.max_rows:
        raise EvalDataError(f"The files hold {n_rows:,} rows; evalcore reads at most {limits.max_rows:,} rows into "
                            f"memory. Upload fewer files or a sample. {limits.raise_hint('rows')}")
    warnings = left_out + [warning for item in imported for warning in item.warnings]
    warnings += unrelated_files(imported) if kind in (LOG, SUMMARY) else mixed_judges(imported)
    pooled = pooled_runs(imported) if kind == LOG else []
    frame, runs = _stack(imported, kind, notes)
    warnings.extend(w for model, w in pooled if model in set(frame["model"].astype(str)))
    files_read = tuple(name for item in imported for name in item.files)
    when = max((item.when for item in imported if item.when), default="")
    return RawLog(frame, kind, files_read, notes, warnings=warnings, tools=tools, runs=runs, when=when,
                  model_from_file=all(item.model_from_file for item in imported))


def _ids(frame: pd.DataFrame, role: str) -> set[str] | None:
    """The distinct values of ``role`` as text; None when the frame has no such column."""
    if role not in frame.columns:
        return None
    return set(pd.unique(frame[role].dropna().astype(str)))


#: notes repeated for at least this many files are written once, naming the files
_MERGED_FROM = 3


def merged_notes(notes: list[str], names: list[str]) -> list[str]:
    """``notes`` with those that say the same of several files ('<file or folder>: <text>', the same text for at
    least :data:`_MERGED_FROM` of them, e.g. HELM's notes for each of nine run folders) written once, naming the
    files: 'a, b, c and 6 more: <text>'. Other notes keep their place."""
    def split(note: str) -> tuple[str, str] | None:
        head, sep, rest = note.partition(": ")
        return (head, rest) if sep and any(name == head or name.startswith(head + "/") for name in names) else None

    parts = [split(note) for note in notes]
    by_text: dict[str, list[str]] = {}
    for part in parts:
        if part is not None:
            by_text.setdefault(part[1], []).append(part[0])
    out, written = [], set()
    for note, part in zip(notes, parts):
        heads = by_text.get(part[1], []) if part is not None else []
        if len(heads) < _MERGED_FROM:
            out.append(note)
        elif part[1] not in written:
            written.add(part[1])
            out.append(f"{listed(heads, 3)}: {part[1]}")
    return out


#: the words of the warning about files that are different benchmarks
UNRELATED = "share no example and no task"


def unrelated_files(imported: list[Imported]) -> list[str]:
    """A warning when the files fall into sets that share no example id and no task with each other (e.g. an
    MMLU-Pro log and an ImageNet log): they are still combined into one log, whose models were then evaluated on
    different examples. Files are linked when they share an example id or a task (a log without a task column
    counts its categories as tasks, as validation does) or a file (the tasks of one run read with its results
    file); a file with neither column cannot be told apart and links to every file. Names each set of files
    ('a.csv + b.csv' for files that belong together)."""
    if len(imported) < 2:
        return []
    keys = []
    for item in imported:
        ids = _ids(item.frame, "example_id")
        tasks = _ids(item.frame, "task")
        if tasks is None:
            tasks = _ids(item.frame, "category")
        keys.append(None if ids is None and tasks is None else (ids or set(), tasks or set()))
    parent = list(range(len(imported)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(imported)):
        for j in range(i + 1, len(imported)):
            a, b = keys[i], keys[j]
            one_run = set(imported[i].files) & set(imported[j].files)  # e.g. the tasks of one lm-eval results file
            if a is None or b is None or (a[0] & b[0]) or (a[1] & b[1]) or one_run:
                parent[root(i)] = root(j)
    sets: dict[int, list[str]] = {}
    for i, item in enumerate(imported):
        names = sets.setdefault(root(i), [])
        names.extend(name for name in item.files if name not in names)
    if len(sets) < 2:
        return []
    names = [" + ".join(files) for files in sets.values()]
    listed_names = " and ".join(names) if len(names) == 2 else ", ".join(names[:-1]) + " and " + names[-1]
    return [f"{listed_names} {UNRELATED}{'' if len(names) == 2 else ' with each other'}: they are "
            "analysed as one log, in which models from different files were evaluated on different examples. Upload "
            "them separately if they are different benchmarks."]


def pooled_runs(imported: list[Imported]) -> list[tuple[str, str]]:
    """(model, warning) for files that are each a whole test run by what their logs say (DeepEval) and name one
    model: unless they score shared examples differently (then they become runs, :func:`_runs_of_one_model`),
    their test cases are pooled as one model's, which is wrong for unrelated projects."""
    by_model: dict[str, list[Imported]] = {}
    for item in imported:
        if item.whole_run and "model" in item.frame and item.frame["model"].nunique() == 1:
            by_model.setdefault(str(item.frame["model"].iloc[0]), []).append(item)
    out = []
    for model, items in by_model.items():
        if len(items) < 2:
            continue
        names = [_label(item) for item in items]
        out.append((model, f"{listed(names, 6)} are separate {items[0].tool} test runs that all name the model "
                           f"'{model}': their test cases are read as one model's. If they are unrelated projects, "
                           "upload them separately (or name the model in each run); if they are runs of one model to "
                           f"compare, run evalcore compare {' '.join(_quoted_arg(n) for n in names[:2])}."))
    return out


def _quoted_arg(name: str) -> str:
    """A file name as a shell argument (quoted when it holds spaces or quotes)."""
    return name if name and all(c.isalnum() or c in "._-/+@:," for c in name) else "'" + name.replace("'", "'\\''") + "'"


def mixed_judges(imported: list[Imported]) -> list[str]:
    """A warning when battles judged by different AI judges are combined (AlpacaEval's annotators, MT-Bench's judge
    models): their verdicts are pooled into one ranking, while each tool ranks models under one judge at a time."""
    by_judges: dict[tuple[str, ...], list[str]] = {}
    for item in imported:
        if item.judges:
            by_judges.setdefault(item.judges, []).extend(item.files)
    if len(by_judges) < 2:
        return []
    sets = "; ".join(f"{', '.join(judges)}: {listed(files, 3)}" for judges, files in by_judges.items())
    return [f"These battles were judged by different AI judges ({sets}): their verdicts are pooled into one ranking, "
            "although a judge's preferences are its own (AlpacaEval and MT-Bench rank models under one judge at a "
            "time). Upload the files of one judge together to rank under it."]


def _name_roles(item: Imported, mapping: dict[str, str | None] | None) -> None:
    """Rename a plain table's columns to their roles (the mapping's entries for its columns, the suggested mapping
    for the others) and detect its shape."""
    chosen = with_overrides(item.frame.columns, mapping)
    roles = {column: role for column, role in chosen.items() if role is not None}
    item.frame = item.frame.drop(columns=[c for c, r in chosen.items() if r is None and c in item.frame])
    item.frame = item.frame.rename(columns=roles)
    item.kind = detect_kind(roles.values())


def _stack(imported: list[Imported], kind: str, notes: list[str]) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The tables one under the other, and the runs made of files of one model (module docstring); shared rows
    counted once when identical, refused when they conflict otherwise."""
    if kind == LOG:
        _one_sample_without_repeat(imported, notes)
        _separate_runs(imported, notes)
    for item, label in zip(imported, unique_names([" + ".join(item.files) for item in imported])):
        item._stack_label = label  # type: ignore[attr-defined]
    parts = [item.frame.assign(**{_FILE: _label(item)}) for item in imported]
    frame = pd.concat(parts, ignore_index=True, sort=False) if len(parts) > 1 else parts[0].reset_index(drop=True)
    if kind == LOG:
        _separate_task_ids(frame, notes)
        _one_category_per_task(frame, notes)
    if len(parts) == 1:
        return frame.drop(columns=_FILE), ()
    keys = [k for k in KEYS.get(kind, ()) if k in frame]
    if kind == BATTLES or not {"model"} < set(keys):
        return frame.drop(columns=_FILE), ()
    found = _disagreements(frame, keys)
    runs = _runs_of_one_model(frame, found[1], imported, notes) if kind == LOG else ()
    frame = _shared_rows(frame, keys, notes, _disagreements(frame, keys) if runs else found, kind)
    return frame.drop(columns=_FILE), runs


def _one_category_per_task(frame: pd.DataFrame, notes: list[str]) -> None:
    """A task that one file puts in a category (an lm-eval run's group) and another file in none (no category, or
    the default 'all') is in that category in every file's rows, with a note naming the files; a task that files put
    in different categories is refused, naming the task, each category and its files (a task belongs to one
    category)."""
    if "category" not in frame or "task" not in frame or frame[_FILE].nunique() < 2:
        return
    unnamed = frame["category"].isna() | (frame["category"].astype(str) == LOG_DEFAULT_LABELS["category"])
    named = frame.loc[~unnamed, ["task", "category", _FILE]].drop_duplicates()
    split = named.groupby("task", sort=True)["category"].nunique()
    if (split > 1).any():
        task = split.index[split > 1][0]
        said = "; ".join(f"'{category}' in {listed(list(files), 3)}" for category, files
                         in named[named["task"] == task].groupby("category", sort=True)[_FILE].unique().items())
        raise EvalDataError(f"Task '{task}' is in different categories in different files ({said}): a task belongs "
                            "to one category, so these files group their tasks differently (e.g. runs of another "
                            "benchmark version). Upload the files of each grouping separately.")
    category = named.drop_duplicates("task").set_index("task")["category"]
    fill = unnamed & frame["task"].isin(category.index)
    if fill.any():
        files = list(pd.unique(frame.loc[fill, _FILE]))
        frame.loc[fill, "category"] = frame.loc[fill, "task"].map(category)
        tasks = list(pd.unique(frame.loc[fill, "task"].astype(str)))
        notes.append(f"{listed(files, 3)}: no category for {listed(tasks, 3, repr)}, which other files put in a "
                     "category (e.g. an lm-eval run's group): their rows take that category.")


def _label(item: Imported) -> str:
    """How the rows of ``item`` are marked while files are stacked: its files' names (made unique by
    :func:`_stack` where two items have the same names, e.g. two uploads named ``.latest_test_run.json``)."""
    return getattr(item, "_stack_label", None) or " + ".join(item.files)


def _one_sample_without_repeat(imported: list[Imported], notes: list[str]) -> None:
    """Files without a ``repeat`` column combined with files that number repeats (Inspect's epochs, HELM's trials,
    OpenAI evals' samples; lm-eval writes none): their rows hold one sample each, repeat 1."""
    without = [item for item in imported if "repeat" not in item.frame.columns]
    if not without or len(without) == len(imported):
        return
    for item in without:
        item.frame = item.frame.assign(repeat=1)
    names = [name for item in without for name in item.files]
    one = len(names) == 1
    notes.append(f"{listed(names, 3)} {'has' if one else 'have'} no repeat column (one sample per example): "
                 f"{'its' if one else 'their'} rows are repeat 1 next to the files that number repeated samples.")


def _separate_runs(imported: list[Imported], notes: list[str]) -> None:
    """Files of different runs (different run ids, e.g. two Inspect evals of one task and model) that score the same
    examples hold different samples of them: the later run's repeats are numbered after the earlier runs' (repeats
    1-k, then k+1-...), so that each example keeps all its samples. Files of one run (the same log uploaded twice,
    or as .eval and .json) keep their numbers: their shared rows are counted once."""
    keys = ["model", "task", "example_id"]
    done: list[Imported] = []
    for item in imported:
        frame = item.frame
        if not item.run or "repeat" not in frame or not set(keys) <= set(frame):
            continue
        others = [d for d in done if d.run != item.run]
        done.append(item)
        if not others:
            continue
        before = pd.concat([d.frame[[*keys, "repeat"]] for d in others], ignore_index=True)
        before = before.assign(**{k: before[k].astype(str) for k in keys}).groupby(keys)["repeat"].max()
        index = pd.MultiIndex.from_frame(frame[keys].astype(str))
        shift = pd.Series(before.reindex(index).to_numpy(), index=frame.index).fillna(0)
        if not (shift > 0).any():
            continue
        repeat = pd.to_numeric(frame["repeat"], errors="coerce") + shift
        item.frame = frame.assign(repeat=repeat.astype("int64") if repeat.notna().all() else repeat)
        earlier = sorted({name for d in others for name in d.files})
        notes.append(f"{listed(list(item.files), 3)} and {listed(earlier, 3)} are separate runs (run ids "
                     f"{item.run} and {', '.join(sorted({d.run for d in others}))}) scoring the same examples: the "
                     f"samples of {int((shift > 0).sum()):,} rows are numbered as further repeats of their examples, "
                     "each example the unit.")


def _separate_task_ids(frame: pd.DataFrame, notes: list[str]) -> None:
    """Example ids that tools number within a task (0, 1, 2 ...) are made unique across tasks ('task/id')."""
    if not {"example_id", "task", "model"} <= set(frame):
        return
    ids = frame[["model", "example_id", "task"]].astype(str).drop_duplicates()
    if ids.duplicated(["model", "example_id"]).any():
        frame["example_id"] = frame["task"].astype(str) + "/" + frame["example_id"].astype(str)
        notes.append("Example ids repeat across tasks (tools number examples within a task, or score one example by "
                     "several metrics, each a task): they are written 'task/id' so that each is one example.")


def _disagreements(frame: pd.DataFrame, keys: list[str]) -> tuple[pd.Series, pd.DataFrame]:
    """Each row's key (a hash of its ``keys``) and the rows whose key several files hold with different values
    (the example's text aside): key, file and value hash, in row order."""
    key_code = pd.Series(pd.util.hash_pandas_object(frame[keys].astype(str), index=False).to_numpy(),
                         index=frame.index)
    shared = key_code.duplicated(keep=False).to_numpy()
    if not shared.any():
        return key_code, pd.DataFrame({"key": [], "file": [], "value": []})
    values = [c for c in frame.columns if c not in keys and c != _FILE and c not in EXAMPLE_TEXT_ROLES]
    rows = pd.DataFrame({"key": key_code[shared], "file": frame.loc[shared, _FILE],
                         "value": pd.util.hash_pandas_object(frame.loc[shared, values].astype(str), index=False)
                         .to_numpy()})
    per_key = rows.groupby("key", sort=False).agg(files=("file", "nunique"), values=("value", "nunique"))
    conflict = per_key.index[(per_key["files"] > 1) & (per_key["values"] > 1)]
    return key_code, rows[rows["key"].isin(conflict)]


def _runs_of_one_model(frame: pd.DataFrame, conflicts: pd.DataFrame, imported: list[Imported],
                       notes: list[str]) -> tuple[str, ...]:
    """The rule of the module docstring: the files of ``conflicts`` (:func:`_disagreements`), when each holds one
    model, become runs named after their (first) file, renamed in ``frame`` in place; their names, oldest first
    (by the items' ``when`` where every run has one, else in the order given). Nothing is renamed where a file in
    a conflict holds several models: :func:`_shared_rows` then refuses the conflict."""
    if conflicts.empty:
        return ()
    labels = set(conflicts["file"])
    models = frame.loc[frame[_FILE].isin(labels)].groupby(_FILE, sort=False)["model"].nunique()
    if (models > 1).any():
        return ()
    items = [item for item in imported if _label(item) in labels]
    if all(item.when for item in items):
        items = sorted(items, key=lambda item: item.when)  # stable: the order given among runs of one time
    is_run = frame[_FILE].isin(labels)
    taken = sorted(set(frame.loc[~is_run, "model"].astype(str)))  # models of other files keep their names
    names = unique_names([*taken, *(item.label or run_name(item.files[0]) for item in items)])[len(taken):]
    model = {_label(item): str(frame.loc[frame[_FILE] == _label(item), "model"].iloc[0]) for item in items}
    frame.loc[is_run, "model"] = frame.loc[is_run, _FILE].map(dict(zip(map(_label, items), names)))
    described = [f"'{name}' is {_label(item)}" for name, item in zip(names, items)]
    same = sorted(set(model.values()))
    notes.append(f"{listed([_label(item) for item in items], 6)} score the same examples of model"
                 f"{'s' if len(same) > 1 else ''} {listed([repr(m) for m in same], 6)} differently: each file is a "
                 f"run of its own, named after {'what its log says' if any(i.label for i in items) else 'it'} "
                 f"({'; '.join(described)}); evalcore compare {' '.join(_quoted_arg(i.files[0]) for i in items[:2])} "
                 "compares them. "
                 f"The first, '{names[0]}', is the base on the Compare page"
                 + (" (the oldest run, by when each ran)." if all(item.when for item in items) else
                    " (the first file given)."))
    return tuple(names)


def _shared_rows(frame: pd.DataFrame, keys: list[str], notes: list[str],
                 found: tuple[pd.Series, pd.DataFrame], kind: str) -> pd.DataFrame:
    """Rows whose keys appear in several files: counted once when the files agree on every value, refused (with
    the first such row's ids and files) when they do not (files of one model that differ are runs by then:
    :func:`_runs_of_one_model`). ``found``: :func:`_disagreements` of ``frame``. Repeats within one file are left
    to validation."""
    key_code, conflicts = found
    if len(conflicts):
        first = conflicts.index[conflicts["key"] == conflicts["key"].iloc[0]]
        files = list(frame.loc[first, _FILE].unique()[:2])
        ids = ", ".join(f"{k}={str(v)!r}" for k, v in zip(keys, frame.loc[first[0], keys]))
        several = [f for f in files if frame.loc[frame[_FILE] == f, "model"].nunique() > 1] if kind == LOG else []
        why = (f" (Two files of one model that differ become two runs named after the files, but {listed(several)} "
               f"hold{'s' if len(several) == 1 else ''} several models: to compare runs, upload one file per run, "
               "each of one model, or name the runs in the model column.)" if several else "")
        raise EvalDataError(f"The files disagree on the same row ({ids}): {' and '.join(files)} give it different "
                            f"values. Remove one of the files or fix the row.{why}")
    if not key_code.duplicated(keep=False).any():
        return frame
    across = key_code.duplicated(keep="first") & ~frame.duplicated([*keys, _FILE], keep=False)
    n = int(across.sum())
    if n:
        notes.append(f"{n:,} rows appear identically in several files (e.g. one file uploaded twice): counted once.")
    return frame[~across.to_numpy()]
