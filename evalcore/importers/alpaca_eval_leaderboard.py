"""AlpacaEval leaderboard CSVs: one row per model, its win rate against a baseline as judged by an AI annotator.

Format (tatsu-lab/alpaca_eval: ``src/alpaca_eval/main.py`` writes ``<output_path>/leaderboard.csv`` with
``pd.DataFrame.from_dict(leaderboard, orient="index").to_csv()``, so the first header cell is EMPTY and holds the
model (``"Unnamed: 0"`` after a pandas round trip, as ``src/alpaca_eval/utils.py`` reads it back); the official
leaderboards are ``src/alpaca_eval/leaderboards/data_AlpacaEval_2/*_leaderboard.csv`` (AlpacaEval 2) and
``data_AlpacaEval/*.csv`` (AlpacaEval 1)). Columns, read by name (their order and presence vary by file):

- ``win_rate`` and ``standard_error``: percent (0-100), the mean preference for the model over the baseline (a draw
  counts half) and its standard error (``src/alpaca_eval/metrics/helpers.py`` ``describe_head2head``);
- ``n_wins``, ``n_wins_base``, ``n_draws``, ``n_total`` (805 for the full AlpacaEval set);
- ``length_controlled_winrate`` and ``lc_standard_error``: percent, the length-controlled win rate, AlpacaEval 2's
  main metric (``src/alpaca_eval/metrics/glm_winrate.py``; the leaderboard is sorted by it, ``main.py``), and its
  standard error (empty in some rows);
- ``discrete_win_rate``, ``mode`` (minimal / verified / community / dev), ``avg_length``: not used.

The website's copies (``docs/data_AlpacaEval*/*_leaderboard.csv``: ``name, [length_controlled_winrate,] win_rate,
avg_length, link, samples, filter``, without ``n_total`` or standard errors) are claimed and refused, naming the
package's CSV to upload instead; so is the leaderboard of evaluators (annotators' agreement with humans: ``Human
agreement, Price [$/1000 examples], Spearman corr., ...``), which holds no model's results.

AlpacaEval 1's leaderboards may also have a ``length_controlled_winrate`` column, added later and empty in some rows,
without ``lc_standard_error``; their main metric is ``win_rate``.

Mapping to a leaderboard summary: ``model`` = the first column, ``n`` = ``n_total``, ``accuracy`` =
``length_controlled_winrate`` / 100 when the file has it with its ``lc_standard_error`` column (or in every row) and
is not in AlpacaEval 1's folder ``data_AlpacaEval``, else ``win_rate`` / 100, ``se`` = its standard
error / 100 (``lc_standard_error`` or ``standard_error``; missing where the cell is empty; 0 for the baseline).
``task`` = ``alpaca_eval_2`` (a length-controlled leaderboard; ``alpaca_eval`` without one, or in AlpacaEval 1's
folder ``data_AlpacaEval``), followed by the annotator the file is named after unless it is a run's
``leaderboard.csv`` (e.g. ``alpaca_eval_2 (weighted_alpaca_eval_gpt4_turbo)``): each annotator's leaderboard is a
task of its own. The verdicts are an AI judge's (AlpacaEval 2: the GPT-4 Turbo annotator
``weighted_alpaca_eval_gpt4_turbo`` against the baseline ``gpt4_1106_preview``), never human. The baseline's own
row (all ``n_total`` comparisons draws: it was compared with itself, 50% with standard error 0) is kept and named
in the notes: it is a reference, not a result.
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath

import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.data.reading import read_table
from evalcore.importers.base import Imported, LogFile, as_number, header_cells, left_out_note

TOOL = "AlpacaEval leaderboard"
_INDEX_NAMES = ("", "unnamed: 0")
_LC, _LC_SE, _WR, _WR_SE, _N = "length_controlled_winrate", "lc_standard_error", "win_rate", "standard_error", "n_total"


def sniff(file: LogFile) -> bool:
    """A CSV whose header has ``win_rate`` and ``n_total`` and either starts with an empty (or pandas'
    "Unnamed: 0") cell or has ``n_wins_base``, which no other tool writes."""
    try:
        if not file.base.lower().endswith((".csv", ".txt")) and b"win_rate" not in file.head(512):
            return False
        header = [cell.lower() for cell in header_cells(file)]
        if _is_website_table(header) or _is_evaluators_table(header):
            return True
        if _WR not in header or _N not in header:
            return False
        return header[0] in _INDEX_NAMES or "n_wins_base" in header
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _is_website_table(header: list[str]) -> bool:
    """The leaderboard table of AlpacaEval's website (``docs/data_AlpacaEval*/*_leaderboard.csv``): ``name,
    [length_controlled_winrate,] win_rate, avg_length, link, samples, filter``, without counts."""
    return (bool(header) and header[0] == "name" and _WR in header and _N not in header
            and {"avg_length", "samples", "filter"} <= set(header))


def _is_evaluators_table(header: list[str]) -> bool:
    """AlpacaEval's leaderboard of evaluators (``src/alpaca_eval/leaderboards/evaluators/evaluators_leaderboard.csv``,
    ``results_evaluators/**/leaderboard.csv``): one row per annotator, how well it agrees with human annotators
    (``Human agreement``, ``Spearman corr.``, ``Price [$/1000 examples]``, ...), not models' results."""
    return bool(header) and {"human agreement", "spearman corr."} <= set(header)


def convert(files: list[LogFile]) -> list[Imported]:
    """Every file's rows as one leaderboard summary."""
    frames, notes, names = [], [], []
    for file in files:
        frame, file_notes = _one(file)
        frames.append(frame)
        notes.extend(file_notes)
        names.append(file.name)
    return [Imported(pd.concat(frames, ignore_index=True), "summary", TOOL, tuple(names), notes)]


def _one(file: LogFile) -> tuple[pd.DataFrame, list[str]]:
    try:
        raw = read_table(file.data, file.budget.limits, file.budget, file.name)
    except EvalDataError as exc:
        raise EvalDataError(f"{file.name}: {exc}") from exc
    columns = {str(c).strip().lower(): c for c in raw.columns}
    if _is_website_table(list(columns)):
        raise EvalDataError(
            f"{file.name}: this is the leaderboard table of AlpacaEval's website (name, win rates, avg_length, link, "
            "samples, filter): it gives no number of comparisons (n_total) nor standard errors, which evalcore needs. "
            "Upload the leaderboard CSV of the alpaca_eval package (src/alpaca_eval/leaderboards/data_AlpacaEval_2/"
            "<annotator>_leaderboard.csv), or the leaderboard.csv that alpaca_eval evaluate writes, instead.")
    if _is_evaluators_table(list(columns)):
        raise EvalDataError(
            f"{file.name}: this is AlpacaEval's leaderboard of evaluators (one row per AI annotator: its agreement "
            "with human annotators, price and biases), not of models: it holds no model's results. Upload a models' "
            "leaderboard (src/alpaca_eval/leaderboards/data_AlpacaEval_2/<annotator>_leaderboard.csv, or the "
            "leaderboard.csv that alpaca_eval evaluate writes) or a model's annotations.json.")
    model_column = raw.columns[0]
    for needed in (_WR, _N):
        if needed not in columns:
            raise EvalDataError(f"{file.name}: an AlpacaEval leaderboard has a '{needed}' column; this file has "
                                f"only {', '.join(map(str, raw.columns))}.")
    if len(raw) == 0:
        raise EvalDataError(f"{file.name}: the AlpacaEval leaderboard has no rows.")

    def numbers(name: str) -> pd.Series:
        if name not in columns:
            return pd.Series(math.nan, index=raw.index)
        return raw[columns[name]].map(as_number)

    lc = numbers(_LC)
    first_version = PurePosixPath(file.folder).name.lower() == "data_alpacaeval"
    controlled = not first_version and lc.notna().any() and (_LC_SE in columns or lc.notna().all())
    metric, se_name = (_LC, _LC_SE) if controlled else (_WR, _WR_SE)
    value, se, n = numbers(metric), numbers(se_name), numbers(_N)
    models = raw[model_column].map(lambda v: None if pd.isna(v) else str(v).strip() or None)
    stem = PurePosixPath(file.base).stem
    task = "alpaca_eval_2" if controlled else "alpaca_eval"
    if stem.lower() != "leaderboard":
        task = f"{task} ({stem.removesuffix('_leaderboard')})"
    what = "the length-controlled win rate, AlpacaEval 2's main metric" if controlled else "the raw win rate"
    notes = [f"{file.name}: AlpacaEval leaderboard read as a summary of task '{task}': accuracy = '{metric}' / 100 "
             f"({what}"
             f"), its standard error from '{se_name}' / 100, n = '{_N}'. The verdicts come from an AI judge (an "
             "annotator model such as GPT-4 Turbo, AlpacaEval 2's weighted_alpaca_eval_gpt4_turbo) comparing each "
             "model's answers with a baseline model's (AlpacaEval 2: gpt4_1106_preview): a win rate against that "
             "baseline, not a human judgement nor a proportion of correct answers."]
    bad_value = value.isna() | (value < 0) | (value > 100)
    bad = models.isna() | bad_value | n.isna() | (n < 1) | (n != n.round())
    if bad.any():
        rows = listed(list(bad[bad].index + 2))
        notes.append(left_out_note(int(bad.sum()), len(raw), f"rows of {file.name}",
                                   f"no model name, no '{metric}' in 0-100 or no whole '{_N}' (lines {rows})"))
    bad_se = se.notna() & (se < 0)
    frame = pd.DataFrame({"model": models, "task": task, "n": n, "accuracy": value / 100,
                          "se": se.where(~bad_se) / 100})[~bad].reset_index(drop=True)
    if frame.empty:
        raise EvalDataError(f"{file.name}: no row has a model name, a '{metric}' between 0 and 100 and a whole "
                            f"'{_N}'.")
    frame["n"] = frame["n"].astype("int64")
    draws = numbers("n_draws")[~bad].reset_index(drop=True)
    is_baseline = (draws == frame["n"]).to_numpy()
    baseline = frame["model"][is_baseline].tolist()
    if baseline:
        frame.loc[is_baseline, "se"] = 0.0
        notes.append(f"{file.name}: {', '.join(repr(b) for b in baseline)} is the baseline (compared with itself: "
                     f"all {_N} comparisons are draws, 50% by construction, standard error 0); its row is kept as a "
                     "reference, not a result.")
    no_se = int(frame["se"].isna().sum())
    if no_se:
        notes.append(f"{file.name}: {no_se:,} of {len(frame):,} models have no '{se_name}' (empty cell): their "
                     "intervals come from n alone, as for a proportion.")
    mode = raw[columns["mode"]][~bad] if "mode" in columns else pd.Series(dtype=object)
    dev = int((mode.astype(str).str.strip().str.lower() == "dev").sum())
    if dev:
        notes.append(f"{file.name}: {dev:,} row(s) have mode 'dev' (entries AlpacaEval has not verified).")
    return frame, notes
