"""A generated Inspect AI ``.eval`` log (zip, log format version 2) of any size, for the import benchmark and tests.

Each sample carries what a real one does at small scale (input, target, a two-message conversation, the output and
a ``match`` scorer's value "C" or "I" with answer and explanation), so that reading it costs what reading a real
log of the same size costs.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np


def make_eval_log(n_samples: int, epochs: int = 1, seed: int = 0, model: str = "openai/gpt-4o-mini",
                  task: str = "generated_task", summaries: bool = True) -> bytes:
    """The bytes of an ``.eval`` log with ``n_samples`` samples per epoch; sample i is correct with probability
    0.3 + 0.6 * i / n_samples (seeded). ``summaries``: write ``summaries.json`` (id, epoch, input, target, scores of
    every sample) as Inspect does when a run completes."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    header = {"version": 2, "status": "success",
              "eval": {"run_id": "bench", "created": "2026-11-24T00:00:00+00:00", "task": task, "task_id": "t",
                       "task_version": 0, "dataset": {"samples": n_samples}, "model": model,
                       "config": {"epochs": epochs}, "scorers": [{"name": "match", "options": {}}]},
              "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}]},
              "results": {"total_samples": n_samples * epochs, "completed_samples": n_samples * epochs,
                          "scores": [{"name": "match", "scorer": "match", "metrics": {}}]}}
    p = 0.3 + 0.6 * np.arange(n_samples) / max(n_samples, 1)
    summary_list = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": header["eval"],
                                                            "plan": header["plan"]}))
        for epoch in range(1, epochs + 1):
            right = rng.random(n_samples) < p
            for i in range(n_samples):
                answer = "A" if right[i] else "B"
                sample = {"id": i + 1, "epoch": epoch, "input": f"Question {i + 1}?", "target": "A",
                          "messages": [{"role": "user", "content": f"Question {i + 1}?"},
                                       {"role": "assistant", "content": f"ANSWER: {answer}"}],
                          "output": {"model": model, "choices": [{"message": {"role": "assistant",
                                                                              "content": f"ANSWER: {answer}"}}]},
                          "scores": {"match": {"value": "C" if right[i] else "I", "answer": answer,
                                               "explanation": f"ANSWER: {answer}"}},
                          "metadata": {}, "store": {}}
                archive.writestr(f"samples/{i + 1}_epoch_{epoch}.json", json.dumps(sample))
                summary_list.append({k: sample[k] for k in ("id", "epoch", "input", "target", "scores")})
        if summaries:
            archive.writestr("summaries.json", json.dumps(summary_list))
        archive.writestr("header.json", json.dumps(header))
    return buffer.getvalue()
