"""Inspect AI logs (evalcore.importers.inspect): real files and small logs written after Inspect's format."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import crafted

from benchmarks.inspect_log import make_eval_log
from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers import inspect
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of


@pytest.fixture(scope="module")
def folder(shared_data: Path) -> Path:
    path = shared_data / "ecosystem" / "inspect_ai"
    if not path.is_dir():
        pytest.skip("../shared/data/ecosystem/inspect_ai not present")
    return path


def _json_log(samples: list[dict], scorers=("match",), model="m/x", task="t") -> bytes:
    return json.dumps({"version": 2, "status": "success",
                       "eval": {"task": task, "model": model, "scorers": [{"name": s} for s in scorers]},
                       "results": {"scores": [{"name": s, "scorer": s} for s in scorers]},
                       "samples": samples}).encode()


def _sample(i, epoch=1, **scores) -> dict:
    return {"id": i, "epoch": epoch, "scores": {k: {"value": v} for k, v in scores.items()}}


def test_real_eval_zip_matches_its_header_accuracy(folder):
    frame = load_eval_log(folder / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval")
    assert set(frame["model"]) == {"openai/gpt-4o-mini"} and set(frame["task"]) == {"popularity"}
    assert len(frame) == 10 and frame["correct"].mean() == pytest.approx(0.8)  # header: accuracy 0.8
    assert sorted(frame["example_id"], key=int) == [str(i) for i in range(1, 11)]


def test_real_json_logs_of_two_models_combine(folder):
    frame = load_eval_logs([folder / "data_arc_qwen.json", folder / "data_arc_sonnet.json"])
    means = frame.groupby("model")["correct"].agg(["mean", "size"])
    assert means.loc["ollama/qwen2.5:0.5b"].tolist() == pytest.approx([1 / 3, 3])  # results: accuracy 0.333
    assert means.loc["anthropic/claude-sonnet-4-0"].tolist() == pytest.approx([1.0, 5])
    assert "Read Inspect AI (2 files)." in report_of(frame).notes


def test_sniff_claims_inspect_files_only(folder, shared_data):
    for path in folder.iterdir():
        assert tool_of(LogFile(path.name, path.read_bytes())) == "Inspect AI"
    other = shared_data / "ecosystem" / "promptfoo" / "sample-export.json"
    if other.is_file():
        assert not inspect.sniff(LogFile(other.name, other.read_bytes()))
    assert not inspect.sniff(LogFile("t.jsonl", b'{"model": "a", "example_id": "1", "correct": 1}\n'))


def test_score_letters_epochs_and_judge_scorer():
    samples = [_sample(1, 1, match="C", model_graded_qa="C"), _sample(1, 2, match="I", model_graded_qa="P"),
               _sample(2, 1, match="P", model_graded_qa="I"), _sample(2, 2, match="N", model_graded_qa="C"),
               _sample(3, 1, model_graded_qa="C")]  # no value of the main scorer: left out
    frame = load_eval_log(("log.json", _json_log(samples, scorers=("match", "model_graded_qa"))))
    assert frame["score"].tolist() == [1.0, 0.0, 0.5, 0.0]   # P is partial credit: a score, not 0/1
    assert frame["proxy"].tolist() == [1.0, 0.5, 0.0, 1.0]
    assert frame["repeat"].tolist() == ["1", "2", "1", "2"]
    notes = report_of(frame).notes
    assert any("1 of 5 samples of log.json were left out" in n for n in notes)
    assert any("'model_graded_qa' is the annotator" in n for n in notes)


def test_dict_scores_numbers_and_version_1_score():
    samples = [{"id": "a", "epoch": 1, "scores": {"s": {"value": {"acc": 1, "f1": 0.5}}}},
               {"id": "b", "epoch": 1, "scores": {"s": {"value": {"acc": 0, "f1": 0.25}}}}]
    frame = load_eval_log(("d.json", _json_log(samples, scorers=("s",))))
    assert frame["correct"].tolist() == [1.0, 0.0] and frame["score_s/f1"].tolist() == [0.5, 0.25]
    v1 = [{"id": 1, "epoch": 1, "score": {"value": 0.7}}, {"id": 2, "epoch": 1, "score": {"value": 0.2}}]
    assert load_eval_log(("v1.json", _json_log(v1)))["score"].tolist() == [0.7, 0.2]


def test_a_log_without_samples_is_refused_saying_why():
    data = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"},
                       "results": {}}).encode()
    with pytest.raises(EvalDataError, match=r"nosamples\.json: .*no per-sample results.*--no-log-samples"):
        load_eval_log(("nosamples.json", data))


def test_truncated_and_incomplete_logs_name_the_file():
    data = _json_log([_sample(1, match="C")])
    with pytest.raises(EvalDataError, match=r"cut\.json: not valid JSON"):
        load_eval_log(("cut.json", data[: len(data) - 30]))
    no_model = json.dumps({"version": 2, "status": "error", "eval": {"task": "t"},
                           "samples": [_sample(1, match="C")]}).encode()
    with pytest.raises(EvalDataError, match=r"nomodel\.json \(eval\): the field 'model' is missing"):
        load_eval_log(("nomodel.json", no_model))
    zipped = make_eval_log(20)
    with pytest.raises(EvalDataError, match=r"cut\.eval"):
        load_eval_log(("cut.eval", zipped[: len(zipped) // 2]))


def test_eval_zip_with_and_without_summaries_agree():
    full = load_eval_log(("a.eval", make_eval_log(300, epochs=2, seed=4)))
    bare = load_eval_log(("a.eval", make_eval_log(300, epochs=2, seed=4, summaries=False)))
    assert len(full) == 600 and full["repeat"].nunique() == 2
    key = ["example_id", "repeat"]
    assert full.sort_values(key)["correct"].tolist() == bare.sort_values(key)["correct"].tolist()


def test_eval_zip_with_zstandard_members_reads_as_the_deflated_one(folder):
    """Inspect writes .eval members with Zstandard (zip method 93) by default since 0.3.206 (its CHANGELOG)."""
    path = folder / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    zstd = crafted.zstd_zip(members)
    assert zipfile.ZipFile(io.BytesIO(zstd)).infolist()[0].compress_type == 93
    assert tool_of(LogFile(path.name, zstd)) == "Inspect AI"
    frame = load_eval_log((path.name, zstd))
    assert len(frame) == 10 and frame["correct"].mean() == pytest.approx(0.8)  # header: accuracy 0.8
    assert frame.drop(columns=[]).equals(load_eval_log(path))


def test_an_unscored_log_says_so_and_how_to_score_it():
    samples = [{"id": i, "epoch": 1, "scores": {}} for i in (1, 2, 3)]

    def log() -> bytes:
        return crafted.zstd_zip({"header.json": json.dumps({
            "version": 2, "status": "success", "eval": {"task": "t", "model": "m/x", "scorers": [{"name": "match"}]},
            "results": {"total_samples": 3, "completed_samples": 3, "scores": []}}).encode(),
            **{f"samples/{s['id']}_epoch_1.json": json.dumps(s).encode() for s in samples}})

    with pytest.raises(EvalDataError, match=r"^run\.eval: none of its 3 samples has a score and none errored: the "
                                            r"run was not scored \(the task declares 'match'\).*inspect score"):
        load_eval_log(("run.eval", log()))
    samples[0]["error"] = {"message": "boom"}
    with pytest.raises(EvalDataError, match=r"none of its 3 samples has a score \(1 of them errored\): .*did every "
                                            r"sample fail"):
        load_eval_log(("run.eval", log()))


def test_separate_runs_of_one_task_and_model_are_further_repeats_and_a_reupload_counts_once():
    def run(eval_id: str, values: list[str]) -> bytes:
        doc = json.loads(_json_log([_sample(i, match=v) for i, v in enumerate(values, 1)]))
        doc["eval"]["eval_id"] = eval_id
        return json.dumps(doc).encode()

    first, second = run("AAA", ["C", "I", "C"]), run("BBB", ["I", "I", "C"])
    frame = load_eval_logs([("a.json", first), ("b.json", second)], min_models=1)
    assert len(frame) == 6 and sorted(frame["repeat"].astype(int).unique()) == [1, 2]
    by = frame.assign(repeat=frame["repeat"].astype(int)).set_index(["example_id", "repeat"])["correct"]
    assert [by[("1", 1)], by[("1", 2)], by[("2", 2)]] == [1.0, 0.0, 0.0]
    assert any(n.startswith("b.json and a.json are separate runs (run ids BBB and AAA) scoring the same examples: the "
                            "samples of 3 rows are numbered as further repeats") for n in report_of(frame).notes)
    again = load_eval_logs([("a.json", first), ("copy of a.json", first)], min_models=1)  # one run twice
    assert len(again) == 3 and "3 rows appear identically in several files" in " ".join(report_of(again).notes)


def test_a_failed_run_and_a_placeholder_model_are_named():
    doc = json.loads(_json_log([{"id": 1, "epoch": 1, "scores": {}, "error": {"message": "TypeError"}}]))
    doc["status"], doc["results"] = "error", {"scores": []}
    with pytest.raises(EvalDataError, match=r"\(1 of them errored\).* The run's status is 'error': it stopped "
                                            r"before its samples were scored"):
        load_eval_log(("failed.json", json.dumps(doc).encode()))
    frame = load_eval_log(("agent.json", _json_log([_sample(1, match="C")], model="none/none")))
    assert any(n.startswith("agent.json: the log names no model ('none/none', Inspect's placeholder")
               for n in report_of(frame).notes)


def test_interrupted_eval_zip_without_header_reads_its_journal():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": {"task": "t", "model": "m"}}))
        archive.writestr("samples/1_epoch_1.json", json.dumps(_sample(1, match="C")))
        archive.writestr("samples/2_epoch_1.json", json.dumps(_sample(2, match="I")))
    frame = load_eval_log(("run.eval", buffer.getvalue()))
    assert sorted(frame["correct"].tolist()) == [0.0, 1.0]


def test_generated_log_counts_are_exact():
    frame = load_eval_log(("g.eval", make_eval_log(2000, seed=1)))
    rng = np.random.default_rng(1)
    p = 0.3 + 0.6 * np.arange(2000) / 2000
    expected = (rng.random(2000) < p).sum()
    assert frame["correct"].sum() == expected
