"""HELM run folders: ``per_instance_stats.json`` with ``run_spec.json`` and ``scenario_state.json``, and HELM's schema.

Format (stanford-crfm/helm @ 63754d0, ``src/helm/benchmark/runner.py``: one folder per run,
``benchmark_output/runs/<suite>/<run_spec.name>/``, the name being ``<scenario>:<args>,model=<org>_<model>``):

- ``run_spec.json``: ``{name, scenario_spec, adapter_spec: {model, ...}, metric_specs: [{class_name, args: {names:
  [...]}}], groups: [run group names], annotators: [{class_name}] | null}`` (``src/helm/benchmark/run_spec.py``);
  ``annotators`` set means LLM judges scored the outputs (HELM Safety);
- ``scenario_state.json``: ``{adapter_spec: {model, ...}, request_states: [{instance: {id, input: {text},
  references: [{output: {text}, tags: ["correct"]}], perturbation?}, train_trial_index, output_mapping?, request,
  result: {completions: [{text}]}, request_mode?}]}``;
- ``per_instance_stats.json``: a list of ``{instance_id, train_trial_index, perturbation?, stats: [{name: {name,
  split, perturbation?}, count, sum, mean, ...}]}``; the runner writes one entry per (metric class, instance)
  (``runner.py`` ``per_instance_stats.extend(metric_result.per_instance_stats)``), so an instance may be listed
  several times — HELM Safety lists it once with the judge scores (``safety_score``; earlier ``sst_score``,
  ``art_score``, ``harm_bench_score``, ``xst_score``: the mean of two judges' ratings in [0, 1],
  ``src/helm/benchmark/metrics/safety_metrics.py``) and once with generation statistics;
- the schema (``src/helm/benchmark/static/schema_*.yaml``, and the ``schema.json`` that ``helm-summarize`` writes
  to ``benchmark_output/runs/<suite>/``): ``run_groups: [{name, environment: {main_name, main_split}}]`` — the main
  metric of each run group (e.g. ``narrative_qa`` -> ``f1_score``, ``schema_lite.yaml``).

Other files of the folder (``stats.json``, ``instances.json``, ``display_predictions.json`` ...) and of the suite
(``runs.json``, ``run_specs.json``) are not needed.

Mapping to roles: ``model`` = ``adapter_spec.model`` (scenario state, else run spec, else the ``model=`` part of the
run's name, from the folder's name when only ``per_instance_stats.json`` is given; ``org_model`` read as
``org/model``); ``task`` = the run's name without its ``model=`` part (so that runs of several models on one
scenario are one task); ``example_id`` = ``instance_id``; ``repeat`` = ``train_trial_index``; the entries of one
(instance, trial) are merged into one row. The metric = the ``mean`` of the run's MAIN metric on its main split:
HELM's main metric of the run's groups (``run_spec.groups``, else the scenario named by the run) from an uploaded
schema, else from a built-in table copied from HELM's ``schema_lite.yaml``, ``schema_classic.yaml``,
``schema_capabilities.yaml`` and ``schema_safety.yaml``; else the first of the names its ``metric_specs`` list that
the instances have, else the first known accuracy metric. Exact-match metrics (0/1) are ``correct``; F1, BLEU,
ROUGE and judge scores are ``score``; other metrics are ``correct`` when every value is 0 or 1. A note says which
metric was used and why, and when the label comes from an LLM judge. Text (from ``scenario_state.json``, joined on
instance id and trial): ``input`` = ``instance.input.text`` (with the lettered choices of a multiple-choice
prompt), ``target`` = the references tagged ``correct`` (one a line; with their letter for multiple choice),
``output`` = ``result.completions[0].text``. Perturbed instances (robustness and fairness variants) are left out
and counted.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import PurePosixPath
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
#: files of a suite folder (``benchmark_output/runs/<suite>/``) beside the run folders, set aside
SUITE_FILES = ("runs.json", "run_specs.json")
_SCHEMA_NAME = re.compile(r"^schema(_[\w\- ]+)?\.(json|ya?ml)$")
_METRICS = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "f1_score",
            "rouge_l", "bleu_4", "math_equiv", "math_equiv_chain_of_thought")
_MODEL_PART = re.compile(r"(^|[,:])model=([^,]+)")

#: main metric (in order of preference) of well-known run groups, from HELM's schemas (stanford-crfm/helm @ 63754d0
#: ``src/helm/benchmark/static/schema_lite.yaml``, ``schema_classic.yaml``, ``schema_capabilities.yaml``,
#: ``schema_safety.yaml`` run_groups[].environment.main_name; the safety groups' earlier names from
#: ``schema_safety.yaml`` @ 9bebceea9); a group name matches its key or starts with "<key>_"
MAIN_METRICS: dict[str, tuple[str, ...]] = {
    "narrative_qa": ("f1_score",),
    "natural_qa": ("f1_score",),
    "quac": ("f1_score",),
    "mmlu_pro": ("chain_of_thought_correctness",),
    "mmlu": ("exact_match",),
    "gpqa": ("chain_of_thought_correctness",),
    "openbookqa": ("exact_match",),
    "hellaswag": ("exact_match",),
    "truthful_qa": ("exact_match",),
    "boolq": ("quasi_exact_match",),
    "imdb": ("quasi_exact_match",),
    "raft": ("quasi_exact_match",),
    "civil_comments": ("quasi_exact_match",),
    "gsm": ("final_number_exact_match", "exact_match_indicator"),
    "math_regular": ("math_equiv",),
    "math": ("math_equiv_chain_of_thought", "math_equiv"),
    "legalbench": ("quasi_exact_match",),
    "legal_support": ("quasi_exact_match",),
    "lsat_qa": ("quasi_exact_match",),
    "med_qa": ("quasi_exact_match",),
    "wmt_14": ("bleu_4",),
    "summarization_cnndm": ("rouge_2",),
    "summarization_xsum": ("rouge_2",),
    "ifeval": ("ifeval_strict_accuracy",),
    "wildbench": ("wildbench_score_rescaled", "wildbench_score"),
    "omni_math": ("omni_math_accuracy",),
    "bbq": ("bbq_accuracy", "quasi_exact_match"),
    "harm_bench": ("safety_score", "harm_bench_score"),
    "simple_safety_tests": ("safety_score", "sst_score"),
    "xstest": ("safety_score", "xst_score", "xstest_score"),
    "anthropic_red_team": ("safety_score", "art_score"),
}
#: metrics that are 0 or 1 per instance (HELM's exact-match family)
_BINARY = re.compile(r"^(quasi_|prefix_|quasi_prefix_|final_number_)?exact_match(_indicator)?$|^math_equiv"
                     r"(_chain_of_thought)?$|^chain_of_thought_correctness$|^bbq_accuracy$|^omni_math_accuracy$")
#: metrics that are graded, whatever values they happen to take
_GRADED = re.compile(r"^(f1_score|f1_set_match|rouge_\w+|bleu_\d|chinese_\w+|ifeval_\w+|bits_per_byte|"
                     r"classification_\w+_f1|\w*_score(_rescaled)?)$")
#: metrics whose values are LLM judges' ratings (HELM annotators): HELM Safety, WildBench, Omni-MATH
_JUDGED = re.compile(r"^(safety|sst|art|harm_bench|xst|xstest)(_\w+)?_score$|^wildbench_score(_rescaled)?$|"
                     r"^omni_math_accuracy$")


def sniff(file: LogFile) -> bool:
    """A file of a HELM run folder or suite folder (its name, and JSON content), or a HELM schema (``schema.json``
    or ``schema_*.yaml`` with ``run_groups``)."""
    try:
        if file.base in RUN_FILES or file.base in SUITE_FILES:
            return file.head(16).startswith((b"{", b"["))
        return _is_schema(file)
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _is_schema(file: LogFile) -> bool:
    if not _SCHEMA_NAME.match(file.base):
        return False
    if file.base.endswith(".json"):
        return file.head(16).startswith(b"{") and b'"run_groups"' in file.data
    return re.search(rb"(?m)^run_groups:", file.data) is not None


def convert(files: list[LogFile]) -> list[Imported]:
    """One log per run folder; schema files give the runs' main metrics."""
    schemas = [file for file in files if _is_schema(file)]
    mains = [(file, _schema_mains(file)) for file in schemas]
    folders: dict[str, dict[str, LogFile]] = defaultdict(dict)
    suite: list[str] = []
    for file in files:
        if file in schemas:
            continue
        if file.base in SUITE_FILES:
            suite.append(file.name)
            continue
        folders[file.folder][file.base] = file
    if not folders:
        given = ", ".join(f.name for f in files)
        raise EvalDataError(f"{given}: HELM's schema and suite files hold no per-instance results; upload the run "
                            f"folders (each with {STATS}) with them.")
    out, listed = [], set()
    for folder, run in folders.items():
        schema = _schema_for(folder, mains)
        imported = _run(folder, run, schema)
        if schema is not None and schema[0] not in listed:  # each file once in the report's list
            imported.files = (*imported.files, schema[0])
            listed.add(schema[0])
        out.append(imported)
    if suite:
        out[0].notes.append(f"{', '.join(suite)}: not needed (the results are in each run's {STATS}).")
        out[0].files = (*out[0].files, *suite)
    return out


def _schema_for(folder: str, mains: list[tuple[LogFile, dict]]) -> tuple[str, dict] | None:
    """The schema of a run folder: the uploaded schema in the nearest folder above it, else the only one."""
    above = [(len(f.folder), f.name, m) for f, m in mains if not f.folder or folder == f.folder
             or folder.startswith(f.folder + "/")]
    if above:
        _, name, table = max(above, key=lambda item: item[0])
        return name, table
    if len(mains) == 1:
        return mains[0][0].name, mains[0][1]
    return None


def _schema_mains(file: LogFile) -> dict[str, tuple[str, str | None]]:
    """``{run group: (main_name, main_split)}`` of a HELM schema (``schema.json`` or ``schema_*.yaml``)."""
    if file.base.endswith(".json"):
        doc = parse_json(file)
        groups = optional(doc, "run_groups", []) or []
        return {str(g["name"]): (str(optional(g, "environment.main_name")), optional(g, "environment.main_split"))
                for g in groups if isinstance(g, dict) and "name" in g and optional(g, "environment.main_name")}
    return _yaml_mains(file)


def _yaml_mains(file: LogFile) -> dict[str, tuple[str, str | None]]:
    """The run groups' main metrics of a ``schema_*.yaml``, read line by line (its layout is regular: under
    ``run_groups:`` items ``- name: <group>`` with ``environment:`` ``main_name: <metric>``, ``main_split:``)."""
    try:
        text = file.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvalDataError(f"{file.name}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    out: dict[str, tuple[str, str | None]] = {}
    inside, indent, group, main, split = False, None, None, None, None

    def keep() -> None:
        if group and main and main not in ("none", "null", "~"):
            out[group] = (main, split if split not in (None, "none", "null", "~") else None)

    for line in text.splitlines():
        if re.match(r"^\S", line):  # a top-level key
            if inside:
                keep()
            inside, indent, group, main, split = line.startswith("run_groups:"), None, None, None, None
            continue
        if not inside:
            continue
        item = re.match(r"^(\s*)- name:\s*['\"]?([^'\"#\s]+)", line)
        if item and (indent is None or len(item.group(1)) == indent):
            keep()
            indent, group, main, split = len(item.group(1)), item.group(2), None, None
            continue
        value = re.match(r"^\s+(main_name|main_split):\s*['\"]?([^'\"#\s]+)", line)
        if value and group:
            if value.group(1) == "main_name":
                main = value.group(2)
            else:
                split = value.group(2)
    if inside:
        keep()
    return out


def _run(folder: str, run: dict[str, LogFile], schema: tuple[str, dict] | None) -> Imported:
    # the folder as the user named it (``folder`` also holds the folders above a file given by path)
    given = next((str(PurePosixPath(f.name).parent) for f in run.values()), ".")
    where = given if given != "." else folder or "the upload"
    if STATS not in run:
        raise EvalDataError(f"{where}: a HELM run needs {STATS} (the per-instance results); only "
                            f"{', '.join(sorted(run))} {'was' if len(run) == 1 else 'were'} given. Upload the whole "
                            "run folder (or a zip of it).")
    spec = parse_json(run[SPEC]) if SPEC in run else {}
    state = parse_json(run[STATE]) if STATE in run else {}
    name = str(optional(spec, "name") or PurePosixPath(folder).name or "helm run")
    if ":" not in name and "-" in name.split("=", 1)[0] and "=" in name:
        name = name.replace("-", ":", 1)  # a folder copied where ':' is not allowed ("mmlu-subject=x,model=...")
    model = optional(state, "adapter_spec.model") or optional(spec, "adapter_spec.model")
    if model is None:
        found = _MODEL_PART.search(name)
        if found is None:
            raise EvalDataError(f"{where}: the model is not known: upload {STATE} or {SPEC} with {STATS}, or keep "
                                f"the run folder's name (HELM's '<scenario>:<args>,model=<org>_<model>').")
        model = found.group(2).replace("_", "/", 1)
    task = _MODEL_PART.sub("", name).strip(",") or name
    instances = parse_json(run[STATS])
    if not isinstance(instances, list):
        raise EvalDataError(f"{run[STATS].name}: expected a list of instances.")
    notes: list[str] = []
    unused = sorted(set(run) - {STATS, STATE, SPEC})
    if unused:
        notes.append(f"{where}: {', '.join(unused)} not needed (the results are in {STATS}).")
    groups = [str(g) for g in optional(spec, "groups", []) or []] or [re.match(r"[\w]*", task).group(0)]
    annotators = [str(optional(a, "class_name", a)).rsplit(".", 1)[-1] for a in optional(spec, "annotators") or []]
    imported = _instances(run[STATS], instances, str(model), task, _Run(spec, groups, annotators, schema), notes)
    if STATE in run:
        _add_texts(imported, run[STATE], state)
    imported.files = tuple(file.name for file in run.values())
    return imported


class _Run:
    """What decides a run's main metric: its run spec's metric names, its groups, its annotators, the schema."""

    def __init__(self, spec: Any, groups: list[str], annotators: list[str], schema: tuple[str, dict] | None):
        self.listed = [str(n) for metric in optional(spec, "metric_specs", []) or []
                       for n in optional(metric, "args.names", []) or []]
        self.groups, self.annotators, self.schema = groups, annotators, schema


def _instances(file: LogFile, instances: list, model: str, task: str, run: _Run, notes: list[str]) -> Imported:
    merged: dict[tuple[str, int], dict[tuple[str, str], float]] = {}
    perturbed: set[tuple[str, int, str]] = set()
    entries = 0
    for number, instance in enumerate(instances, 1):
        if not isinstance(instance, dict):
            raise EvalDataError(f"{file.name}: instance {number} is not a JSON object.")
        instance_id = str(field_of(instance, "instance_id", file, f"instance {number}"))
        trial = _trial(instance.get("train_trial_index"))
        if trial is None:
            raise EvalDataError(f"{file.name} (instance {number}): 'train_trial_index' is "
                                f"{instance.get('train_trial_index')!r}, not a whole number; it should count the "
                                "trials from 0.")
        if instance.get("perturbation"):
            perturbed.add((instance_id, trial, json.dumps(instance["perturbation"], sort_keys=True)))
            continue
        entries += 1
        values = merged.setdefault((instance_id, trial), {})
        stats = field_of(instance, "stats", file, f"instance {number}")
        for stat in stats if isinstance(stats, list) else []:
            key = stat.get("name", {}) if isinstance(stat, dict) else {}
            if not isinstance(key, dict) or key.get("perturbation") or "mean" not in stat:
                continue
            values.setdefault((str(key.get("name")), str(key.get("split"))), as_number(stat["mean"]))
    if not merged:
        raise EvalDataError(f"{file.name}: no instance without perturbation: nothing to evaluate.")
    if entries > len(merged):
        notes.append(f"{file.name}: {entries:,} entries for {len(merged):,} instances (HELM lists an instance once "
                     "per metric class, e.g. once with the judges' scores and once with generation statistics); "
                     "each instance's entries are merged into one row.")
    rows = [(key[0], key[1], values) for key, values in merged.items()]
    metric, split, why = _main(rows, run, file)
    frame = pd.DataFrame({"model": model, "task": task, "example_id": [r[0] for r in rows],
                          "repeat": [r[1] for r in rows]})
    value = pd.Series([r[2].get((metric, split), np.nan) for r in rows], dtype="float64")
    label, kind = _label(metric, value)
    frame[label] = value.to_numpy()
    notes.append(f"{file.name}: metric '{metric}' ({split} split) is the label ('{label}'): {why}; {kind}.")
    judged = _JUDGED.match(metric) is not None or (run.annotators and not _BINARY.match(metric)
                                                   and metric not in _METRICS)
    if judged:
        by = f" (annotators: {', '.join(run.annotators)})" if run.annotators else ""
        notes.append(f"{file.name}: the label '{metric}' comes from an LLM judge{by}, not from a comparison with a "
                     "reference answer: a model's rating, read as a score in [0, 1].")
    if perturbed:
        total = len(merged) + len(perturbed)
        notes.append(left_out_note(len(perturbed), total, f"instances of {file.name}",
                                   "perturbed variants (robustness / fairness), not the original instance"))
    missing = value.isna().to_numpy()
    if missing.any():
        other = sorted({s for r, m in zip(rows, missing) if m for (n, s) in r[2] if n == metric})
        why_missing = (f"'{metric}' only on the {', '.join(other)} split, not the {split} split" if other
                       else f"no '{metric}' value")
        notes.append(left_out_note(int(missing.sum()), len(frame), f"instances of {file.name}", why_missing))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(frame, "log", TOOL, (file.name,), notes)


def _trial(value: Any) -> int | None:
    """A ``train_trial_index`` as an int (0 when absent), None when it is not a whole number."""
    number = as_number(0 if value is None else value, booleans=False)
    return int(number) if np.isfinite(number) and number == int(number) else None


def _label(metric: str, value: pd.Series) -> tuple[str, str]:
    """``correct`` or ``score`` for the metric, and why."""
    zero_one = bool(value.dropna().isin((0.0, 1.0)).all())
    if _BINARY.match(metric):
        if zero_one:
            return "correct", "an exact-match metric, 0 or 1 per instance"
        return "score", "an exact-match metric, but some instances have a value other than 0 and 1 (a mean)"
    if _GRADED.match(metric) or _JUDGED.match(metric):
        return "score", "a graded metric (a value in a range, not right/wrong)"
    if zero_one:
        return "correct", "every value is 0 or 1"
    return "score", "its values are not all 0 or 1"


def _main(rows: list, run: _Run, file: LogFile) -> tuple[str, str, str]:
    """The run's main metric and split, and why it was chosen."""
    present: dict[tuple[str, str], int] = defaultdict(int)
    for _, _, values in rows:
        for key in values:
            present[key] += 1

    def found(name: str, split: str | None) -> str | None:
        for s in ((split,) if split else ()) + ("test", "valid"):
            if present.get((name, s), 0) >= len(rows) / 2:
                return s
        return None

    skipped: list[str] = []
    if run.schema is not None:
        schema_name, table = run.schema
        for group in run.groups:
            if group in table:
                name, split = table[group]
                where = found(name, split)
                if where:
                    return name, where, (f"HELM's main metric of the run group '{group}' (run_groups[].environment."
                                         f"main_name in {schema_name})")
                skipped.append(f"'{name}' (the main metric of '{group}' in {schema_name}) is not in the instances")
    for group in run.groups:
        key = _table_key(group)
        if key is None:
            continue
        for name in MAIN_METRICS[key]:
            where = found(name, None)
            if where:
                source = "no schema file was uploaded" if run.schema is None else "the schema does not name it"
                return name, where, (f"HELM's main metric of the run group '{group}' (evalcore's table copied from "
                                     f"HELM's schema_*.yaml run_groups[].environment.main_name; {source})")
        skipped.append(f"the main metric of '{group}' ({', '.join(MAIN_METRICS[key])}) is not in the instances")
    for name in run.listed:
        where = found(name, None)
        if where:
            return name, where, _fallback("the first metric its run spec lists that the instances have", skipped)
    for name in _METRICS:
        where = found(name, None)
        if where:
            return name, where, _fallback("the first known accuracy metric the instances have", skipped)
    judged = sorted({n for (n, s), count in present.items() if _JUDGED.match(n) and count >= len(rows) / 2
                     and s in ("test", "valid")})
    if judged:
        name = judged[0]
        return name, found(name, None) or "test", _fallback("an LLM judge's score the instances have", skipped)
    raise EvalDataError(f"{file.name}: no instance has a known accuracy metric ({', '.join(_METRICS[:4])} ...) or "
                        f"judge score on the test or valid split; the main metric of the run group(s) "
                        f"{', '.join(run.groups)} is not known: upload HELM's schema.json (written by helm-summarize "
                        "beside the run folders) with the run.")


def _fallback(why: str, skipped: list[str]) -> str:
    return why + (f" ({'; '.join(skipped)})" if skipped else " (no main metric is known for its run group)")


def _table_key(group: str) -> str | None:
    """The key of :data:`MAIN_METRICS` for a run group: the group itself, else the longest key it starts with."""
    if group in MAIN_METRICS:
        return group
    keys = [key for key in MAIN_METRICS if group.startswith(key + "_")]
    return max(keys, key=len) if keys else None


def _add_texts(imported: Imported, file: LogFile, state: Any) -> None:
    """``input``, ``target`` and ``output`` from the scenario state's request states (joined on instance id and
    trial; perturbed variants are not joined)."""
    texts: dict[tuple[str, int], tuple[str | None, str | None, str | None]] = {}
    states = optional(state, "request_states", []) or []
    for request_state in states if isinstance(states, list) else []:
        instance = optional(request_state, "instance")
        if not isinstance(instance, dict) or instance.get("perturbation") or "id" not in instance:
            continue
        trial = _trial(request_state.get("train_trial_index"))
        if trial is None:
            continue
        key = (str(instance["id"]), trial)
        if key in texts:
            continue
        question = optional(instance, "input.text")
        references = [r for r in instance.get("references") or [] if isinstance(r, dict)]
        mapping = request_state.get("output_mapping") if isinstance(request_state.get("output_mapping"), dict) else {}
        letter = {str(text): str(letter) for letter, text in mapping.items()}
        if mapping and isinstance(question, str):
            question = question + "\n" + "\n".join(f"{k}. {v}" for k, v in mapping.items())
        correct = []
        for reference in references:
            text = optional(reference, "output.text")
            if "correct" in (reference.get("tags") or []) and isinstance(text, str):
                correct.append(f"{letter[text]}. {text}" if text in letter else text)
        completions = optional(request_state, "result.completions", []) or []
        output = optional(completions[0], "text") if completions and not request_state.get("request_mode") else None
        texts[key] = (question if isinstance(question, str) else None, "\n".join(correct) if correct else None,
                      output if isinstance(output, str) else None)
    if not texts:
        return
    frame = imported.frame
    keys = list(zip(frame["example_id"], frame["repeat"]))
    for position, role in enumerate(("input", "target", "output")):
        values = [texts.get(key, (None, None, None))[position] for key in keys]
        if any(v is not None for v in values):
            frame[role] = pd.Series(values, dtype="object", index=frame.index)
    unmatched = sum(key not in texts for key in keys)
    if unmatched:
        imported.notes.append(f"{file.name}: {unmatched:,} of {len(keys):,} instances have no request state: no "
                              "text for them.")
