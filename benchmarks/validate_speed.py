"""``evalcore validate`` of a small file against ``python -c "import pandas"``, in CPU seconds (user + system, of
the process and its children): issue 49's target is at most 1.5 times the reference. The two commands run
interleaved, each ``repeats`` times, so that a busy machine slows both alike; the ratio of the medians is in the note.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.core import Result

ROOT = Path(__file__).resolve().parents[1]
#: the 6-row log of the issue: two models, three examples each
SMALL_LOG = "model,example_id,correct\na,1,1\na,2,0\na,3,1\nb,1,1\nb,2,1\nb,3,0\n"
#: ``evalcore validate`` may cost at most this many times the CPU of importing pandas
TARGET_RATIO = 1.5


def cpu_seconds(command: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of ``command`` and the processes it waited for (its bounded reader's child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(repeats: int) -> list[Result]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    reference = Result("import-pandas-cpu", '`python -c "import pandas"`: CPU seconds (user + system)')
    validate = Result("validate-small-cpu", "`evalcore validate` of a 6-row CSV (`python -m evalcore`): CPU seconds "
                                            "(user + system, with any child), target 1.5x the median of "
                                            "import-pandas-cpu")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "six.csv"
        path.write_text(SMALL_LOG)
        for _ in range(repeats):
            reference.samples.append(cpu_seconds([sys.executable, "-c", "import pandas"], env))
            validate.samples.append(cpu_seconds([sys.executable, "-m", "evalcore", "validate", str(path)], env))
    validate.target = TARGET_RATIO * statistics.median(reference.samples)
    validate.note = f"{validate.median / reference.median:.2f}x import pandas (target {TARGET_RATIO}x)"
    return [reference, validate]
