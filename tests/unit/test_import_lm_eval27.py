"""lm-evaluation-harness (issue 27): samples pair only with their own run's results file, folders name models, and
the example's text (evalcore.importers.lm_eval).

Fixtures are written here in the shape lm-eval writes (EleutherAI/lm-evaluation-harness
``lm_eval/loggers/evaluation_tracker.py``: ``<output_path>/<org>__<name>/results_<time>.json`` and
``samples_<task>_<time>.jsonl``; ``lm_eval/evaluator.py``: a samples line's ``arguments``, ``resps``, ``target``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of

T1 = "2025-03-01T10-00-00.123456"
T2 = "2025-03-02T11-30-00.654321"


def _gen_line(doc_id: int, correct: float, question: str = "2+2?", answer: str = "4", said: str = " 4") -> dict:
    """A generate_until line as newer lm-eval versions write it (arguments as gen_args_<i>.arg_<j>)."""
    return {"doc_id": doc_id, "doc": {"question": question}, "target": answer,
            "arguments": {"gen_args_0": {"arg_0": f"Q: {question}\nA:", "arg_1": {"until": ["\n"]}}},
            "resps": [[said]], "filtered_resps": [said.strip()], "filter": "none", "metrics": ["exact_match"],
            "exact_match": correct}


def _lines(rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def _results(model: str | None) -> bytes:
    doc = {"results": {"arith": {"alias": "arith", "exact_match,none": 0.5}},
           "n-samples": {"arith": {"original": 2, "effective": 2}},
           "config": {"model": "hf", "model_args": f"pretrained={model}" if model else ""}}
    if model:
        doc["model_name"] = model
    return json.dumps(doc).encode()


def _notes(frame) -> list[str]:
    return list(report_of(frame).notes)


def test_two_runs_each_pair_with_their_own_samples_by_timestamp():
    # both runs in one folder that names no model: only the time stamps tell them apart
    files = [(f"out/samples_arith_{T1}.jsonl", _lines([_gen_line(0, 1.0), _gen_line(1, 1.0)])),
             (f"out/results_{T1}.json", _results("org/a")),
             (f"out/samples_arith_{T2}.jsonl", _lines([_gen_line(0, 0.0), _gen_line(1, 1.0)])),
             (f"out/results_{T2}.json", _results("org/b"))]
    frame = load_eval_logs(files)
    assert frame.groupby("model")["correct"].sum().to_dict() == {"org/a": 2.0, "org/b": 1.0}
    assert not any("timestamps differ" in n for n in _notes(frame))


def test_another_runs_results_file_gives_no_model_the_folder_does():
    # a model folder holding the samples of run T1 and the results of run T2 of the same model
    files = [(f"org__model-7b/samples_arith_{T1}.jsonl", _lines([_gen_line(0, 1.0), _gen_line(1, 0.0)])),
             (f"org__model-7b/results_{T2}.json", _results("org/some-other-name"))]
    frame = load_eval_logs(files)
    assert frame["model"].tolist() == ["org/model-7b", "org/model-7b"] and frame["correct"].sum() == 1.0
    notes = _notes(frame)
    assert any(f"org__model-7b/samples_arith_{T1}.jsonl is not from the run of org__model-7b/results_{T2}.json "
               "(timestamps differ): its model is taken from its folder 'org__model-7b'" in n for n in notes)
    assert any(f"results_{T2}.json: not used" in n for n in notes)


def test_another_runs_results_file_and_no_model_folder_is_refused_naming_both():
    files = [(f"samples_arith_{T1}.jsonl", _lines([_gen_line(0, 1.0)])), (f"results_{T2}.json", _results("org/b"))]
    with pytest.raises(EvalDataError, match=rf"samples_arith_{T1}\.jsonl is not from the run of results_{T2}\.json "
                                            r"\(timestamps differ\).*results_" + T1):
        load_eval_logs(files, strict=True)
    # by default the samples file is left out, with a warning naming both files, and the results file is read
    frame = load_eval_logs(files)
    assert report_of(frame).kind == "summary" and frame["model"].unique().tolist() == ["org/b"]
    assert any(w.startswith(f"samples_arith_{T1}.jsonl was left out: ") and f"results_{T2}.json" in w
               for w in report_of(frame).warnings)


def test_a_samples_file_alone_takes_its_model_folder():
    frame = load_eval_log((f"meta-llama__Llama-3.1-8B/samples_arith_{T1}.jsonl", _lines([_gen_line(0, 1.0)])))
    assert frame["model"].tolist() == ["meta-llama/Llama-3.1-8B"]
    assert any("named after its folder 'meta-llama__Llama-3.1-8B'" in n for n in _notes(frame))


def test_a_samples_file_given_by_path_keeps_its_folder_on_disk(tmp_path: Path):
    folder = tmp_path / "lm_eval_out" / "EleutherAI__pythia-160m"
    folder.mkdir(parents=True)
    path = folder / f"samples_arith_{T1}.jsonl"
    path.write_bytes(_lines([_gen_line(0, 0.0), _gen_line(1, 1.0), _gen_line(2, 1.0)]))
    frame = load_eval_logs([path])
    assert set(frame["model"]) == {"EleutherAI/pythia-160m"} and frame["correct"].sum() == 2.0


@pytest.mark.parametrize("name", [f"samples_arith_{T1}.jsonl", f"outputs/samples_arith_{T1}.jsonl",
                                  f"lm_eval/samples_arith_{T1}.jsonl"])
def test_no_model_folder_means_unknown_model_with_a_note(name):
    frame = load_eval_log((name, _lines([_gen_line(0, 1.0)])))
    assert frame["model"].tolist() == ["unknown model"]
    assert any("no folder names its model" in n for n in _notes(frame))


def test_a_renamed_samples_file_pairs_with_the_only_results_file_of_its_folder():
    files = [("run/renamed.jsonl", _lines([_gen_line(0, 1.0)])), (f"run/results_{T2}.json", _results("org/a"))]
    frame = load_eval_logs(files)
    assert frame["model"].tolist() == ["org/a"]
    assert any("same folder" in n for n in _notes(frame))


def test_same_timestamp_in_two_model_folders_pairs_within_the_folder():
    files = [(f"org__a/samples_arith_{T1}.jsonl", _lines([_gen_line(0, 1.0)])),
             (f"org__a/results_{T1}.json", _results("org/a")),
             (f"org__b/samples_arith_{T1}.jsonl", _lines([_gen_line(0, 0.0)])),
             (f"org__b/results_{T1}.json", _results("org/b"))]
    frame = load_eval_logs(files)
    assert dict(zip(frame["model"], frame["correct"])) == {"org/a": 1.0, "org/b": 0.0}


def test_generation_text_roles():
    line = _gen_line(7, 0.0, question="What is 3 * 3?", answer="9", said=" 6, I think.")
    frame = load_eval_log((f"samples_arith_{T1}.jsonl", _lines([line])))
    row = frame.iloc[0]
    assert row["input"] == "Q: What is 3 * 3?\nA:"
    assert row["target"] == "9"
    assert row["output"] == " 6, I think."   # the response as generated (resps), not the filtered answer


def test_multiple_choice_text_roles_newer_and_older_arguments():
    newer = {"doc_id": 0, "doc": {}, "target": "1", "filter": "none", "metrics": ["acc"], "acc": 0.0,
             "arguments": {"gen_args_0": {"arg_0": "Sky is", "arg_1": " green"},
                           "gen_args_1": {"arg_0": "Sky is", "arg_1": " blue"}},
             "resps": [[[-1.0, True]], [[-2.0, False]]], "filtered_resps": [[-1.0, True], [-2.0, False]]}
    older = {"doc_id": 1, "doc": {}, "target": 0, "filter": "none", "metrics": ["acc"], "acc": 1.0,
             "arguments": [["Grass is", " green"], ["Grass is", " blue"]],
             "resps": [[[-0.5, True]], [[-3.0, False]]], "filtered_resps": [[-0.5, True], [-3.0, False]]}
    frame = load_eval_log((f"samples_colors_{T1}.jsonl", _lines([newer, older])))
    assert frame["input"].tolist() == ["Sky is", "Grass is"]
    assert frame["target"].tolist() == [" blue", " green"]    # the gold choice's continuation, not its index
    assert frame["output"].tolist() == [" green", " green"]   # the most likely choice
    assert frame["correct"].tolist() == [0.0, 1.0]


def test_a_line_without_arguments_takes_the_docs_question():
    line = {"doc_id": 0, "doc": {"question": "Capital of France?"}, "target": "Paris", "filter": "none",
            "resps": [["Paris"]], "filtered_resps": ["Paris"], "metrics": ["exact_match"], "exact_match": 1.0}
    frame = load_eval_log((f"samples_geo_{T1}.jsonl", _lines([line])))
    assert frame[["input", "target", "output"]].iloc[0].tolist() == ["Capital of France?", "Paris", "Paris"]
