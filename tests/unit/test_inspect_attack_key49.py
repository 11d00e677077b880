"""Inspect dict scores where a key is an attack's success (issue 49, item 5): ControlArena's ``control_scorer``
(control_arena/settings/common, ``metrics={"success", "detected_by_monitor", "side_task_success",
"main_task_success"}``) scores each sample with a dict; the main task's key is the label even when the attack's key
comes first, said in a note, and the attack's keys are kept as score_ columns."""

from __future__ import annotations

import json

from evalcore.data.validation import load_eval_log, report_of

METRICS = {key: [{"name": "inspect_ai/accuracy"}, {"name": "inspect_ai/stderr"}]
           for key in ("side_task_success", "detected_by_monitor", "main_task_success")}


def _log(values: list[dict]) -> bytes:
    return json.dumps({
        "version": 2, "status": "success",
        "eval": {"task": "apps_attack", "model": "anthropic/claude-3-7-sonnet-latest",
                 "scorers": [{"name": "control_scorer", "metrics": METRICS}]},
        "results": {"scores": [{"name": "control_scorer", "scorer": "control_scorer"}]},
        "samples": [{"id": i, "epoch": 1, "scores": {"control_scorer": {"value": v}}}
                    for i, v in enumerate(values, 1)]}).encode()


def test_the_main_tasks_key_is_the_label_not_the_attacks():
    values = [{"side_task_success": "C", "detected_by_monitor": "I", "main_task_success": "I"},
              {"side_task_success": "C", "detected_by_monitor": "C", "main_task_success": "C"},
              {"side_task_success": "I", "detected_by_monitor": "I", "main_task_success": "C"},
              {"side_task_success": "C", "detected_by_monitor": "I", "main_task_success": "I"}]
    log = load_eval_log(("attack.json", _log(values)))
    assert log["correct"].tolist() == [0.0, 1.0, 1.0, 0.0]  # main_task_success: accuracy 0.5, not the attack's 0.75
    assert log["score_control_scorer/side_task_success"].tolist() == [1.0, 1.0, 0.0, 1.0]
    notes = report_of(log).notes
    assert any(note.startswith("attack.json: 'control_scorer/side_task_success', 'control_scorer/detected_by_monitor' "
                               "measure an attack (a side task's success or its detection by a monitor), not the "
                               "main task: the label is read from 'control_scorer/main_task_success'")
               for note in notes), notes
