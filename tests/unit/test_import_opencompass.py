"""OpenCompass outputs without a per-example verdict (issue 49, item 5b): recognised and refused, saying what they
are and what to upload; never read as examples (a summary is never reshaped into one row per model).

``tests/data/ecosystem49/opencompass/predictions/qwen-7b-chat-hf/COREV2_6A_.json`` is real: OpenCompass's
predictions of qwen-7b-chat-hf committed to open-compass/opencompass at 24ff18a0 (see ../SOURCES.md). No public
summary_<time>.csv was found: the summary's refusal is tested on tables in the layout OpenCompass's summarizer writes
(``opencompass/summarizers/default.py``: ``['dataset', 'version', 'metric', 'mode'] + model_abbrs``, scores as
``{:.02f}``, ``-`` where a model has none).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.data.validation import load_eval_logs
from evalcore.errors import EvalDataError
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of, tools_read

PREDICTIONS = (Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "opencompass" / "predictions" /
               "qwen-7b-chat-hf" / "COREV2_6A_.json")
SUMMARY = ("dataset,version,metric,mode,qwen-7b-chat-hf,baichuan2-7b-chat-hf\n"
           "gsm8k,1d7fe4,accuracy,gen,51.25,28.43\nceval-law,a110a1,accuracy,gen,29.17,-\n"
           "ceval,-,naive_average,gen,47.03,45.10\n")


def test_real_predictions_are_recognised_and_refused():
    assert tool_of(LogFile(PREDICTIONS.name, PREDICTIONS.read_bytes())) == "OpenCompass"
    with pytest.raises(EvalDataError) as refused:
        load_eval_logs([PREDICTIONS])
    message = str(refused.value)
    assert message.startswith("COREV2_6A_.json: OpenCompass predictions (predictions/<model>/<dataset>.json: each "
                              "example's prompt, the model's prediction and the reference, 'gold'): they hold no "
                              "verdict per example")
    assert tools_read() in message and "OpenCompass," not in tools_read()


@pytest.mark.parametrize("models", [1, 2])
def test_a_summary_is_refused_as_aggregates_never_melted(models):
    text = "\n".join(",".join(line.split(",")[:4 + models]) for line in SUMMARY.splitlines()) + "\n"
    with pytest.raises(EvalDataError) as refused:
        load_eval_logs([("summary_20240121_204929.csv", text.encode())])
    message = str(refused.value)
    assert message.startswith("summary_20240121_204929.csv: an OpenCompass summary (summary_<time>.csv: dataset, "
                              "version, metric, mode, then one column per model: 'qwen-7b-chat-hf'")
    assert "aggregates without example counts" in message and "melt" not in message


def test_beside_a_log_the_opencompass_files_are_left_out_with_a_warning(tmp_path):
    ragas = Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "ragas" / "ragas_results.json"
    frame = load_eval_logs([ragas, PREDICTIONS, ("summary_1.csv", SUMMARY.encode())])
    assert set(frame["model"]) == {"ragas_results"}
    warnings = frame.attrs["report"]["warnings"]
    assert any(w.startswith(f"{PREDICTIONS} was left out: OpenCompass predictions") for w in warnings), warnings
    assert any(w.startswith("summary_1.csv was left out: an OpenCompass summary") for w in warnings), warnings
