"""OpenCompass outputs (open-compass/opencompass, ``outputs/<config>/<time>/``): its predictions read as a log of the
model's outputs alone, its summaries refused.

- ``predictions/<model>/<dataset>.json``: ``{"0": {"origin_prompt", "prediction", "gold"}, "1": ...}``
  (``opencompass/openicl/icl_inferencer/icl_base_inferencer.py``, ``GenInferencerOutputHandler.save_results`` and
  ``dump_results_dict``, ``json.dump(..., indent=4)``; ``gold`` only where the dataset has a reference): the model's
  outputs and the references, never a verdict (OpenCompass scores them in its evaluation step). Read as a log of
  outputs (:func:`convert`): one row per example, ``model`` the folder above the file (else the file's name, with a
  note; ``--model NAME`` renames it), ``task`` the dataset (the file's stem), ``example_id`` the key, ``input`` the
  prompt (a chat prompt's turns as "role: text" lines), ``output`` the prediction, ``target`` the reference; a
  ``gold`` that is an object of one text (a subjective set's ``{"capability": ...}``) is the example's ``group``.
  Such a log has no verdict: it is what a labeling or comparison campaign starts from (the Label page judges the
  outputs), and the pages that need a verdict say so.
- ``summary/summary_<time>.csv``: ``dataset, version, metric, mode`` then one column per model
  (``opencompass/summarizers/default.py``, ``header = ['dataset', 'version', 'metric', 'mode'] + model_abbrs``): one
  score per dataset and model (a percentage, ``-`` where none), without the number of examples behind it. Aggregates
  without example counts: refused, never reshaped into one row per model as if each score were an example
  (evalcore's handling of such tables, :func:`evalcore.data.validation._refuse_aggregates`).
- ``results/<model>/<dataset>.json`` (the scores, with ``details`` per example under ``--dump-eval-details``): no
  public file was found to build a reader on; it is not claimed here.
"""

from __future__ import annotations

import re

import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.importers.base import Imported, LogFile, header_cells, parse_json
from evalcore.importers.chat_text import text_of
from evalcore.importers.combine import run_name

TOOL = "OpenCompass"
_SUMMARY_HEADER = ("dataset", "version", "metric", "mode")
#: a predictions file: an object keyed by the example's number whose first value opens with origin_prompt
_PREDICTIONS = re.compile(rb'^\{\s*"\d+"\s*:\s*\{\s*"origin_prompt"\s*:')


def _summary_header(file: LogFile) -> list[str] | None:
    """The header of an OpenCompass summary CSV (``dataset, version, metric, mode, <models>``), or None."""
    header = header_cells(file)
    if len(header) > 4 and tuple(cell.lower() for cell in header[:4]) == _SUMMARY_HEADER:
        return header
    return None


def sniff(file: LogFile) -> bool:
    """An OpenCompass predictions file (``{"0": {"origin_prompt": ...`` ) or summary CSV (header ``dataset,
    version, metric, mode`` and at least one model)."""
    try:
        return bool(_PREDICTIONS.match(file.head(256))) or _summary_header(file) is not None
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _text(value) -> str | None:
    """A prompt, prediction or reference as text: a string as it is (an empty prediction is an answer too), a chat
    prompt's turns (``{"role", "prompt"}``) as messages, anything else as :func:`.chat_text.text_of` writes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(turn, dict) and "prompt" in turn for turn in value):
        value = [{"role": turn.get("role"), "content": turn.get("prompt")} for turn in value]
    return text_of(value)


def _predictions(file: LogFile) -> Imported:
    """One predictions file as a log of outputs (module docstring)."""
    doc = parse_json(file)
    if not isinstance(doc, dict) or not doc or not all(isinstance(v, dict) for v in doc.values()):
        raise EvalDataError(f"{file.name}: an OpenCompass predictions file holds one object per example, keyed by "
                            "its number ({\"0\": {\"origin_prompt\": ..., \"prediction\": ...}}); this one does not.")
    folders = [part for part in file.folder.split("/") if part]
    named = bool(folders) and folders[-1] != "predictions"
    dataset = run_name(file.name)  # the file's stem, compressed or not
    model = folders[-1] if named else dataset
    notes = [] if named else [f"{file.name}: OpenCompass names the model by the folder above its predictions "
                              f"(predictions/<model>/); the file came without it, so the model is named {model!r} "
                              "(--model NAME renames it)."]
    rows = []
    for key, record in doc.items():
        gold = record.get("gold")
        category = None
        if isinstance(gold, dict) and len(gold) == 1 and isinstance(next(iter(gold.values())), str):
            category, gold = next(iter(gold.values())), None
        rows.append({"model": model, "task": dataset, "example_id": str(key),
                     "input": _text(record.get("origin_prompt")), "output": _text(record.get("prediction")),
                     "target": _text(gold), "group": category})
    frame = pd.DataFrame(rows).dropna(axis=1, how="all")
    notes.append(f"{file.name}: OpenCompass predictions of {model!r} on {dataset!r} "
                 f"({len(rows):,} examples): the outputs and references, without a verdict (OpenCompass scores them "
                 "in its evaluation step): judge them on the Label page, or compare models there.")
    return Imported(frame, "log", TOOL, (file.name,), notes, model_from_file=not named)


def convert(files: list[LogFile]) -> list[Imported]:
    """Each predictions file read as a log of outputs; a summary refused (module docstring)."""
    from evalcore.importers.detect import tools_read

    out = []
    for file in files:
        header = _summary_header(file)
        if header is not None:
            raise EvalDataError(
                f"{file.name}: an OpenCompass summary (summary_<time>.csv: dataset, version, metric, mode, then one "
                f"column per model: {listed(header[4:], 4, repr)}): one score per dataset and model, aggregates "
                "without example counts, not per-example results; evalcore never reads them as examples. Upload "
                f"per-example results instead ({tools_read()}), or, to compare these scores, write them as a "
                "leaderboard summary with one row per model and dataset: model, task, accuracy (a proportion) and n "
                "(the examples behind it).")
        out.append(_predictions(file))
    return out
