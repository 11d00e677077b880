"""``python -m benchmarks.coverage``: run the coverage modules and print their table (see the package docstring)."""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path

from benchmarks.coverage import MODULES, markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=MODULES, default=list(MODULES), help="modules to run")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per setting (default: each module's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = []
    for name in args.only:
        start = time.perf_counter()
        module = importlib.import_module(f"benchmarks.coverage.{name}")
        rows.extend(module.run(args.reps, args.seed))
        print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)
    table = markdown(rows)
    print(table)
    out = Path(__file__).resolve().parents[1] / "results" / "coverage.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
