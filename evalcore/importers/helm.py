"""HELM run folders: ``per_instance_stats.json`` with ``run_spec.json`` and ``scenario_state.json``.

Format (stanford-crfm/helm ``benchmark/runner.py``; one folder per run under ``benchmark_output/runs/<suite>/``):

- ``run_spec.json``: ``{name: "<scenario>:<args>,model=<model>", scenario_spec, adapter_spec: {model, ...},
  metric_specs: [{class_name, args: {names: [...]}}], groups}``;
- ``scenario_state.json``: ``{adapter_spec: {model, ...}, request_states: [...]}``;
- ``per_instance_stats.json``: a list of ``{instance_id, train_trial_index, perturbation?, stats: [{name: {name,
  split, perturbation?}, count, sum, mean, ...}]}``.

Other files of the folder (``stats.json``, ``instances.json``, ``display_predictions.json`` ...) are not needed.

Mapping to roles: ``model`` = ``adapter_spec.model`` (scenario state, else run spec, else the ``model=`` part of the
run's name); ``task`` = the run's name without its ``model=`` part (so that runs of several models on one scenario
are one task); ``example_id`` = ``instance_id``; ``repeat`` = ``train_trial_index``; the metric = the ``mean`` of
the run's main metric on the test split (valid when there is no test split): the first of the names its
``metric_specs`` list that every instance has, else the first of exact_match, quasi_exact_match,
prefix_exact_match, quasi_prefix_exact_match, f1_score, rouge_l, bleu_4, math_equiv. It is ``correct`` when every
value is 0 or 1, else ``score``. Perturbed instances (robustness and fairness variants) are left out and counted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, as_number, field_of, left_out_note, optional, parse_json

TOOL = "HELM"
STATS = "per_instance_stats.json"
STATE = "scenario_state.json"
SPEC = "run_spec.json"
#: the files a HELM run folder holds; those not needed are claimed (so not read as tables) and set aside
RUN_FILES = (STATS, STATE, SPEC, "stats.json", "instances.json", "display_predictions.json",
             "display_requests.json", "scenario.json", "costs.json")
_METRICS = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "f1_score",
            "rouge_l", "bleu_4", "math_equiv", "math_equiv_chain_of_thought")
_MODEL_PART = re.compile(r"(^|,)model=([^,]+)")


def sniff(file: LogFile) -> bool:
    """A file of a HELM run folder: its name, and JSON content."""
    try:
        return file.base in RUN_FILES and file.head(16).startswith((b"{", b"["))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """One log per run folder."""
    folders: dict[str, dict[str, LogFile]] = defaultdict(dict)
    for file in files:
        folders[file.folder][file.base] = file
    return [_run(folder, run) for folder, run in folders.items()]


def _run(folder: str, run: dict[str, LogFile]) -> Imported:
    where = folder or "the upload"
    if STATS not in run:
        raise EvalDataError(f"{where}: a HELM run needs {STATS} (the per-instance results); only "
                            f"{', '.join(sorted(run))} {'was' if len(run) == 1 else 'were'} given. Upload the whole "
                            "run folder (or a zip of it).")
    spec = parse_json(run[SPEC]) if SPEC in run else {}
    state = parse_json(run[STATE]) if STATE in run else {}
    name = str(optional(spec, "name") or folder.rsplit("/", 1)[-1] or "helm run")
    model = optional(state, "adapter_spec.model") or optional(spec, "adapter_spec.model")
    if model is None:
        found = _MODEL_PART.search(name)
        if found is None:
            raise EvalDataError(f"{where}: the model is not known: upload {STATE} or {SPEC} with {STATS}.")
        model = found.group(2).replace("_", "/", 1)
    task = _MODEL_PART.sub("", name).strip(",") or name
    instances = parse_json(run[STATS])
    if not isinstance(instances, list):
        raise EvalDataError(f"{run[STATS].name}: expected a list of instances.")
    notes: list[str] = []
    unused = sorted(set(run) - {STATS, STATE, SPEC})
    if unused:
        notes.append(f"{where}: {', '.join(unused)} not needed (the results are in {STATS}).")
    imported = _instances(run[STATS], instances, str(model), task, _listed_metrics(spec), notes)
    imported.files = tuple(file.name for file in run.values())
    return imported


def _listed_metrics(spec: Any) -> list[str]:
    names = []
    for metric in optional(spec, "metric_specs", []) or []:
        names.extend(str(n) for n in optional(metric, "args.names", []) or [])
    return names


def _instances(file: LogFile, instances: list, model: str, task: str, listed: list[str],
               notes: list[str]) -> Imported:
    rows, perturbed = [], 0
    for number, instance in enumerate(instances, 1):
        if not isinstance(instance, dict):
            raise EvalDataError(f"{file.name}: instance {number} is not a JSON object.")
        if instance.get("perturbation"):
            perturbed += 1
            continue
        values: dict[tuple[str, str], float] = {}
        for stat in field_of(instance, "stats", file, f"instance {number}"):
            key = stat.get("name", {}) if isinstance(stat, dict) else {}
            if key.get("perturbation") or "mean" not in stat:
                continue
            values[(str(key.get("name")), str(key.get("split")))] = as_number(stat["mean"])
        rows.append((str(field_of(instance, "instance_id", file, f"instance {number}")),
                     int(instance.get("train_trial_index", 0) or 0), values))
    if not rows:
        raise EvalDataError(f"{file.name}: no instance without perturbation: nothing to evaluate.")
    metric, split = _main(rows, listed, file)
    frame = pd.DataFrame({"model": model, "task": task, "example_id": [r[0] for r in rows],
                          "repeat": [r[1] for r in rows]})
    value = pd.Series([r[2].get((metric, split), np.nan) for r in rows], dtype="float64")
    binary = value.dropna().isin((0.0, 1.0)).all()
    label = "correct" if binary else "score"
    frame[label] = value.to_numpy()
    notes.append(f"{file.name}: metric '{metric}' ({split} split) is the label ('{label}').")
    if perturbed:
        notes.append(left_out_note(perturbed, len(instances), f"instances of {file.name}",
                                   "perturbed variants (robustness / fairness), not the original instance"))
    missing = value.isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"instances of {file.name}",
                                   f"no '{metric}' value"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(frame, "log", TOOL, (file.name,), notes)


def _main(rows: list, listed: list[str], file: LogFile) -> tuple[str, str]:
    """The run's main metric and split: the first listed (then known) metric that most instances have."""
    present: dict[tuple[str, str], int] = defaultdict(int)
    for _, _, values in rows:
        for key in values:
            present[key] += 1
    for split in ("test", "valid"):
        for name in (*listed, *_METRICS):
            if present.get((name, split), 0) >= len(rows) / 2:
                return name, split
    raise EvalDataError(f"{file.name}: no instance has a known accuracy metric ({', '.join(_METRICS[:4])} ...) on "
                        "the test or valid split.")
