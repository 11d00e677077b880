"""``evalcore validate`` on several tools' files: it names the tool of every file, leaves a bad file out with a
warning (exit 0), and ``--strict`` refuses instead (exit 1)."""

from __future__ import annotations

from crafted import evalcore


def test_validate_names_the_tool_of_every_file_and_strict_refuses_a_bad_one(tmp_path, shared_file):
    bad = tmp_path / "notes.json"
    bad.write_text('{\n  "comment": {"text": "not a log"}\n}\n')
    logs = [str(shared_file("ecosystem/lm_eval")), str(shared_file("ecosystem/inspect_ai/data_arc_qwen.json")), str(bad)]
    result = evalcore("validate", *logs)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "usable: a log table with 13 rows and 2 models." in out
    assert "  data_arc_qwen.json: Inspect AI\n" in out
    assert "  lm_eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl: lm-evaluation-harness\n" in out
    # named by its path as given, never by its base name alone (issue 39)
    assert f"  - {bad} was left out: this JSON is not a log evalcore recognises. evalcore reads the logs of " in out
    strict = evalcore("validate", "--strict", *logs)
    assert strict.returncode == 1
    assert "NOT USABLE" in strict.stdout and "notes.json: this JSON is not a log evalcore recognises" in strict.stdout
