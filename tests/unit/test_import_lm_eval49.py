"""lm-evaluation-harness samples files of 2023 (issue 49, item 5e): named ``<model_args>_<task>.jsonl``, they yield
the model and the task from their name, not "unknown model" and the file's stem.

The files in ``tests/data/ecosystem49/lm_eval_2023/output/`` are real: committed by lm-eval's developers to
EleutherAI/lm-evaluation-harness at ee098a47d (``output/``, June 2023; see ../SOURCES.md). The ``pretrained__``
variant (``=`` written ``__``, July 2023 - April 2024) is the same file under the name that version gave it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalcore.data.validation import load_eval_logs, report_of
from evalcore.importers import lm_eval
from evalcore.importers.base import LogFile

OUTPUT = Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "lm_eval_2023" / "output"
WINOGRANDE = "pretrained=EleutherAI__pythia-2.8b_winogrande.jsonl"
TRIVIA = "pretrained=EleutherAI__pythia-2.8b_trivia_qa_unfiltered.nocontext.jsonl"


def test_the_real_2023_run_names_its_model_and_tasks():
    frame = load_eval_logs([OUTPUT])
    assert set(frame["model"]) == {"EleutherAI/pythia-2.8b"}
    assert frame.groupby("task")["correct"].agg(["size", "sum"]).to_dict("index") == {
        "winogrande": {"size": 4, "sum": 1.0},  # acc 0, 0, 0, 1 (lines 1-4 of the file)
        "trivia_qa_unfiltered.nocontext": {"size": 2, "sum": 0.0}}
    notes = report_of(frame).notes
    assert any(n.startswith(f"output/{WINOGRANDE}: model 'EleutherAI/pythia-2.8b' and task 'winogrande' are read "
                            "from the file's name") for n in notes), notes


def test_the_variant_with_equals_written_twice_underscore(tmp_path):
    for name, renamed in ((WINOGRANDE, "pretrained__EleutherAI__pythia-2.8b,dtype__float16_winogrande.jsonl"),
                          (TRIVIA, "pretrained__EleutherAI__pythia-2.8b_trivia_qa_unfiltered.nocontext.jsonl")):
        shutil.copy(OUTPUT / name, tmp_path / renamed)
    frame = load_eval_logs([tmp_path])
    assert set(frame["model"]) == {"EleutherAI/pythia-2.8b"}
    assert frame["task"].value_counts().to_dict() == {"winogrande": 4, "trivia_qa_unfiltered.nocontext": 2}


@pytest.mark.parametrize("name, tasks, expected", [
    ("pretrained=EleutherAI__pythia-2.8b_winogrande.jsonl", (), ("EleutherAI/pythia-2.8b", "winogrande")),
    ("pretrained__meta-llama__Llama-2-7b-hf,tensor_parallel_size__1,dtype__auto_triviaqa.jsonl", (),
     ("meta-llama/Llama-2-7b-hf", "triviaqa")),
    ("pretrained=org__my_model,trust_remote_code=True_arc_easy.jsonl", (), ("org/my_model", "arc_easy")),
    # a model whose name holds '_' is split right only by its run's task names
    ("pretrained=org__my_model_arc_easy.jsonl", ("arc_easy",), ("org/my_model", "arc_easy")),
    ("pretrained=org__my_model_arc_easy.jsonl", (), ("org/my", "model_arc_easy")),
    ("samples_arc_easy_2025-03-01T10-00-00.123456.jsonl", (), None),
    ("results.jsonl", (), None),
])
def test_older_names(name, tasks, expected):
    doc = {"results": {t: {} for t in tasks}} if tasks else None
    assert lm_eval._older_name(LogFile(name, b""), doc) == expected


def test_a_results_file_of_the_run_settles_the_task(tmp_path):
    line = json.loads((OUTPUT / WINOGRANDE).read_text().splitlines()[0])
    (tmp_path / "pretrained=org__my_model_wino_grande.jsonl").write_text(json.dumps(line) + "\n")
    (tmp_path / "results.json").write_text(json.dumps({"results": {"wino_grande": {"acc,none": 0.0}},
                                                       "config": {"model": "hf", "model_args": ""}}))
    frame = load_eval_logs([tmp_path])
    assert frame[["model", "task"]].drop_duplicates().values.tolist() == [["org/my_model", "wino_grande"]]
