"""``evalcore validate`` of a small file imports once (issue 49, item 6): a plain file clearly within the bounded
reader's limits is read in the command's own process (no child importing pandas again), and neither the engine
(Ibis, DuckDB), scipy.stats nor plotly is imported to validate it and print its table. Larger, compressed or
archived files still go to the bounded child. The CPU ratio itself is measured in ``benchmarks/validate_speed.py``
(no timing here)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from evalcore.data.sandbox import IN_PROCESS_BYTES, clearly_small

ROOT = Path(__file__).resolve().parents[2]
SIX = "model,example_id,correct\na,1,1\na,2,0\na,3,1\nb,1,1\nb,2,1\nb,3,0\n"


def test_small_plain_files_are_clearly_within_the_bounds(tmp_path):
    small = tmp_path / "six.csv"
    small.write_text(SIX)
    packed = tmp_path / "six.csv.gz"  # a few bytes that may expand to anything
    packed.write_bytes(gzip.compress(SIX.encode()))
    large = tmp_path / "large.csv"
    large.write_bytes(b"model,correct\n" + b"a,1\n" * (IN_PROCESS_BYTES // 4))
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "a.csv").write_text(SIX)
    (folder / "b.csv").write_text(SIX)
    assert clearly_small([small]) and clearly_small([folder]) and clearly_small([small, folder])
    assert not clearly_small([packed]) and not clearly_small([large]) and not clearly_small([small, large])
    assert not clearly_small([tmp_path / "missing.csv"])
    (folder / "c.eval").write_bytes(b"PK\x03\x04" + b"\0" * 60)  # a zip (Inspect's .eval) in the folder
    assert not clearly_small([folder])


def test_validate_of_a_small_file_imports_neither_the_engine_nor_scipy_stats_and_starts_no_child(tmp_path):
    path = tmp_path / "six.csv"
    path.write_text(SIX)
    probe = ("import subprocess, sys, json\n"
             "started = []\n"
             "real = subprocess.Popen.__init__\n"
             "def spy(self, *a, **k):\n"
             "    started.append(a[0] if a else k.get('args'))\n"
             "    real(self, *a, **k)\n"
             "subprocess.Popen.__init__ = spy\n"
             "from evalcore.cli import main\n"
             f"status = main(['validate', {str(path)!r}])\n"
             "print(json.dumps({'status': status, 'children': len(started), 'modules': sorted(m for m in "
             "('ibis', 'duckdb', 'scipy.stats', 'plotly', 'evalcore.engine') if m in sys.modules)}))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"status": 0, "children": 0, "modules": []}, out.stdout
    assert "six.csv: usable: a log table with 6 rows and 2 models." in out.stdout
