"""False discovery proportion and power of :func:`evalcore.compare.compare_runs`' slice search, by simulation with
regressions planted in a real log.

``python -m benchmarks.compare_fdr [--reps R] [--seed S] [--fdr Q]`` prints two Markdown tables (also written to
``benchmarks/results/compare_fdr.md``).

Data: MMLU-Pro per-question correctness, ``../shared/data/mmlu_pro_per_question.csv.gz`` (TIGER-AI-Lab/MMLU-Pro,
``eval_results/model_outputs_*``; columns model, question_id, category, src, ..., correct; 14 categories, 12,032
questions; ``../shared/data/SOURCES.md``). One repetition (:func:`one_rep`):

1. base = the real answers of one model of :data:`MODELS` (drawn at random) on every question;
2. the planted category (drawn among those with at least ``size`` questions) keeps ``size`` of its questions drawn
   at random; the other 13 categories keep all theirs;
3. a null run: each answer redrawn ``Bernoulli(p_c)`` with ``p_c`` base's accuracy on its category's kept
   questions; then, per question, a fair coin says which of the two answers (real, redrawn) is base's and which
   is new's, so that under the null the two runs are exchangeable and every category's expected paired difference
   is 0. Without the coin (``--fixed-base``: base = the real answers, only new random) the paired tests are very
   conservative here: they allow for base's sampling too, so the variance they assume, about ``2 n p (1 - p)``
   discordant pairs, is twice the redraw's ``n p (1 - p)``; the tables then show FDPs far below the FDR;
4. the planted regression: ``round(effect * size)`` of new's right answers in the planted category become wrong
   (an expected drop of ``effect`` in accuracy); ``effect = 0``: nothing planted (the global null);
5. ``compare_runs(log, base, new, fdr=fdr)`` on the log with task = category (no separate category column, so
   each category is searched once): the slices searched are the 14 tasks; a discovery is a flagged slice; a true
   one is the planted category flagged ``worse``.

Per repetition, FDP = false discoveries / max(discoveries, 1) and power = whether the planted category is found
(with several planted categories, the share found).
The tables give the mean FDP (the false discovery rate, which Benjamini-Hochberg keeps at or below ``fdr x 13 /
14`` for independent tests) and the power by effect and slice size, with Monte Carlo SEs (sd / sqrt(R)), and the
share of repetitions whose verdict is "regression" (what ``evalcore compare`` answers with exit code 3).

Measured (``--reps 60 --seed 0``, 660 repetitions, 369 s on 2 busy cores), FDR asked 0.1: mean FDP 0.100 +/- 0.028
under the global null (120 repetitions: the share with any false discovery), 0.067 / 0.069 / 0.097 (+/- 0.017-0.018)
with a 5 / 10 / 20-point drop planted, 0.082 +/- 0.010 over all. Power, drop 5 / 10 / 20 points (rows) by slice
size 100 / 300 / 1,000: 0.00 / 0.10 / 0.45; 0.13 / 0.50 / 0.97; 0.60 / 0.98 / 1.00 (MC SE at most 0.07). The
verdict is "regression" in 0.083 of the global-null repetitions (overall interval below 0 or a slice flagged
worse). With ``--fixed-base`` (``--reps 10``, 110 repetitions): no false discovery at all, power 0.30 / 1.00 / 1.00
at 1,000 and 0.00 / 0.00 / 0.70 at 100 (the conservative case of step 3).

:func:`simulate` takes any population (base's answers and their categories), so the unit test
(``tests/unit/test_compare_coverage_small.py``) runs a small seeded synthetic version.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

MMLU = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mmlu_pro_per_question.csv.gz"
RESULTS = Path(__file__).resolve().parent / "results"
#: base models (complete answers, accuracies 32-63%)
MODELS = ("gemma-7b", "Mixtral-8x7B-Instruct-v0.1", "Yi-34B", "Qwen1.5-72B-Chat", "Meta-Llama-3-70B",
          "Meta-Llama-3_1-70B-Instruct")
EFFECTS = (0.05, 0.10, 0.20)
SIZES = (100, 300, 1000)
FDR = 0.1
#: per (effect, size); twice as many global-null repetitions. One repetition costs 1-3 s (a compare_runs call on
#: 24,000 rows, mostly compiling its queries, and a validation): the defaults (330 repetitions) run in about 7
#: minutes on 2 busy cores
DEFAULT_REPS = 30


@dataclass(frozen=True)
class Population:
    """Per model: its 0/1 answers (rows of ``correct``) on questions ``ids`` of categories ``category``."""

    models: tuple[str, ...]
    ids: np.ndarray
    category: np.ndarray
    correct: np.ndarray


def mmlu_pro(models=MODELS) -> Population | None:
    """The MMLU-Pro population of ``models`` (questions all of them answered), or None without the shared data."""
    if not MMLU.is_file():
        return None
    raw = pd.read_csv(MMLU, usecols=["model", "question_id", "category", "correct"])
    raw = raw[raw["model"].isin(models)]
    wide = raw.pivot(index="question_id", columns="model", values="correct").dropna()[list(models)]
    category = raw.drop_duplicates("question_id").set_index("question_id")["category"].reindex(wide.index)
    return Population(tuple(models), wide.index.to_numpy(), category.to_numpy(object),
                      wide.to_numpy(float).T)


def one_rep(pop: Population, effect: float, size: int | None, fdr: float, rng: np.random.Generator,
            min_slice: int = 20, planted_count: int = 1, exchangeable: bool = True) -> dict:
    """One repetition (module docstring); ``size`` None: no category subsampled and nothing planted (the global
    null); ``planted_count`` categories get the drop (1 in the benchmark); ``exchangeable`` False keeps base = the
    real answers (step 3 without the coin)."""
    from evalcore.compare import compare_runs
    from evalcore.data.validation import validate

    m = rng.integers(len(pop.models))
    cats, counts = np.unique(pop.category, return_counts=True)
    keep = np.ones(len(pop.ids), bool)
    planted = []
    if size is not None:
        planted = list(rng.choice(cats[counts >= size], planted_count, replace=False))
        for cat in planted:
            inside = np.flatnonzero(pop.category == cat)
            keep[inside] = False
            keep[rng.choice(inside, size, replace=False)] = True
    ids, category, base = pop.ids[keep], pop.category[keep], pop.correct[m, keep]
    rate = pd.Series(base).groupby(category).transform("mean").to_numpy()
    new = (rng.random(len(base)) < rate).astype(float)
    if exchangeable:  # which of the two answers is base's: a fair coin per question
        swap = rng.random(len(base)) < 0.5
        base, new = np.where(swap, new, base), np.where(swap, base, new)
    flipped = []
    if effect > 0:
        for cat in planted:
            right = np.flatnonzero((category == cat) & (new == 1))
            flipped.append(min(int(round(effect * size)), len(right)))
            new[rng.choice(right, flipped[-1], replace=False)] = 0.0
    n = len(ids)
    raw = pd.DataFrame({"model": np.repeat(["base", "new"], n), "task": np.tile(category, 2),
                        "example_id": np.tile(ids, 2), "correct": np.concatenate([base, new])})
    result = compare_runs(validate(raw), "base", "new", fdr=fdr, min_slice=min_slice)
    slices = result.slices
    flagged = slices[slices["flagged"].astype(bool)]
    truly = set(map(str, planted)) if effect > 0 else set()
    is_planted = (flagged["column"] == "task") & flagged["value"].astype(str).isin(truly)
    true = int((is_planted & (flagged["direction"] == "worse")).sum())
    discoveries = len(flagged)
    return {"model": pop.models[m], "effect": effect, "size": size, "planted": ", ".join(map(str, planted)),
            "flipped": sum(flipped), "searched": int(result.n_searched), "discoveries": discoveries,
            "false": discoveries - true, "fdp": (discoveries - true) / max(discoveries, 1),
            "found": true / len(truly) if truly else np.nan, "regression": result.verdict == "regression"}


def simulate(pop: Population, effects=EFFECTS, sizes=SIZES, reps: int = DEFAULT_REPS, null_reps: int | None = None,
             fdr: float = FDR, seed: int = 0, min_slice: int = 20, planted_count: int = 1,
             exchangeable: bool = True) -> pd.DataFrame:
    """One row per repetition: ``reps`` for each (effect, size) and ``null_reps`` (default ``2 * reps``) with
    nothing planted (effect 0, size None)."""
    rng = np.random.default_rng([seed, 28])
    rows = [one_rep(pop, 0.0, None, fdr, rng, min_slice, 1, exchangeable)
            for _ in range(2 * reps if null_reps is None else null_reps)]
    for effect in effects:
        for size in sizes:
            rows += [one_rep(pop, effect, size, fdr, rng, min_slice, planted_count, exchangeable)
                     for _ in range(reps)]
    return pd.DataFrame(rows)


def mean_se(values) -> tuple[float, float]:
    """Mean and its Monte Carlo SE (sd / sqrt(R))."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")


def tables(sims: pd.DataFrame, fdr: float = FDR) -> str:
    """The FDP table (global null, each effect pooled over sizes, everything) and the power table (effect x
    size), in Markdown."""
    lines = [f"FDR asked: {fdr:g}; slices searched per repetition: {sorted(sims['searched'].unique())}.", "",
             "| setting | reps | mean FDP ± MC SE | share with any false discovery | verdict regression |",
             "|---|---|---|---|---|"]
    groups = [("global null (nothing planted)", sims[sims["effect"] == 0])]
    groups += [(f"planted drop {e:.0%} (all slice sizes)", sims[sims["effect"] == e])
               for e in sorted(sims["effect"].unique()) if e > 0]
    groups += [("all repetitions", sims)]
    for name, g in groups:
        if g.empty:
            continue
        m, se = mean_se(g["fdp"])
        lines.append(f"| {name} | {len(g)} | {m:.3f} ± {se:.3f} | {(g['false'] > 0).mean():.3f} | "
                     f"{g['regression'].mean():.3f} |")
    planted = sims[sims["effect"] > 0]
    if planted.empty:
        return "\n".join(lines)
    sizes = sorted(planted["size"].unique())
    lines += ["", "Power (share of repetitions that flag the planted category as worse) ± MC SE, by planted drop "
              "(rows) and slice size (columns):", "",
              "| drop | " + " | ".join(f"n = {int(s)}" for s in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for e in sorted(planted["effect"].unique()):
        cells = []
        for s in sizes:
            g = planted[(planted["effect"] == e) & (planted["size"] == s)]
            m, se = mean_se(g["found"])
            cells.append(f"{m:.2f} ± {se:.2f}")
        lines.append(f"| {e:.0%} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare_fdr", description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS, help="repetitions per (effect, size)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fdr", type=float, default=FDR)
    parser.add_argument("--fixed-base", action="store_true", help="base = the real answers (no coin; step 3)")
    args = parser.parse_args(argv)
    pop = mmlu_pro()
    if pop is None:
        print(f"skipped: {MMLU} is absent")
        return 0
    start = time.perf_counter()
    sims = simulate(pop, reps=args.reps, fdr=args.fdr, seed=args.seed, exchangeable=not args.fixed_base)
    flag = " --fixed-base" if args.fixed_base else ""
    text = (f"### compare_runs slice search: FDP and power (`python -m benchmarks.compare_fdr --reps {args.reps} "
            f"--seed {args.seed}{flag}`)\n\n{tables(sims, args.fdr)}\n\n{len(sims)} repetitions in "
            f"{time.perf_counter() - start:.0f} s.\n")
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"compare_fdr{flag.replace(' --', '_').replace('-', '_')}.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
