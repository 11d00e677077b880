"""The report's opening summary, written from the sections' numbers (never from templates of the data's text).

One sentence per finding: the top model with its interval, which models are distinguishable, the largest
calibration problem, where labels would help most, what the AI annotator is worth, the strongest model in battles.
Each sentence carries its interval; names from the data stay plain text (the HTML layer escapes them).
"""

from __future__ import annotations

from evalcore.stats.figures import percent
from evalcore.stats.overall import DEFAULT, NAMES
from evalcore.report.sections import Section, Settings


def _ci(facts: dict, digits: int = 3) -> str:
    return f"{facts['estimate']:.{digits}f} ({facts['ci_low']:.{digits}f} to {facts['ci_high']:.{digits}f})"


def _names(names: list[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def sentences(sections: dict[str, Section], s: Settings) -> list[str]:
    """The summary, most important first."""
    out = []
    level = percent(s.level)
    board, acc = sections.get("leaderboard"), sections.get("accuracy")
    if board is not None:
        f = board.facts
        out.append(f"Top model: {f['top']}, overall accuracy ({NAMES[DEFAULT]}) {_ci(f)} ({level} interval).")
        if f["tied_with"]:
            out.append(f"{f['top']} is not distinguishable from {_names(f['tied_with'])}; {f['separated']} of the "
                       f"{f['pairs']} pairs of models differ ({level} simultaneous intervals, all pairs together).")
        else:
            out.append(f"{f['top']} is ahead of every other model; {f['separated']} of the {f['pairs']} pairs of "
                       f"models differ ({level} simultaneous intervals, all pairs together).")
    elif acc is not None:
        f = acc.facts
        out.append(f"{'Top model' if f['n_models'] > 1 else 'Model'}: {f['top']}, {f['metric']} {_ci(f)} "
                   f"({level} interval).")
    cal = sections.get("calibration")
    if cal is not None:
        f = cal.facts
        if f["miscalibrated"]:
            way = "overconfident" if f["overconfident"] else "underconfident"
            out.append(f"Largest calibration problem: {f['worst']} ({way}), ECE {_ci({**f, 'estimate': f['ece']})}; "
                       f"{f['miscalibrated']} of {f['n_models']} models are measurably miscalibrated.")
        else:
            out.append(f"No model is measurably miscalibrated: the largest ECE, {f['worst']}'s "
                       f"{_ci({**f, 'estimate': f['ece']})}, is within its interval of 0.")
    sub = sections.get("subgroups")
    if sub is not None:
        f = sub.facts
        examples = "example" if f["widest_n"] == 1 else "examples"
        out.append(f"Labels would help most in subgroup {f['widest']} of {f['model']}: {f['widest_n']} labeled "
                   f"{examples} and the widest EB interval ({f['widest_low']:.3f} to {f['widest_high']:.3f}).")
    plan = sections.get("labeling")
    if plan is not None:
        f = plan.facts
        if "efficiency" in f:  # a log in an engine: the plan's relative efficiency
            out.append(f"For {f['model']}, a stratified sample ({f['design']}) is predicted to reach the precision of "
                       f"a random sample with about {f['efficiency']:.0%} of its labels.")
        else:
            out.append(f"To know {f['model']}'s accuracy to within an interval {f['width']:.2f} wide, about "
                       f"{f['stratified']:,.0f} labels suffice with a stratified sample ({f['design']}) against "
                       f"{f['srs']:,.0f} at random (predicted from {f['proxy']}).")
    ppi = sections.get("ppi")
    if ppi is not None:
        f = ppi.facts
        out.append(f"With the annotator ({f['annotator']}), the {f['n']:,} labels are worth about "
                   f"{f['ess_ratio']:.1f} times as many (median effective sample size over models); best model "
                   f"{f['top']}, {_ci(f)} (PPI++).")
    bt = sections.get("battles")
    if bt is not None:
        f = bt.facts
        out.append(f"Strongest model in the battles: {f['top']}, Bradley-Terry coefficient {_ci(f, 2)} "
                   f"({f['method']}).")
    return out
