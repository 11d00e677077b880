"""Refusals lead somewhere right (issue 49, item 4): a table of aggregates (one row per configuration or model, no
example) is refused as "aggregates without example counts", also after mapping its number to a role, and reads as
a leaderboard summary once it has the counts; "melt" advice only when the columns are models; a per-sample table
of metrics (a judge's export) is told apart, and ``--model NAME`` names the system of any log without a model column
(a Ragas result, read by its own reader since item 5a, included)."""

from __future__ import annotations

import json

import pytest

from crafted import evalcore

# a paper's table: 8 fine-tuning configurations and their accuracies
ACCURACIES = [("base", 0.61), ("lora-r8", 0.64), ("lora-r16", 0.66), ("lora-r32", 0.65), ("full", 0.68),
              ("prefix", 0.58), ("adapter", 0.63), ("ia3", 0.60)]
JUDGED = ("prompt,completion,helpfulness,harmlessness\nWhat is X?,X is a,0.9,0.8\nWhat is Y?,Y is b,0.5,0.7\n"
          "What is Z?,Z is c,1,0.95\n")
RAGAS = ("user_input,response,reference,faithfulness,answer_relevancy,context_precision\n"
         "What is X?,X is a,X is a,0.9,0.8,1\nWhat is Y?,Y is b,Y is c,0.5,0.7,0.5\n"
         "What is Z?,Z is c,Z is c,1,0.95,1\n")


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("header", ["model", "config"])
def test_a_table_of_aggregates_is_refused_never_read_as_examples(tmp_path, header):
    path = write(tmp_path, "paper.csv", f"{header},accuracy\n" + "".join(f"{m},{a}\n" for m, a in ACCURACIES))
    for options in ([], ["--mapping", "accuracy=score"]) if header == "model" else ([],):
        out = evalcore("validate", str(path), *options)
        assert out.returncode == 1, out.stdout
        message = out.stdout.splitlines()[1]
        assert message.startswith(f"  paper.csv: The table has 8 rows, one per '{header}' ('base', 'lora-r8', "
                                  "'lora-r16', 'lora-r32' and 4 more), and no example's column: its numbers "
                                  "('accuracy') are aggregates without example counts"), message
        assert "melt" not in message and "Map one of them" not in message
        assert "add the number of examples behind each one as a column 'n' and a 'task' column" in message


def test_the_aggregates_with_their_counts_read_as_a_leaderboard_summary(tmp_path):
    path = write(tmp_path, "paper.csv", "model,task,accuracy,n\n" + "".join(f"{m},qa,{a},200\n" for m, a in
                                                                          ACCURACIES))
    out = evalcore("validate", str(path), "--json", "-")
    assert out.returncode == 0, out.stdout + out.stderr
    read = {row["model"]: row for row in json.loads(out.stdout)["read"]}
    assert json.loads(out.stdout)["kind"] == "summary"
    assert read["full"]["examples"] == 200 and read["full"]["estimate"] == pytest.approx(0.68)


def test_melt_is_advised_only_when_the_columns_are_models(tmp_path):
    wide = write(tmp_path, "wide.csv", "question,gpt-4,llama-2-7b,mistral-7b\nq1,1,0,1\nq2,1,1,0\nq3,0,0,1\n")
    out = evalcore("validate", str(wide))
    assert out.returncode == 1 and "Its numeric columns ('gpt-4', 'llama-2-7b', 'mistral-7b') look like models." \
        in out.stdout and "df.melt(" in out.stdout
    judged = write(tmp_path, "judged.csv", JUDGED)
    out = evalcore("validate", str(judged))
    assert out.returncode == 1 and "melt" not in out.stdout
    assert ("Its numeric columns 'helpfulness', 'harmlessness' are metrics, not models: one row per example holds one "
            "system's scores") in out.stdout
    assert "(evalcore: --model NAME; or add a column 'model') and map the metric to read to the role 'score' " \
           "(--mapping helpfulness=score)" in out.stdout
    # a Ragas result (issue 49, item 5a) is read by its reader: one system named after the file, each metric a task
    out = evalcore("validate", str(write(tmp_path, "ragas.csv", RAGAS)), "--json", "-")
    assert out.returncode == 0, out.stdout + out.stderr
    assert {(row["model"], row["task"]) for row in json.loads(out.stdout)["read"]} == {
        ("ragas", task) for task in ("(all)", "faithfulness", "answer_relevancy", "context_precision")}


def test_model_names_the_system_of_a_log_without_a_model_column(tmp_path):
    judged = write(tmp_path, "judged.csv", JUDGED)
    out = evalcore("validate", str(judged), "--model", "bot-v2", "--mapping", "helpfulness=score", "--json", "-")
    assert out.returncode == 0, out.stdout + out.stderr
    written = json.loads(out.stdout)
    [row] = written["read"]
    assert row["model"] == "bot-v2" and row["examples"] == 3 and row["label"] == "helpfulness"
    assert row["estimate"] == pytest.approx((0.9 + 0.5 + 1) / 3)
    assert "model = 'bot-v2' (--model): the log has no model column." in written["notes"]
    # a Ragas result's system, named after the file, is renamed by --model
    out = evalcore("validate", str(write(tmp_path, "ragas.csv", RAGAS)), "--model", "rag-v2", "--json", "-")
    written = json.loads(out.stdout)
    faithfulness = next(row for row in written["read"] if row["task"] == "faithfulness")
    assert faithfulness["model"] == "rag-v2" and faithfulness["examples"] == 3
    assert faithfulness["estimate"] == pytest.approx((0.9 + 0.5 + 1) / 3)
    assert "model = 'rag-v2' (--model): the log names no model (not the file's name, 'ragas')." in written["notes"]
    paper = write(tmp_path, "two.csv", "model,example_id,correct\na,1,1\nb,1,0\n")
    refused = evalcore("validate", str(paper), "--model", "x")
    assert refused.returncode == 1 and ("--model names the model of a log without a model column; this log has one "
                                        "('model': 'a', 'b')") in refused.stdout
