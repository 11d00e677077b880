"""Runs over time (issue 40), measured: the false discovery proportion and power of the changes a series flags, the
minimum detectable difference against simulation, and the History page's first screen on 50 runs.

``python -m benchmarks.history_power [--reps N] [--only fdr mdd page]`` prints three Markdown tables:

* ``fdr``: a series of 20 runs made from MMLU-Pro (../shared/data; one model's 12,032 answers are the truth, each
  run flips 3% of them at random, and runs 5, 11 and 17 lose 15% of their right answers on one category each);
  every run against the previous one (:func:`evalcore.history.series_changes`, 14 categories as slices): a (run,
  slice) change is real when the run and its baseline differ in a planted loss there (the overall one too). Mean
  false discovery proportion of the flagged changes and mean power (share of the real ones flagged) over the
  repetitions, at the FDR asked;
* ``mdd``: the minimum detectable difference (:func:`evalcore.compare.power.minimum_detectable_difference`)
  measured on real pairs: three pairs of MMLU-Pro models, the true difference planted at the MDD of n = 100, 200 and
  1,000 shared examples (:func:`planted_pairs`), and the share of subsets of n questions whose interval (Newcombe's,
  which the verdict reads and the MDD is computed for) excludes 0 at 95% (should be within 2 points of 80%) and the
  share the exact McNemar test detects;
* ``drift``: the gate (:mod:`evalcore.history.gate`) on series of 10 runs made from MMLU-Pro (one model's
  answers, as ``fdr``; each run changes 1,800 answers of the one before at random, each category its share): "drift",
  about 60 more right answers lost than gained at each run (0.6 points of the 10,351 answered), and "stable", as
  many gained as lost. Per scenario: the share of series the old
  gate (each run against the previous one) passes throughout, the share the gate passes throughout, and the runs at
  which the gate first fails;
* ``page``: the History page's first screen (Streamlit's AppTest, the script without a browser, cold cache) on a
  workspace series of 50 runs of 12,000 examples, with the parts timed alone.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalcore.compare.paired import mcnemar_exact_p
from evalcore.compare.power import minimum_detectable_difference
from evalcore.history import Run, series_changes

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PLANTED = {5: 0, 11: 1, 17: 2}  # run -> which of the chosen categories loses answers


def mmlu_truth() -> pd.DataFrame:
    frame = pd.read_csv(SHARED / "mmlu_pro_per_question.csv.gz", usecols=["model", "question_id", "category",
                                                                          "correct"])
    frame = frame[frame["model"] == "gpt-4o-2024-05-13"] if (frame["model"] == "gpt-4o-2024-05-13").any() else \
        frame[frame["model"] == frame["model"].iloc[0]]
    return frame.dropna(subset=["correct"]).reset_index(drop=True)


def simulated_series(truth: pd.DataFrame, rng, n_runs: int = 20, drop: float = 0.15) -> tuple[list[Run], dict]:
    categories = sorted(truth["category"].unique())
    chosen = [categories[i] for i in rng.choice(len(categories), 3, replace=False)]
    right = truth["correct"].to_numpy(bool)
    runs, planted = [], {}
    for i in range(n_runs):
        y = right.copy()
        flip = rng.random(len(y)) < 0.03
        y[flip] = ~y[flip]
        if i in PLANTED:
            hit = (truth["category"] == chosen[PLANTED[i]]).to_numpy()
            y[hit] &= rng.random(hit.sum()) >= drop
            planted[f"r{i:02d}"] = chosen[PLANTED[i]]
        runs.append(Run(f"r{i:02d}", f"2026-01-{1 + i:02d}", pd.DataFrame({
            "model": "m", "example_id": truth["question_id"].to_numpy(), "task": truth["category"].to_numpy(),
            "correct": y.astype(float)})))
    return runs, planted


def fdr_table(reps: int) -> str:
    truth = mmlu_truth()
    lines = ["| FDR asked | runs | slices per run | mean false discovery proportion | mean power | repetitions |",
             "|---|---|---|---|---|---|"]
    for fdr in (0.05, 0.10, 0.20):
        rng = np.random.default_rng(40)
        fdp, power = [], []
        for _ in range(reps):
            runs, planted = simulated_series(truth, rng)
            out = series_changes(runs, fdr=fdr)
            real = set()
            for _, row in out.iterrows():
                slices = {planted.get(row["run"]), planted.get(row["baseline"])} - {None}
                if slices and (row["slice"] == "overall" or row["slice"].removeprefix("task=") in slices):
                    real.add((row["run"], row["slice"]))
            flagged = {(r, s) for r, s, f in zip(out["run"], out["slice"], out["flagged"]) if f}
            fdp.append(len(flagged - real) / max(len(flagged), 1))
            power.append(len(flagged & real) / len(real))
        lines.append(f"| {fdr:.0%} | 20 | {out['slice'].nunique() - 1} + overall | {np.mean(fdp):.3f} | "
                     f"{np.mean(power):.3f} | {reps} |")
    return "\n".join(lines)


#: model pairs of MMLU-Pro whose real paired answers the MDD is measured on (close, middling and far apart)
PAIRS = (("Meta-Llama-3_1-8B", "Meta-Llama-3_1-8B-Instruct"), ("Mistral-7B-v0.1", "Mistral-7B-Instruct-v0.2"),
         ("Llama-2-13b-hf", "Meta-Llama-3-8B"))


def planted_pairs(base: np.ndarray, new: np.ndarray, delta: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """The real pairs with a true difference of exactly ``delta`` (a share of the questions, rounded to whole
    questions): the questions on which the two models agree keep their answers, those on which they disagree stay
    the discordant ones, and which of the two gets each right is redrawn so that a share (1 + delta/psi)/2 of them
    are the new model's. Returns (base, new) answers."""
    disagree = rng.permutation(np.flatnonzero(base != new))
    wins = int(round(len(disagree) * (1 + delta * len(base) / len(disagree)) / 2))
    base, new = base.copy(), new.copy()
    base[disagree[:wins]], new[disagree[:wins]] = 0, 1
    base[disagree[wins:]], new[disagree[wins:]] = 1, 0
    return base, new


def mdd_table(reps: int) -> str:
    """The MDD's power measured on real pairs: for each model pair of :data:`PAIRS` and n = 100, 200, 1,000, the true
    difference is planted at the MDD of n shared examples with the pair's discordance (:func:`planted_pairs`), and
    ``reps`` x 200 samples of n questions (without replacement, as a subset of a benchmark is) are compared: the
    share whose interval (Newcombe's, the verdict's, for which the MDD is computed) excludes 0 (the power promised:
    80%), and the share the exact McNemar test detects at 95%."""
    from evalcore.compare.paired import newcombe_interval

    frame = pd.read_csv(SHARED / "mmlu_pro_per_question.csv.gz", usecols=["model", "question_id", "correct"])
    wide = frame.pivot_table(index="question_id", columns="model", values="correct", aggfunc="first")
    rng = np.random.default_rng(41)
    draws = reps * 200
    lines = ["| pair (base vs new) | questions | discordance | n | MDD (points) | interval excludes 0 | exact McNemar "
             "detects | samples |", "|---|---|---|---|---|---|---|---|"]
    for base_model, new_model in PAIRS:
        both = wide[[base_model, new_model]].dropna().to_numpy(int)
        psi = float((both[:, 0] != both[:, 1]).mean())
        right = float(((both[:, 0] == 1) & (both[:, 1] == 1)).mean())
        for n in (100, 200, 1000):
            delta = minimum_detectable_difference(n, round(n * psi), round(n * right), 0.95)
            base, new = planted_pairs(both[:, 0], both[:, 1], delta, rng)
            detected, excluded = [], []
            for chunk in np.array_split(np.arange(draws), max(1, draws // 500)):
                rows = np.argsort(rng.random((len(chunk), len(base))), axis=1)[:, :n]
                b_, n_ = base[rows], new[rows]
                a, b = ((b_ == 1) & (n_ == 1)).sum(1), ((b_ == 1) & (n_ == 0)).sum(1)
                c, d = ((b_ == 0) & (n_ == 1)).sum(1), ((b_ == 0) & (n_ == 0)).sum(1)
                detected.append(mcnemar_exact_p(b, c) < 0.05)
                low, high = newcombe_interval(a, b, c, d, 0.95)
                excluded.append((low > 0) | (high < 0))
            lines.append(f"| {base_model} vs {new_model} | {len(base):,} | {psi:.3f} | {n:,} | {100 * delta:.2f} | "
                         f"{np.concatenate(excluded).mean():.3f} | {np.concatenate(detected).mean():.3f} | "
                         f"{draws:,} |")
    return "\n".join(lines)


def changed_series(right: np.ndarray, task: np.ndarray, rng, net: int, n_runs: int = 10,
                   changed: int = 1800) -> list[np.ndarray]:
    """``n_runs`` answer vectors from ``right``: each changes ``changed`` answers of the one before at random, in each
    task its share of them (so that no task drifts on its own), half of them plus its share of ``net`` right ones
    to wrong, the others wrong ones to right (about ``net`` fewer right answers in all)."""
    runs = [right.astype(bool)]
    for _ in range(n_runs - 1):
        y = runs[-1].copy()
        for name in np.unique(task):
            where = task == name
            share = where.mean()
            moved, lost = int(round(changed * share / 2)), int(round(net * share / 2))
            lose = rng.choice(np.flatnonzero(y & where), moved + lost, replace=False)
            gain = rng.choice(np.flatnonzero(~y & where), moved - lost, replace=False)
            y[lose], y[gain] = False, True
        runs.append(y)
    return runs


def drift_table(reps: int) -> str:
    from evalcore.compare import compare_runs
    from evalcore.compare.runs import runs_from_logs
    from evalcore.data.validation import validate
    from evalcore.history.gate import gate, record
    from evalcore.workspace import Workspace

    truth = mmlu_truth()
    rng = np.random.default_rng(43)
    lines = ["| series of 10 runs | old gate passes all | gate passes all | run the gate first fails (median, range) "
             "| repetitions |", "|---|---|---|---|---|"]
    for scenario, net in (("drift: 60 right answers lost per run", 60), ("stable: none lost", 0)):
        old_pass, new_pass, first = [], [], []
        for _ in range(reps):
            frames = [validate(pd.DataFrame({"model": "m", "example_id": truth["question_id"].to_numpy(),
                                             "task": truth["category"].to_numpy(), "correct": y.astype(float)}))
                      for y in changed_series(truth["correct"].to_numpy(bool), truth["category"].to_numpy(), rng,
                                              net)]
            old = [compare_runs(runs_from_logs([("a", a), ("b", b)], named=True), "a", "b").verdict
                   for a, b in zip(frames, frames[1:])]
            old_pass.append("regression" not in old)
            with tempfile.TemporaryDirectory() as folder:
                ws = Workspace(folder)
                verdicts = []
                for k, frame in enumerate(frames):
                    if k:
                        found = gate(ws, "s", frame, f"run{k}", ws.content_digest(frame), "m")
                        record(ws, found)
                        verdicts.append(found.verdict)
                    ws.add_to_series(ws.add_dataset(frame, f"run{k}").id, "s", f"2026-01-{10 + k}T00:00:00Z")
            new_pass.append("regression" not in verdicts)
            if not new_pass[-1]:
                first.append(verdicts.index("regression") + 1)
        runs = f"{int(np.median(first))} ({min(first)}-{max(first)})" if first else "-"
        lines.append(f"| {scenario} | {np.mean(old_pass):.2f} | {np.mean(new_pass):.2f} | {runs} | {reps} |")
    return "\n".join(lines)


def page_table(runs: int = 50, n: int = 12000) -> str:
    import os

    from streamlit.testing.v1 import AppTest

    from evalcore.data.validation import validate
    from evalcore.history import stored_trend
    from evalcore.history.load import read_series
    from evalcore.workspace import Workspace

    folder = Path(tempfile.mkdtemp(prefix="history-bench-"))
    ws = Workspace(folder)
    rng = np.random.default_rng(42)
    truth = rng.random(n) < 0.7
    task = np.array([f"t{i % 12}" for i in range(n)])
    for i in range(runs):
        y = truth.copy()
        flip = rng.random(n) < 0.03
        y[flip] = ~y[flip]
        record = ws.add_dataset(validate(pd.DataFrame({"model": "bot", "example_id": np.arange(n), "task": task,
                                                       "correct": y.astype(float)})), f"run-{i:02d}")
        ws.add_to_series(record.id, "bot / nightly", f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T00:00:00Z")
    parts = {}
    start = time.perf_counter()
    series = read_series(ws, "bot / nightly")
    parts["read 50 runs"] = time.perf_counter() - start
    start = time.perf_counter()
    stored_trend([(r.name, r.time, e.summary) for r, e in zip(series.runs, series.entries)], "bot", 0.95)
    parts["trend from stored counts"] = time.perf_counter() - start
    start = time.perf_counter()
    series_changes(series.runs)
    parts["changes (49 paired comparisons x 13 slices)"] = time.perf_counter() - start
    os.environ["EVALCORE_WORKSPACE"] = str(folder)
    app = str(Path(__file__).resolve().parents[1] / "app.py")
    at = AppTest.from_file(app, default_timeout=300)
    at.switch_page("pages/history.py")
    start = time.perf_counter()
    at.run()
    parts["first screen (AppTest run, cold cache)"] = time.perf_counter() - start
    assert not at.exception, [e.message for e in at.exception]
    start = time.perf_counter()
    at.run()
    parts["rerun (warm cache)"] = time.perf_counter() - start
    lines = ["| History page, 50 runs x 12,000 examples | seconds | target |", "|---|---|---|"]
    for name, seconds in parts.items():
        lines.append(f"| {name} | {seconds:.2f} | {'< 2' if name.startswith('first') else ''} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", nargs="*", default=["fdr", "mdd", "drift", "page"])
    args = parser.parse_args()
    if "fdr" in args.only:
        print(fdr_table(args.reps) if SHARED.is_dir() else "fdr: skipped (../shared/data not present)", "\n")
    if "mdd" in args.only:
        print(mdd_table(args.reps) if SHARED.is_dir() else "mdd: skipped (../shared/data not present)", "\n")
    if "drift" in args.only:
        print(drift_table(args.reps) if SHARED.is_dir() else "drift: skipped (../shared/data not present)", "\n")
    if "page" in args.only:
        print(page_table())


if __name__ == "__main__":
    main()
