"""OpenCompass outputs (issue 49, item 5b): predictions read as a log of the model's outputs (the start of a labeling
or comparison campaign: they hold no verdict), summaries refused as aggregates (never reshaped into one row per
model).

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
from evalcore.importers.detect import tool_of

PREDICTIONS = (Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "opencompass" / "predictions" /
               "qwen-7b-chat-hf" / "COREV2_6A_.json")
SUMMARY = ("dataset,version,metric,mode,qwen-7b-chat-hf,baichuan2-7b-chat-hf\n"
           "gsm8k,1d7fe4,accuracy,gen,51.25,28.43\nceval-law,a110a1,accuracy,gen,29.17,-\n"
           "ceval,-,naive_average,gen,47.03,45.10\n")


def test_real_predictions_are_read_as_the_models_outputs():
    """The real file: 8 examples of qwen-7b-chat-hf (the folder above the file) on COREV2_6A_ (its stem); the
    prompt, the prediction literally; the subjective set's {"capability": ...} as each example's group; no verdict,
    said."""
    import json

    assert tool_of(LogFile(PREDICTIONS.name, PREDICTIONS.read_bytes())) == "OpenCompass"
    frame = load_eval_logs([PREDICTIONS])
    doc = json.loads(PREDICTIONS.read_text(encoding="utf-8"))
    assert set(frame["model"]) == {"qwen-7b-chat-hf"} and set(frame["task"]) == {"COREV2_6A_"}
    assert frame["example_id"].tolist() == list(doc)
    assert frame["output"].tolist() == [r["prediction"] for r in doc.values()]
    assert frame["input"].tolist() == [r["origin_prompt"] for r in doc.values()]
    assert frame["group"].tolist() == [r["gold"]["capability"] for r in doc.values()]
    assert not {"correct", "score"} & set(frame.columns)
    notes = frame.attrs["report"]["notes"]
    assert any("OpenCompass predictions of 'qwen-7b-chat-hf' on 'COREV2_6A_' (8 examples)" in n for n in notes)


def test_two_models_predictions_start_a_comparison_and_a_file_alone_is_named_after_itself(tmp_path):
    """The same dataset's predictions of two models (folders a and b, 24 examples made of the real file's records;
    b's predictions differ on half of them):
    one log of both models' outputs, whose comparison pool sees where they differ; a file given without its folder
    names its model after the file, with a note, and --model renames it."""
    import json

    from evalcore.labeling.difference import comparison_pool

    real = list(json.loads(PREDICTIONS.read_text(encoding="utf-8")).values())
    doc = {str(k): real[k % len(real)] for k in range(24)}  # the real records three times: 24 examples
    other = {k: {**r, "prediction": r["prediction"] + (" (b)" if int(k) % 2 else "")} for k, r in doc.items()}
    for model, content in (("a", doc), ("b", other)):
        (tmp_path / "predictions" / model).mkdir(parents=True)
        (tmp_path / "predictions" / model / "gsm8k.json").write_text(json.dumps(content, ensure_ascii=False, indent=4),
                                                                   encoding="utf-8")
    frame = load_eval_logs([tmp_path / "predictions" / m / "gsm8k.json" for m in ("a", "b")])
    assert sorted(frame["model"].unique()) == ["a", "b"] and len(frame) == 2 * len(doc)
    pool = comparison_pool(frame, ["a", "b"])
    assert (pool.patterns != "all agree").sum() == len(doc) // 2
    alone = load_eval_logs([("gsm8k.json", PREDICTIONS.read_bytes())])
    assert set(alone["model"]) == {"gsm8k"}
    assert any("the model is named 'gsm8k' (--model NAME renames it)" in n for n in alone.attrs["report"]["notes"])


@pytest.mark.parametrize("models", [1, 2])
def test_a_summary_is_refused_as_aggregates_never_melted(models):
    text = "\n".join(",".join(line.split(",")[:4 + models]) for line in SUMMARY.splitlines()) + "\n"
    with pytest.raises(EvalDataError) as refused:
        load_eval_logs([("summary_20240121_204929.csv", text.encode())])
    message = str(refused.value)
    assert message.startswith("summary_20240121_204929.csv: an OpenCompass summary (summary_<time>.csv: dataset, "
                              "version, metric, mode, then one column per model: 'qwen-7b-chat-hf'")
    assert "aggregates without example counts" in message and "melt" not in message


def test_beside_a_log_an_opencompass_summary_is_left_out_with_a_warning():
    ragas = Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "ragas" / "ragas_results.json"
    frame = load_eval_logs([ragas, ("summary_1.csv", SUMMARY.encode())])
    assert set(frame["model"]) == {"ragas_results"}
    warnings = frame.attrs["report"]["warnings"]
    assert any(w.startswith("summary_1.csv was left out: an OpenCompass summary") for w in warnings), warnings
