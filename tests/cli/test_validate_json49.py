"""``evalcore validate --json`` on a log that cannot be used (issue 49): still JSON — an object naming the files, with
``usable`` false and the message — and exit status 1, on stdout with ``--json -`` (nothing else there) and in the
file with ``--json FILE`` (the text report on stdout as before); never a traceback."""

from __future__ import annotations

import json

from crafted import evalcore

BROKEN = "model,example_id,correct\na,1,1\na,2,maybe\n"


def test_json_to_stdout_of_an_unusable_log_is_one_object(tmp_path):
    path = tmp_path / "broken.csv"
    path.write_text(BROKEN)
    out = evalcore("validate", str(path), "--json", "-")
    assert out.returncode == 1, out.stdout + out.stderr
    document = json.loads(out.stdout)  # all of stdout is the JSON
    assert document["files"] == "broken.csv" and document["usable"] is False
    assert document["error"].startswith("broken.csv: ") and "'correct'" in document["error"]
    assert "Traceback" not in out.stdout + out.stderr


def test_json_file_of_an_unusable_log_and_the_text_report(tmp_path):
    target = tmp_path / "read.json"
    out = evalcore("validate", str(tmp_path / "missing.csv"), "--json", str(target))
    assert out.returncode == 1 and out.stdout.startswith("missing.csv: NOT USABLE")
    document = json.loads(target.read_text())
    assert document == {"files": "missing.csv", "usable": False,
                        "error": f"{tmp_path / 'missing.csv'}: no such file or folder."}
