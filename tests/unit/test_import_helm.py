"""HELM run folders (evalcore.importers.helm)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of

RUN = "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"


@pytest.fixture(scope="module")
def run(shared_data: Path) -> Path:
    path = shared_data / "ecosystem" / "helm" / RUN
    if not path.is_dir():
        pytest.skip("the HELM run folder is not present")
    return path


def _stat(name: str, mean: float, split: str = "test", **extra) -> dict:
    return {"name": {"name": name, "split": split, **extra}, "count": 1, "sum": mean, "mean": mean}


def _instances(values, metric="exact_match") -> bytes:
    return json.dumps([{"instance_id": f"id{i}", "train_trial_index": 0,
                        "stats": [_stat("num_references", 4), _stat(metric, v)]} for i, v in enumerate(values)]
                      ).encode()


def _spec(model: str) -> bytes:
    return json.dumps({"name": f"mmlu:subject=x,model={model.replace('/', '_')}", "adapter_spec": {"model": model},
                       "metric_specs": [{"args": {"names": ["exact_match", "quasi_exact_match"]}}]}).encode()


def test_real_run_folder(run):
    frame = load_eval_log(run)
    assert set(frame["model"]) == {"openai/gpt2"}
    assert set(frame["task"]) == {"mmlu:subject=philosophy,method=multiple_choice_joint"}
    assert len(frame) == 9 and frame["correct"].sum() == 1   # 10 instances, one without exact_match
    assert any("1 of 10 instances" in n for n in report_of(frame).notes)


def test_real_run_folder_as_a_zip(run):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in run.iterdir():
            archive.write(path, f"{RUN}/{path.name}")
    assert len(load_eval_log(("run.zip", buffer.getvalue()))) == 9


def test_two_models_on_one_scenario_are_one_task():
    files = []
    for model, values in (("openai/a", [1, 0, 1]), ("meta/b", [0, 0, 1])):
        folder = f"mmlu:subject=x,model={model.replace('/', '_')}"
        files += [(f"{folder}/per_instance_stats.json", _instances(values)), (f"{folder}/run_spec.json", _spec(model))]
    frame = load_eval_logs(files)
    assert frame.groupby("model")["correct"].sum().to_dict() == {"meta/b": 1.0, "openai/a": 2.0}
    assert set(frame["task"]) == {"mmlu:subject=x"}


def test_perturbed_instances_and_score_metric():
    data = json.loads(_instances([0.5, 0.25], metric="f1_score"))
    data.append({"instance_id": "id0", "train_trial_index": 0, "perturbation": {"name": "typos"},
                 "stats": [_stat("f1_score", 0.0)]})
    frame = load_eval_logs([("r/per_instance_stats.json", json.dumps(data).encode()),
                            ("r/run_spec.json", _spec("openai/a"))])
    assert frame["score"].tolist() == [0.5, 0.25]
    assert any("1 of 3 instances" in n and "perturbed" in n for n in report_of(frame).notes)


def test_missing_results_file_is_named():
    with pytest.raises(EvalDataError, match=r"r: a HELM run needs per_instance_stats\.json"):
        load_eval_logs([("r/run_spec.json", _spec("openai/a"))])
