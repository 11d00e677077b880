"""Coverage of the paired difference's interval of :func:`evalcore.compare.compare_runs` (``overall``), on MMLU-Pro
subsamples held out from the full data, and its agreement with an independent computation on the full data.

Data: ``../shared/data/mmlu_pro_per_question.csv.gz`` (TIGER-AI-Lab/MMLU-Pro, ``eval_results/model_outputs_*``:
columns model, question_id, category, src, n_options, answer, pred, correct; 29 models, 12,032 questions; see
``../shared/data/SOURCES.md``). Each pair of :data:`PAIRS` (base, new) is compared on the questions both answered;
the full data play the population and its difference of accuracies (new - base) is the truth. A repetition draws
``n`` of those questions without replacement (:data:`SIZES`), builds the two-model per-example log of the draw,
validates it and reads the interval of ``compare_runs``; it holds when ``ci_low <= truth <= ci_high``.
Draws are independent (fresh per pair and repetition), so the Monte Carlo SE is the binomial one of
:func:`~benchmarks.coverage.coverage_row`. The interval is the contract's 0/1 path (/work/notes/compare28.md,
"Intervals"): Newcombe (1998) method 10 hybrid score interval for paired proportions (MMLU-Pro has no continuous
score; the paired t path is checked on simulated scores in ``tests/unit/test_compare_coverage_small.py``). For speed
(one ``compare_runs`` call costs about a second, mostly compiling its queries) the draws of a pair and size are
compared in one call, each draw a task of the log, and each draw's interval read from its slice row, which the
same function computes as the overall row (:func:`pair_rows`; a few draws per setting are also compared alone and
must give the same numbers: the table says the largest difference).

The draw is up to 1,000 of about 12,000 questions (8%): the intervals, made for an infinite population, are then
very slightly conservative for the pool's difference (at 1,000 a correct 95% interval covers about 0.959).

Measured (seed 0, 400 draws per pair and size, 2,000 intervals per row, MC SE 0.004-0.005), 95% intervals, 20 /
50 / 100 / 300 / 1,000 questions: 0.969 / 0.955 / 0.951 / 0.963 / 0.967 (mean widths 42.6 / 26.9 / 19.0 / 11.0 /
6.0 points); every draw compared alone gave its slice row's numbers exactly. Agreement on the full data (12,002 to
12,032 questions per pair): the largest absolute difference from the independent computation over the 5 pairs and
the four numbers (difference, ci_low, ci_high, p_value) is 1.1e-16. About 4 minutes on 2 busy cores.

Repeated samples (issue 41, :func:`repeat_rows`): per pair, each question's probability of a right answer when
sampled again is ``0.8 c_i + 0.2 a_i`` (``c_i`` the recorded answer, ``a_i`` the share of the 29 models right on
it); a draw takes ``n`` questions WITH replacement (so the pair's mean difference of probabilities is the truth
exactly) and samples each ``m`` times per run. ``m = 1`` takes the 0/1 path (Newcombe), ``m = 3, 5`` the paired t
on per-example means with ``n - 1`` degrees of freedom. Measured (seed 0, 200 draws per pair, 1,000 per row), n =
100 / 300 / 1,000 at 90 % and 95 %: 1 sample 0.909 / 0.914 / 0.894 and 0.955 / 0.953 / 0.936; 3 samples 0.905 /
0.892 / 0.909 and 0.955 / 0.950 / 0.960; 5 samples 0.900 / 0.903 / 0.904 and 0.956 / 0.947 / 0.960 (MC SE
0.006-0.010). The issue's audit reported 0.987 at 95 % with 5 samples at n = 100; it did not reproduce, and the
method (per-example means, then the paired t over examples) is unchanged. About 6 minutes on 2 busy cores.

:func:`agreement` compares ``compare_runs`` on the FULL data of each pair with an independent computation written
here from the formulas (numpy / scipy, not evalcore): Newcombe's method 10 with Wilson limits and the paper's
corrected phi, the exact McNemar test (:func:`scipy.stats.binomtest`) (and :func:`scipy.stats.ttest_rel` for a
continuous score, used by the unit test); it reports the largest absolute differences. ``python -m
benchmarks.coverage.compare [--reps R]`` prints both tables; ``python -m benchmarks.coverage --only compare`` adds
the coverage rows to the package's table.
"""

from __future__ import annotations

import argparse
import zlib
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from benchmarks.coverage import SHARED_DATA, CoverageRow, coverage_row, markdown

MMLU = SHARED_DATA / "mmlu_pro_per_question.csv.gz"
LEVEL = 0.95
#: (base, new): near-equal and far-apart pairs, correlated (same family) and not
PAIRS = (
    ("Meta-Llama-3-70B", "Meta-Llama-3_1-70B"),  # 52.0 vs 52.5: almost equal, same family
    ("Mixtral-8x7B-v0.1", "Mixtral-8x7B-Instruct-v0.1"),  # 39.9 vs 41.9
    ("gemini-1.5-flash-002", "gemini-1.5-pro-002"),  # 64.1 vs 70.2; a few unanswered questions
    ("Llama-2-7b-hf", "Llama-2-70b-hf"),  # 18.3 vs 36.3: far apart, low accuracies
    ("Qwen1.5-110B", "jamba-1.5-large"),  # 49.2 vs 49.5: different families
)
SIZES = (20, 50, 100, 300, 1000)
DEFAULT_REPS = 400  # per pair and size: 2,000 intervals per row (MC SE about 0.005 at 0.95)
CHECKS = 2  # draws per pair and size also compared alone (their overall row against their slice row)
METHOD = "compare_runs paired difference, 0/1 (Newcombe method 10)"
REPEAT_METHOD = "compare_runs paired difference, repeated samples (paired t on per-example means)"
#: the repeats setting (issue 41): questions per draw, samples per question, levels, draws per pair, fresh share
REPEAT_SIZES = (100, 300, 1000)
REPEAT_SAMPLES = (1, 3, 5)
REPEAT_LEVELS = (0.90, 0.95)
REPEAT_REPS = 200  # per pair: 1,000 intervals per row (MC SE about 0.007 at 0.95)
FRESH = 0.2


@lru_cache(maxsize=1)
def wide() -> pd.DataFrame | None:
    """Correctness as a question x model table (NaN: not answered), or None without the shared data."""
    if not MMLU.is_file():
        return None
    raw = pd.read_csv(MMLU, usecols=["model", "question_id", "category", "correct"])
    table = raw.pivot(index="question_id", columns="model", values="correct").astype(float)
    table["category"] = raw.drop_duplicates("question_id").set_index("question_id")["category"]
    return table


def pair_data(table: pd.DataFrame, base: str, new: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(question ids, category, base's and new's correctness) on the questions both answered."""
    both = table[[base, new, "category"]].dropna()
    return (both.index.to_numpy(), both["category"].to_numpy(object), both[base].to_numpy(float),
            both[new].to_numpy(float))


def two_model_log(ids, category, base_values, new_values, base: str, new: str, metric: str) -> pd.DataFrame:
    """The validated per-example log of two models on the same questions (``metric``: correct or score); the task
    is ``category`` (a task belongs to one category in evalcore)."""
    from evalcore.data.validation import validate

    raw = pd.DataFrame({"model": np.repeat([base, new], len(ids)), "task": np.tile(category, 2),
                        "example_id": np.tile(ids, 2), metric: np.concatenate([base_values, new_values])})
    return validate(raw)


def overall(log: pd.DataFrame, base: str, new: str, level: float = LEVEL) -> pd.Series:
    """The one row of ``compare_runs(log, base, new).overall``."""
    from evalcore.compare import compare_runs

    return compare_runs(log, base, new, level=level).overall.iloc[0]


def draws(size: int, reps: int, pool: int, rng: np.random.Generator) -> np.ndarray:
    """``reps`` draws of ``size`` of ``pool`` questions without replacement (one row per draw)."""
    return np.stack([rng.choice(pool, size, replace=False) for _ in range(reps)])


def pair_rows(base: str, new: str, size: int, reps: int, seed: int, checks: int = CHECKS):
    """(hits, widths, largest difference of the checks) of ``reps`` draws of ``size`` questions for one pair.

    The draws are compared in ONE call: draw r becomes task ``r`` of a log (its questions with example ids
``r * 1,000,000 + question id``), so
    ``compare_runs(log, base, new, min_slice=size).slices`` holds each draw's paired interval ("task=r"), computed
    by the same function as ``overall`` (:func:`evalcore.compare.paired.paired_estimates`, method chosen for the
    whole log: here 0/1 without repeats, Newcombe). ``checks`` draws are also compared alone and their
    ``overall`` row must equal their slice's row: the largest absolute difference is returned."""
    from evalcore.compare import compare_runs

    ids, category, b, c = pair_data(wide(), base, new)
    truth = float(c.mean() - b.mean())
    rng = np.random.default_rng([seed, size, zlib.crc32(f"{base}|{new}".encode())])
    picks = draws(size, reps, len(ids), rng)
    task = np.repeat([f"r{r:04d}" for r in range(reps)], size)
    flat = picks.ravel()
    keys = np.repeat(np.arange(reps, dtype=np.int64) * 1_000_000, size) + ids[flat]  # ids are unique in a log
    log = two_model_log(keys, task, b[flat], c[flat], base, new, "correct")
    slices = compare_runs(log, base, new, level=LEVEL, min_slice=size).slices.set_index("value")
    rows = slices.loc[[f"r{r:04d}" for r in range(reps)]]
    low, high = rows["ci_low"].to_numpy(float), rows["ci_high"].to_numpy(float)
    gap = 0.0
    for r in range(min(checks, reps)):
        alone = overall(two_model_log(ids[picks[r]], category[picks[r]], b[picks[r]], c[picks[r]], base, new,
                                      "correct"), base, new)
        gap = max(gap, *(abs(float(alone[k]) - float(rows.iloc[r][k])) for k in ("difference", "ci_low", "ci_high",
                                                                                   "p_value")))
    return list((low <= truth) & (truth <= high)), list(high - low), gap


def run(reps: int | None, seed: int, sizes=SIZES, pairs=PAIRS) -> list[CoverageRow]:
    """One row per subsample size, pooled over :data:`PAIRS` (``reps`` draws per pair, at most 1,000: a column
    with more values is not searched); none without the shared data."""
    if wide() is None:
        return []
    reps = min(reps or DEFAULT_REPS, 1000)
    rows = []
    for n in sizes:
        hits, widths, gap = [], [], 0.0
        for base, new in pairs:
            h, w, g = pair_rows(base, new, n, reps, seed)
            hits += h
            widths += w
            gap = max(gap, g)
        text = (f"MMLU-Pro held out, {len(pairs)} model pairs x {reps} draws of {n} shared questions, truth = "
                f"full-data difference (overall vs slice row: max abs diff {gap:.1g})")
        rows.append(coverage_row(METHOD, text, LEVEL, hits, widths))
    return rows + repeat_rows(None, seed)


# --- repeated samples per example (issue 41) ---------------------------------------------------------------------

def repeat_population(base: str, new: str, fresh: float = FRESH) -> tuple[np.ndarray, np.ndarray]:
    """Per-question probabilities of a right answer of ``base`` and ``new`` sampled again, on the questions both
    answered: each sample repeats the model's recorded answer, except with probability ``fresh`` it is a fresh
    answer, right with the question's share of the 29 models that answered it right, ``a_i``; so
    ``p_i = (1 - fresh) c_i + fresh a_i`` (``c_i``: the recorded 0/1 answer)."""
    table = wide()
    ease = table.drop(columns="category").mean(axis=1)
    both = table[[base, new]].dropna()
    a = ease.reindex(both.index).to_numpy()
    return ((1 - fresh) * both[base].to_numpy() + fresh * a, (1 - fresh) * both[new].to_numpy() + fresh * a)


def repeat_log(p_base: np.ndarray, p_new: np.ndarray, picks: np.ndarray, samples: int,
               rng: np.random.Generator) -> pd.DataFrame:
    """The validated log of the draws ``picks`` (one row of question indices per draw): draw r is task ``r``, each
    drawn question an example with ``samples`` Bernoulli samples of each run (a ``repeat`` column when more than
    one)."""
    from evalcore.data.validation import validate

    reps, size = picks.shape
    flat = picks.ravel()
    rows = flat.size * samples
    base = (rng.random((flat.size, samples)) < p_base[flat, None]).astype(float)
    new = (rng.random((flat.size, samples)) < p_new[flat, None]).astype(float)
    task = np.repeat(np.array([f"r{r:04d}" for r in range(reps)], dtype=object), size * samples)
    example = np.repeat(np.arange(flat.size), samples).astype(str)
    raw = pd.DataFrame({"model": np.repeat(["base", "new"], rows), "task": np.tile(task, 2),
                        "example_id": np.tile(example, 2), "correct": np.concatenate([base.ravel(), new.ravel()])})
    if samples > 1:
        raw["repeat"] = np.tile(np.tile(np.arange(samples), flat.size), 2)
    return validate(raw)


def repeat_hits(p_base: np.ndarray, p_new: np.ndarray, size: int, samples: int, reps: int, levels,
                rng: np.random.Generator) -> dict:
    """Per level, (hits, widths) of ``compare_runs`` on ``reps`` draws of ``size`` questions drawn with
    replacement from the population (so its mean difference ``mean(p_new - p_base)`` is the truth exactly), each
    answered ``samples`` times by each run; the draws are compared in one call (each a task, its interval the
    slice row, as :func:`pair_rows`), and draw 0 alone must give its slice row's numbers (``"gap"``)."""
    from evalcore.compare import compare_runs

    truth = float(np.mean(p_new - p_base))
    picks = rng.integers(0, p_base.size, (reps, size))
    log = repeat_log(p_base, p_new, picks, samples, rng)
    first = log[log["task"] == "r0000"]
    out = {"gap": 0.0}
    for level in levels:
        rows = compare_runs(log, "base", "new", level=level, min_slice=size).slices.set_index("value")
        rows = rows.loc[[f"r{r:04d}" for r in range(reps)]]
        low, high = rows["ci_low"].to_numpy(float), rows["ci_high"].to_numpy(float)
        out[level] = (list((low <= truth) & (truth <= high)), list(high - low))
        alone = compare_runs(first, "base", "new", level=level).overall.iloc[0]
        out["gap"] = max(out["gap"], *(abs(float(alone[k]) - float(rows.iloc[0][k]))
                                       for k in ("difference", "ci_low", "ci_high")))
    return out


def repeat_rows(reps: int | None, seed: int, sizes=REPEAT_SIZES, samples=REPEAT_SAMPLES,
                pairs=PAIRS) -> list[CoverageRow]:
    """One row per (samples, size, level) of :func:`repeat_hits`, pooled over :data:`PAIRS` (``reps`` draws per
    pair, default :data:`REPEAT_REPS`); none without the shared data."""
    if wide() is None:
        return []
    reps = min(reps or REPEAT_REPS, 1000)
    rows = []
    for m in samples:
        for n in sizes:
            hits = {level: ([], []) for level in REPEAT_LEVELS}
            gap = 0.0
            for base, new in pairs:
                rng = np.random.default_rng([seed, n, m, zlib.crc32(f"{base}|{new}".encode())])
                result = repeat_hits(*repeat_population(base, new), n, m, reps, REPEAT_LEVELS, rng)
                gap = max(gap, result.pop("gap"))
                for level in REPEAT_LEVELS:
                    hits[level][0].extend(result[level][0])
                    hits[level][1].extend(result[level][1])
            method = REPEAT_METHOD if m > 1 else METHOD
            text = (f"MMLU-Pro, {len(pairs)} model pairs x {reps} draws of {n} questions, {m} sample"
                    f"{'s' if m > 1 else ''} per question per run (p = {1 - FRESH:g} recorded + {FRESH:g} fresh at "
                    f"the question's ease), truth = population difference (draw alone vs slice: {gap:.1g})")
            rows += [coverage_row(method, text, level, *hits[level]) for level in REPEAT_LEVELS]
    return rows


# --- independent computation (formulas, not evalcore) -------------------------------------------------------------

def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson (1927) score interval of k successes in n."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def newcombe10(both: int, only_base: int, only_new: int, neither: int, level: float = LEVEL):
    """Newcombe (1998, Stat Med 17:2635-2650) method 10 for new - base: theta = (c - b) / n; Wilson limits
    (l1, u1) of new's rate p1 = (a + c) / n and (l2, u2) of base's p2 = (a + b) / n; phi = A / sqrt(product of
    the four margins) with A = a d - b c replaced by A - n / 2 when A > n / 2 and by 0 when 0 <= A <= n / 2 (the
    paper's correction of phi; phi = 0 when a margin is 0); L = theta - sqrt((p1 - l1)^2 - 2 phi (p1 - l1) (u2 - p2)
    + (u2 - p2)^2), U = theta + sqrt((u1 - p1)^2 - 2 phi (u1 - p1) (p2 - l2) + (p2 - l2)^2). The same formulas as
    Fagerland, Lydersen and Laake (2017), "Statistical Analysis of Contingency Tables", ch. 8 (the "Newcombe
    square-and-add" interval for the paired 2x2 table) and Altman et al. (2000), "Statistics with Confidence", p. 52."""
    a, b, c, d = both, only_base, only_new, neither
    n = a + b + c + d
    z = stats.norm.ppf(0.5 + level / 2)
    p1, p2 = (a + c) / n, (a + b) / n
    l1, u1 = wilson(a + c, n, z)
    l2, u2 = wilson(a + b, n, z)
    margins = float(a + b) * (c + d) * (a + c) * (b + d)
    cross = float(a * d - b * c)
    cross = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
    phi = cross / np.sqrt(margins) if margins > 0 else 0.0
    theta = p1 - p2
    low = theta - np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = theta + np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return theta, low, high


def independent(base_values: np.ndarray, new_values: np.ndarray, metric: str, level: float = LEVEL) -> dict:
    """difference, ci_low, ci_high, p_value computed from the formulas (module docstring): ``metric`` "correct"
    (0/1 values) Newcombe method 10 and exact McNemar; otherwise (non-binary scores) the paired t."""
    if metric == "correct":
        a = int(np.sum((base_values == 1) & (new_values == 1)))
        b = int(np.sum((base_values == 1) & (new_values == 0)))
        c = int(np.sum((base_values == 0) & (new_values == 1)))
        d = int(np.sum((base_values == 0) & (new_values == 0)))
        theta, low, high = newcombe10(a, b, c, d, level)
        p = stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
        return {"difference": theta, "ci_low": low, "ci_high": high, "p_value": p}
    test = stats.ttest_rel(new_values, base_values)
    ci = test.confidence_interval(level)
    return {"difference": float(np.mean(new_values - base_values)), "ci_low": ci.low, "ci_high": ci.high,
            "p_value": test.pvalue}


def agreement(pairs=PAIRS, metrics=("correct",)) -> pd.DataFrame:
    """Per pair and metric path: compare_runs on the full data beside :func:`independent`, and the largest absolute
    difference of the four numbers."""
    rows = []
    for base, new in pairs:
        ids, category, b, c = pair_data(wide(), base, new)
        for metric in metrics:
            ours = overall(two_model_log(ids, category, b, c, base, new, metric), base, new)
            ref = independent(b, c, metric)
            diffs = {k: abs(float(ours[k]) - float(ref[k])) for k in ref}
            rows.append({"base": base, "new": new, "metric": metric, "n": len(ids),
                         "difference": float(ours["difference"]), "ci_low": float(ours["ci_low"]),
                         "ci_high": float(ours["ci_high"]), "p_value": float(ours["p_value"]),
                         "ref_ci_low": ref["ci_low"], "ref_ci_high": ref["ci_high"], "ref_p_value": ref["p_value"],
                         "max_abs_diff": max(diffs.values()), "method": ours.get("method", "")})
    return pd.DataFrame(rows)


def frame_markdown(frame: pd.DataFrame) -> str:
    """``frame`` as a Markdown table (numbers to 6 significant digits)."""
    def cell(v):
        return f"{v:.6g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage.compare", description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if wide() is None:
        print(f"skipped: {MMLU} is absent")
        return 0
    table = agreement()
    print(frame_markdown(table))
    print(markdown(run(args.reps, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
