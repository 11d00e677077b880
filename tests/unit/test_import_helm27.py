"""HELM (issue 27): LLM-judged runs (HELM Safety), the main metric of a scenario, run folders that name the model,
and the example's text (evalcore.importers.helm).

Fixtures are written here in the shape HELM writes (stanford-crfm/helm ``src/helm/benchmark/runner.py``: one
``per_instance_stats.json`` entry per (metric class, instance); ``metrics/safety_metrics.py``: ``safety_score`` =
mean of two judges; ``static/schema_*.yaml``: ``run_groups[].environment.main_name``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers import helm
from evalcore.importers.base import LogFile


def _stat(name: str, mean: float, split: str = "test") -> dict:
    return {"name": {"name": name, "split": split}, "count": 1, "sum": mean, "mean": mean}


def _safety_instances(scores: dict[str, tuple[float, float]], metric: str = "safety_score", trials=(0,)) -> bytes:
    """Each instance twice, as HELM Safety writes it: once with the judges' scores, once with generation stats."""
    out = []
    for trial in trials:
        for instance_id, (gpt, llama) in scores.items():
            prefix = metric.removesuffix("_score")
            out.append({"instance_id": instance_id, "train_trial_index": trial,
                        "stats": [_stat(metric, (gpt + llama) / 2), _stat(f"{prefix}_gpt_score", gpt),
                                  _stat(f"{prefix}_llama_score", llama)]})
            out.append({"instance_id": instance_id, "train_trial_index": trial,
                        "stats": [_stat("num_output_tokens", 12), _stat("inference_runtime", 0.4),
                                  _stat("num_references", 0)]})
    return json.dumps(out).encode()


def _spec(name: str, model: str, groups: list[str], names=None, annotators=None) -> bytes:
    metric_specs = [{"class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                     "args": {"names": names}}] if names else [
        {"class_name": "helm.benchmark.metrics.safety_metrics.SafetyScoreMetric", "args": {}}]
    return json.dumps({"name": name, "adapter_spec": {"model": model}, "metric_specs": metric_specs,
                       "groups": groups, "annotators": annotators}).encode()


def _notes(frame) -> list[str]:
    return list(report_of(frame).notes)


def test_helm_safety_run_is_one_scored_row_per_instance_with_a_judge_note():
    run = "harm_bench:model=openai_gpt-4o-mini"
    scores = {"id1": (1.0, 1.0), "id2": (0.0, 0.5), "id3": (1.0, 0.0)}
    frame = load_eval_logs([
        (f"{run}/per_instance_stats.json", _safety_instances(scores)),
        (f"{run}/run_spec.json", _spec(run, "openai/gpt-4o-mini", ["harm_bench"], annotators=[
            {"class_name": "helm.benchmark.annotation.harm_bench_annotator.HarmBenchAnnotator"}]))])
    assert "correct" not in frame and len(frame) == 3
    assert dict(zip(frame["example_id"], frame["score"])) == {"id1": 1.0, "id2": 0.25, "id3": 0.5}
    assert set(frame["task"]) == {"harm_bench"} and set(frame["model"]) == {"openai/gpt-4o-mini"}
    notes = _notes(frame)
    assert any("6 entries for 3 instances" in n and "merged" in n for n in notes)
    assert any("'safety_score' comes from an LLM judge (annotators: HarmBenchAnnotator)" in n for n in notes)
    assert any("main metric of the run group 'harm_bench'" in n for n in notes)


def test_older_safety_metric_names_and_repeats():
    # HELM Safety v1 (schema_safety.yaml @ 9bebceea9: simple_safety_tests main_name sst_score); two trials
    run = "simple_safety_tests:model=meta_llama-3-8b"
    data = _safety_instances({"a": (1.0, 1.0), "b": (0.0, 0.0)}, metric="sst_score", trials=(0, 1))
    frame = load_eval_log((f"{run}/per_instance_stats.json", data))   # the folder names the run: no run spec needed
    assert len(frame) == 4 and frame["score"].sum() == 2.0
    assert sorted(zip(frame["example_id"], frame["repeat"].astype(int))) == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert set(frame["model"]) == {"meta/llama-3-8b"}
    assert any("'sst_score' comes from an LLM judge" in n for n in _notes(frame))


def _narrative(values: list[tuple[float, float]]) -> bytes:
    return json.dumps([{"instance_id": f"id{i}", "train_trial_index": 0,
                        "stats": [_stat("exact_match", em), _stat("quasi_exact_match", em), _stat("f1_score", f1)]}
                       for i, (em, f1) in enumerate(values)]).encode()


def test_narrative_qa_uses_f1_its_main_metric_although_the_spec_lists_exact_match_first():
    run = "narrative_qa:model=openai_gpt2"
    files = [(f"{run}/per_instance_stats.json", _narrative([(0.0, 0.5), (1.0, 1.0), (0.0, 0.2)])),
             (f"{run}/run_spec.json", _spec(run, "openai/gpt2", ["narrative_qa"],
                                            names=["exact_match", "quasi_exact_match", "f1_score"]))]
    frame = load_eval_logs(files)
    assert frame["score"].tolist() == pytest.approx([0.5, 1.0, 0.2])
    assert any("'f1_score' (test split) is the label ('score'): HELM's main metric of the run group 'narrative_qa'"
               in n and "schema_*.yaml" in n for n in _notes(frame))


SCHEMA_YAML = b"""---
metrics:
  - name: exact_match
    display_name: Exact match
metric_groups:
  - name: accuracy
    metrics:
      - name: ${main_name}
        split: ${main_split}
run_groups:
  - name: my_scenarios
    subgroups:
      - my_qa
  - name: my_qa
    display_name: My QA
    metric_groups:
      - accuracy
    environment:
      main_name: f1_score
      main_split: test
    taxonomy:
      task: question answering
"""


def test_an_uploaded_schema_names_the_main_metric():
    run = "my_qa:model=openai_gpt2"
    files = [(f"runs/v1/{run}/per_instance_stats.json", _narrative([(0.0, 0.4), (1.0, 1.0)])),
             (f"runs/v1/{run}/run_spec.json", _spec(run, "openai/gpt2", ["my_qa"], names=["exact_match", "f1_score"])),
             ("runs/v1/schema_mine.yaml", SCHEMA_YAML)]
    frame = load_eval_logs(files)
    assert frame["score"].tolist() == pytest.approx([0.4, 1.0])
    assert any("main metric of the run group 'my_qa' (run_groups[].environment.main_name in runs/v1/schema_mine.yaml)"
               in n for n in _notes(frame))
    # without the schema, nothing names my_qa's main metric: the first metric the run spec lists
    frame = load_eval_logs(files[:2])
    assert frame["correct"].tolist() == [0.0, 1.0]
    assert any("the first metric its run spec lists" in n for n in _notes(frame))


def test_schema_json_written_by_helm_summarize():
    schema = json.dumps({"metrics": [], "run_groups": [
        {"name": "my_qa", "environment": {"main_name": "f1_score", "main_split": "test"}}]}).encode()
    assert helm.sniff(LogFile("runs/v1/schema.json", schema))
    assert not helm.sniff(LogFile("schema.json", b'{"$schema": "http://json-schema.org/draft-07/schema#"}'))
    run = "my_qa:model=openai_gpt2"
    frame = load_eval_logs([(f"runs/v1/{run}/per_instance_stats.json", _narrative([(0.0, 0.3)])),
                            ("runs/v1/schema.json", schema)])
    assert frame["score"].tolist() == [0.3]


def test_yaml_schema_reader_takes_only_run_groups():
    mains = helm._yaml_mains(LogFile("schema_x.yaml", SCHEMA_YAML))
    assert mains == {"my_qa": ("f1_score", "test")}


def test_a_per_instance_stats_file_alone_is_named_by_its_run_folder():
    data = json.dumps([{"instance_id": "id1", "train_trial_index": 0, "stats": [_stat("exact_match", 1.0)]},
                       {"instance_id": "id2", "train_trial_index": 0, "stats": [_stat("exact_match", 0.0)]}]).encode()
    frame = load_eval_log(("runs/v1/mmlu:subject=x,model=org_m/per_instance_stats.json", data))
    assert set(frame["model"]) == {"org/m"} and set(frame["task"]) == {"mmlu:subject=x"}
    assert frame["correct"].tolist() == [1.0, 0.0]


def test_a_per_instance_stats_file_given_by_path_keeps_its_run_folder(tmp_path: Path):
    folder = tmp_path / "benchmark_output" / "runs" / "v1" / "mmlu:subject=anatomy,model=meta_llama-3-8b"
    folder.mkdir(parents=True)
    (folder / "per_instance_stats.json").write_text(json.dumps(
        [{"instance_id": f"id{i}", "train_trial_index": 0, "stats": [_stat("exact_match", float(i % 2))]}
         for i in range(5)]))
    frame = load_eval_logs([folder / "per_instance_stats.json"])
    assert set(frame["model"]) == {"meta/llama-3-8b"} and frame["correct"].sum() == 2.0
    assert set(frame["task"]) == {"mmlu:subject=anatomy"}
    (folder / "stats.json").write_text("[]")
    notes = report_of(load_eval_logs([folder])).notes  # the notes name the folder as given, not the ones above it
    assert ("mmlu:subject=anatomy,model=meta_llama-3-8b: stats.json not needed (the results are in "
            "per_instance_stats.json).") in notes


def test_a_folder_that_names_no_model_is_refused_with_what_to_do():
    data = json.dumps([{"instance_id": "id1", "stats": [_stat("exact_match", 1.0)]}]).encode()
    with pytest.raises(EvalDataError, match=r"somewhere: the model is not known: upload scenario_state\.json"):
        load_eval_log(("somewhere/per_instance_stats.json", data))


def test_text_roles_from_the_scenario_state_multiple_choice():
    run = "mmlu:subject=x,method=multiple_choice_joint,model=openai_gpt2"
    stats = json.dumps([{"instance_id": "id7", "train_trial_index": 0, "stats": [_stat("exact_match", 0.0)]},
                        {"instance_id": "id9", "train_trial_index": 0, "stats": [_stat("exact_match", 1.0)]}]).encode()

    def state(iid: str, question: str, answers: list[tuple[str, bool]], said: str) -> dict:
        return {"instance": {"id": iid, "split": "test", "input": {"text": question},
                             "references": [{"output": {"text": a}, "tags": ["correct"] if ok else []}
                                            for a, ok in answers]},
                "train_trial_index": 0, "output_mapping": {chr(65 + i): a for i, (a, _) in enumerate(answers)},
                "request": {"prompt": "..."}, "result": {"success": True, "completions": [{"text": said}]}}

    scenario = json.dumps({"adapter_spec": {"model": "openai/gpt2"}, "request_states": [
        state("id7", "2+2?", [("3", False), ("4", True)], " A"),
        state("id9", "Sky?", [("blue", True), ("red", False)], " A")]}).encode()
    frame = load_eval_logs([(f"{run}/per_instance_stats.json", stats), (f"{run}/scenario_state.json", scenario)])
    assert frame["input"].tolist() == ["2+2?\nA. 3\nB. 4", "Sky?\nA. blue\nB. red"]
    assert frame["target"].tolist() == ["B. 4", "A. blue"]
    assert frame["output"].tolist() == [" A", " A"]


def test_text_roles_generation_join_on_instance_and_trial():
    run = "narrative_qa:model=openai_gpt2"
    stats = json.dumps([{"instance_id": "q1", "train_trial_index": t, "stats": [_stat("f1_score", f1)]}
                        for t, f1 in ((0, 0.5), (1, 1.0))]).encode()
    scenario = json.dumps({"request_states": [
        {"instance": {"id": "q1", "input": {"text": "Who?"}, "references": [
            {"output": {"text": "Ann"}, "tags": ["correct"]}, {"output": {"text": "Anna"}, "tags": ["correct"]}]},
         "train_trial_index": t, "result": {"completions": [{"text": said}]}}
        for t, said in ((1, "Ann"), (0, "Ann Smith"))]}).encode()
    frame = load_eval_logs([(f"{run}/per_instance_stats.json", stats), (f"{run}/scenario_state.json", scenario)])
    frame = frame.sort_values("repeat", key=lambda r: r.astype(int))
    assert frame["output"].tolist() == ["Ann Smith", "Ann"] and frame["score"].tolist() == [0.5, 1.0]
    assert set(frame["target"]) == {"Ann\nAnna"} and set(frame["input"]) == {"Who?"}


def test_exact_match_averaged_over_outputs_is_a_score_and_an_unknown_0_1_metric_is_correct():
    em = json.dumps([{"instance_id": f"i{k}", "stats": [_stat("exact_match", v)]}
                     for k, v in enumerate((0.0, 0.5, 1.0))]).encode()
    frame = load_eval_log(("gsm_like:model=org_m/per_instance_stats.json", em))
    assert frame["score"].tolist() == [0.0, 0.5, 1.0]
    assert any("some instances have a value other than 0 and 1" in n for n in _notes(frame))
    custom = json.dumps([{"instance_id": f"i{k}", "stats": [_stat("my_pass", v)]}
                         for k, v in enumerate((0.0, 1.0))]).encode()
    spec = _spec("custom:model=org_m", "org/m", ["custom"], names=["my_pass"])
    frame = load_eval_logs([("custom:model=org_m/per_instance_stats.json", custom),
                            ("custom:model=org_m/run_spec.json", spec)])
    assert frame["correct"].tolist() == [0.0, 1.0]


def test_a_suite_folder_given_by_path_with_its_schema_and_runs_json(tmp_path: Path):
    suite = tmp_path / "runs" / "v1"
    for model, f1 in (("openai_gpt2", 0.3), ("meta_llama-3-8b", 0.9)):
        run = suite / f"narrative_qa:model={model}"
        run.mkdir(parents=True)
        (run / "per_instance_stats.json").write_text(json.dumps([{"instance_id": "a", "train_trial_index": 0, "stats": [
            _stat("exact_match", 0.0), _stat("rouge_l", f1 / 3), _stat("f1_score", f1)]}]))
    (suite / "runs.json").write_text("[]")
    (suite / "schema_lite.yaml").write_bytes(b"run_groups:\n  - name: narrative_qa\n    environment:\n"
                                             b"      main_name: rouge_l\n      main_split: test\n")
    frame = load_eval_logs([suite])
    assert dict(zip(frame["model"], frame["score"])) == pytest.approx({"openai/gpt2": 0.1, "meta/llama-3-8b": 0.3})
    notes = _notes(frame)
    assert notes[0] == "Read HELM (4 files)."   # two runs, the schema and runs.json, each once
    assert any("runs.json: not needed" in n for n in notes)


def test_a_bad_trial_index_is_refused_naming_the_file_and_field():
    data = json.dumps([{"instance_id": "id1", "train_trial_index": "first", "stats": [_stat("exact_match", 1.0)]}])
    with pytest.raises(EvalDataError, match=r"per_instance_stats\.json \(instance 1\): 'train_trial_index' is "
                                            r"'first', not a whole number"):
        load_eval_log(("mmlu:subject=x,model=org_m/per_instance_stats.json", data.encode()))
