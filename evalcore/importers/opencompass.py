"""OpenCompass outputs that hold no per-example verdict: recognised, and refused with a message saying what they are
and what to upload instead. evalcore reads no OpenCompass file as a log (``READS_LOGS``): no per-example results file
of OpenCompass was found in public repositories to build a reader on (its ``results/<model>/<dataset>.json`` with
``details``, written with ``--dump-eval-details``).

Formats (open-compass/opencompass, ``outputs/<config>/<time>/``):

- ``predictions/<model>/<dataset>.json``: ``{"0": {"origin_prompt", "prediction", "gold"}, "1": ...}``
  (``opencompass/openicl/icl_inferencer/icl_base_inferencer.py``, ``GenInferencerOutputHandler.save_results`` and
  ``dump_results_dict``, ``json.dump(..., indent=4)``; ``gold`` only where the dataset has a reference, a judge's
  predictions in subjective evaluation the same): the model's outputs and the references, never a verdict —
  OpenCompass scores them in its evaluation step, so these files cannot say which answers were right.
- ``summary/summary_<time>.csv``: ``dataset, version, metric, mode`` then one column per model
  (``opencompass/summarizers/default.py``, ``header = ['dataset', 'version', 'metric', 'mode'] + model_abbrs``): one
  score per dataset and model (a percentage, ``-`` where none), without the number of examples behind it. Aggregates
  without example counts: refused, never reshaped into one row per model as if each score were an example
  (evalcore's handling of such tables, :func:`evalcore.data.validation._refuse_aggregates`).
"""

from __future__ import annotations

import re

from evalcore.errors import EvalDataError, listed
from evalcore.importers.base import Imported, LogFile, header_cells

TOOL = "OpenCompass"
#: evalcore reads no OpenCompass file as a log: the files claimed here are refused (evalcore.importers.detect)
READS_LOGS = False
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


def convert(files: list[LogFile]) -> list[Imported]:
    """Refuse the first file (each of several is left out with its reason, the others read: detect's rule)."""
    from evalcore.importers.detect import tools_read

    file = files[0]
    header = _summary_header(file)
    if header is not None:
        raise EvalDataError(
            f"{file.name}: an OpenCompass summary (summary_<time>.csv: dataset, version, metric, mode, then one column "
            f"per model: {listed(header[4:], 4, repr)}): one score per dataset and model, aggregates without example "
            "counts, not per-example results; evalcore never reads them as examples. Upload per-example results "
            f"instead ({tools_read()}), or, to compare these scores, write them as a leaderboard summary with one row "
            "per model and dataset: model, task, accuracy (a proportion) and n (the examples behind it).")
    raise EvalDataError(
        f"{file.name}: OpenCompass predictions (predictions/<model>/<dataset>.json: each example's prompt, the model's "
        "prediction and the reference, 'gold'): they hold no verdict per example — OpenCompass scores them in its "
        "evaluation step — so they cannot say which answers were right. evalcore does not read OpenCompass's "
        f"evaluation results; {tools_read()}, and tables: write each example's verdict as a table (model, example_id, "
        "correct or score).")
