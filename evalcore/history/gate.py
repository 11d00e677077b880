r"""The gate of a series (``evalcore compare --series NAME NEW``): a new run against an accepted baseline and against
the series' reference, so that a series that loses a little at each run does not pass every gate.

Which runs it compares with (:func:`baseline_and_reference`), among the runs of the series before the new one:

* a run is **accepted** when it passed the gate, when a member accepted it (``evalcore workspace series accept``,
  the History page; who and when are kept), or when it was saved without a gate (the first run of a series, a
  series built before there was a gate); a run the gate **failed** (exit 3) is rejected until a member accepts it;
* the **baseline** is the pinned run, else the latest accepted run (a rejected run never becomes the baseline);
* the **reference** is the pinned run, else the latest run a member accepted (accepting a run acknowledges the
  drift up to it), else the first accepted run. With a pin, baseline and reference are the same run.
* a run stamped more than a day in the future (kept before such times were refused,
  :attr:`~evalcore.workspace.workspace.SeriesRun.stamped_ahead`) is neither, unless pinned: it would stay the latest
  run for good.

The new run is compared with both (:func:`evalcore.compare.compare_runs`; with one comparison where they are the
same run). The slices of the two comparisons enter one Benjamini-Hochberg procedure at ``fdr`` together
(:meth:`evalcore.compare.Comparison.with_q_values`), as the History page controls the false discovery rate over
runs and slices; each comparison's overall verdict is its own (a regression when its interval lies below
``-margin``). The gate's verdict is "regression" when either comparison is one: a drop against the reference
fails the gate once the cumulative loss is detectable, whatever the last step was. On an unchanged run each overall
test at level :math:`1 - \alpha` wrongly fails at most :math:`\alpha/2` of the time (the lower tail of its two-sided
interval), two of them at most :math:`\alpha`, on top of the false alarms the slices' false discovery rate allows.

A run is keyed by the content digest of its validated log (:meth:`evalcore.workspace.Workspace.content_digest`),
so the verdict recorded (:func:`record`) holds whether the run is saved into the series before or after it is gated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcore.compare import Comparison, compare_runs
from evalcore.compare.runs import runs_from_logs
from evalcore.compare.slices import bh_qvalues
from evalcore.errors import EvalDataError
from evalcore.workspace.workspace import SeriesRun, Workspace


@dataclass(frozen=True)
class Gate:
    """The gate's answer: the series, the model followed, the new run's name and digest, the ``baseline`` and
    ``reference`` runs (catalog entries), whether they are the pinned run, the comparison with each
    (``against_reference`` None where the reference is the baseline) and the gate's ``verdict``."""
    series: str
    model: str
    new: str
    digest: str
    baseline: SeriesRun
    reference: SeriesRun
    pinned: bool
    against_baseline: Comparison
    against_reference: Comparison | None
    verdict: str

    @property
    def passed(self) -> bool:
        return self.verdict != "regression"

    def comparisons(self) -> list[tuple[str, SeriesRun, Comparison]]:
        """("baseline" or "reference", the run, its comparison), the reference's only where it is another run."""
        out = [("baseline", self.baseline, self.against_baseline)]
        if self.against_reference is not None:
            out.append(("reference", self.reference, self.against_reference))
        return out

    def describe(self) -> str:
        """One line naming what the new run was compared with, e.g. "series 'bot': run9 against its baseline
        nightly-7 (the latest accepted run, 2026-11-17T02:00:00+00:00) and its reference nightly-0 (the first
        accepted run, 2026-11-10T02:00:00+00:00)"."""
        def named(run: SeriesRun, role: str) -> str:
            return f"{run.name} ({role}, {run.run_time})"

        if self.pinned:
            return f"series '{self.series}': {self.new} against its pinned run {named(self.baseline, 'baseline and reference')}"
        base = named(self.baseline, "the latest accepted run")
        if self.against_reference is None:
            return f"series '{self.series}': {self.new} against its baseline {base}, also its reference"
        why = "accepted by a member" if self.reference.status == "accepted" else "the first accepted run"
        return (f"series '{self.series}': {self.new} against its baseline {base} and its reference "
                f"{named(self.reference, why)}")

    def info(self) -> dict:
        """The JSON's ``series`` object: name, model, the baseline's and reference's run names, datasets and times,
        whether pinned, and per comparison its verdict and minimum detectable difference."""
        verdicts = [{"against": role, "run": run.name, "dataset": run.dataset_id, "verdict": c.verdict,
                     "difference": float(c.overall["difference"].iloc[0]),
                     "ci_low": float(c.overall["ci_low"].iloc[0]), "ci_high": float(c.overall["ci_high"].iloc[0]),
                     "minimum_detectable_difference": float(c.overall["minimum_detectable_difference"].iloc[0])}
                    for role, run, c in self.comparisons()]
        return {"name": self.series, "model": self.model, "new": self.new, "digest": self.digest,
                "baseline": self.baseline.name, "baseline_dataset": self.baseline.dataset_id,
                "baseline_time": self.baseline.run_time, "reference": self.reference.name,
                "reference_dataset": self.reference.dataset_id, "reference_time": self.reference.run_time,
                "pinned": self.pinned, "gate": self.verdict, "verdicts": verdicts}


def holding(entries: list[SeriesRun], model: str) -> list[SeriesRun]:
    """The runs of ``entries`` that hold results of ``model`` (a run of another model is never its baseline or
    reference, as the History page leaves it out: :meth:`evalcore.history.load.Series.comparable`)."""
    return [e for e in entries if model in e.summary.get("models", [])]


def baseline_and_reference(entries: list[SeriesRun], pinned: str | None, digest: str) -> tuple[SeriesRun, SeriesRun]:
    """(baseline, reference) for a new run of content ``digest`` among the runs ``entries`` (oldest first) with the
    pinned dataset ``pinned`` (module docstring). EvalDataError, saying what to do, when no run can be either."""
    position = next((i for i, e in enumerate(entries) if e.digest == digest), len(entries))
    earlier = [e for e in entries[:position] if e.digest != digest]
    pin = next((e for e in entries if e.dataset_id == pinned and e.digest != digest), None)
    if pin is not None:
        return pin, pin
    accepted = [e for e in earlier if e.accepted and not e.stamped_ahead]
    if not accepted:
        name = entries[0].series if entries else "the series"
        ahead = [e.name for e in earlier if e.accepted and e.stamped_ahead]
        why = (f"the runs {', '.join(ahead[:5])} are stamped more than a day in the future, and every other earlier "
               "run failed the gate" if ahead else "every earlier run failed the gate")
        raise EvalDataError(f"No accepted run of the series {name!r} comes before this one: {why}. Accept one as a "
                            "baseline (evalcore workspace series accept SERIES RUN, or on the History page) or pin "
                            "one.")
    by_member = [e for e in accepted if e.status == "accepted"]
    return accepted[-1], by_member[-1] if by_member else accepted[0]


def run_rows(frame: pd.DataFrame, model: str) -> pd.DataFrame:
    """The rows of ``model`` in a run's ``frame`` (its validation report kept in ``attrs``)."""
    rows = frame[frame["model"].astype(str) == model]
    rows.attrs = frame.attrs
    return rows


def gate(workspace: Workspace, series: str, new_rows: pd.DataFrame, new_name: str, digest: str, model: str,
         by: list[str] | None = None, level: float | None = None, margin: float = 0.0, fdr: float = 0.1,
         seed: int = 0, pairs_of_slices: bool = False, min_slice: int = 20, metric: str | None = None,
         viewer: str | None = None) -> Gate:
    """Compare ``new_rows`` (the new run's rows of ``model``, named ``new_name``, content ``digest``) with the
    baseline and the reference of ``series`` among the runs ``viewer`` may see (as the History page shows them to
    that member); the other arguments as :func:`evalcore.compare.compare_runs` takes them."""
    entries = holding(workspace.series_runs(series, viewer), model)
    pinned = workspace.series_baseline(series)
    baseline, reference = baseline_and_reference(entries, pinned, digest)
    runs = [(baseline.name, run_rows(workspace.dataset(baseline.dataset_id, viewer), model))]
    if reference.dataset_id != baseline.dataset_id:
        runs.append((reference.name, run_rows(workspace.dataset(reference.dataset_id, viewer), model)))
    combined = runs_from_logs([*runs, (new_name, new_rows)], named=True)
    names = list(dict.fromkeys(combined["model"].astype(str)))
    settings = {"by": by, "level": level, "margin": margin, "fdr": fdr, "seed": seed,
                "pairs_of_slices": pairs_of_slices, "min_slice": min_slice, "metric": metric}
    found = [compare_runs(combined, base, names[-1], **settings) for base in names[:-1]]
    if len(found) == 2:  # one Benjamini-Hochberg procedure over both comparisons' slices
        sizes = [len(c.slices) for c in found]
        q = bh_qvalues(np.concatenate([c.slices["p_value"].to_numpy(float) for c in found]))
        found = [found[0].with_q_values(q[:sizes[0]]), found[1].with_q_values(q[sizes[0]:])]
    verdict = "regression" if any(c.verdict == "regression" for c in found) else found[0].verdict
    return Gate(series, model, names[-1], digest, baseline, reference, pinned is not None, found[0],
                found[1] if len(found) == 2 else None, verdict)


def record(workspace: Workspace, result: Gate) -> None:
    """Keep the gate's verdict on the new run ("failed" for a regression, else "passed") with the datasets it was
    compared with."""
    workspace.record_verdict(result.series, result.digest, "passed" if result.passed else "failed",
                             result.baseline.dataset_id, result.reference.dataset_id)


__all__ = ["Gate", "baseline_and_reference", "gate", "holding", "record", "run_rows"]
