"""The stakeholder report of a comparison campaign (issue 48): which model is better, from the campaign's labels
(``evalcore label report CAMPAIGN_ID -o F.html``).

One section, "Comparison campaign": its answer (:func:`evalcore.labeling.comparison.comparison_sentence`, the words
of the Label and Compare pages and of ``evalcore label status``), every pair's difference with its interval
(:func:`evalcore.labeling.comparison.pairs_table`), the labels per agreement pattern
(:func:`evalcore.labeling.comparison.pattern_table`) and what its interval means; the numbers are
:meth:`evalcore.labeling.comparison.ComparisonCampaign.estimate`'s, as ``label status --json`` writes them.
"""

from __future__ import annotations

from datetime import datetime, timezone

from evalcore.labeling.comparison import comparison_sentence, pairs_table, pattern_table
from evalcore.labeling.designs import COMPARISON_DESIGN_NAMES
from evalcore.report.build import Provenance, Report
from evalcore.report.sections import Section, Settings


def comparison_section(campaign, estimate) -> Section:
    """The section of a comparison campaign (:class:`evalcore.labeling.comparison.ComparisonCampaign`) with its
    ``estimate``; its facts are the estimate's numbers (:meth:`.difference.ComparisonEstimate.as_dict`) with the
    sentence and the campaign's id."""
    info = campaign.info
    pool = info.pool
    said = comparison_sentence(info, estimate)
    intro = (f"{said} The campaign '{info.name}' draws its examples by its design, "
             f"{COMPARISON_DESIGN_NAMES[info.design]}: of the {pool['N']:,} examples the models share, their "
             f"outputs differ on {pool['N_D']:,}. People judged each distinct output right or wrong. Each difference "
             "is model_a's accuracy minus model_b's over every shared example, estimated without bias by the design "
             "(each label weighted by its inclusion probability; where every model gives the same output the "
             "difference is known to be 0).")
    tables = {"every pair (difference and interval; accuracy, first minus second)": pairs_table(estimate),
              "labels per agreement pattern": pattern_table(info, estimate)}
    notes = list(info.notes)
    if estimate.skipped:
        notes.append(f"{estimate.skipped:,} drawn examples were skipped or judged differently (awaiting "
                     "adjudication): the interval counts each at its worst and at its best, so it is wider than the "
                     "labels alone would make it.")
    facts = {**estimate.as_dict(), "campaign": campaign.id, "name": info.name, "sentence": said}
    return Section("comparison_campaign", "Comparison campaign", intro, estimate.meaning, tables, [], facts, notes)


def comparison_report(campaign) -> Report:
    """The report of a comparison campaign: its section, the sentence first in the summary, then the design."""
    info = campaign.info
    estimate = campaign.estimate()
    section = comparison_section(campaign, estimate)
    created = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    provenance = Provenance((), info.pool["N"], len(info.models), "comparison campaign", {}, created,
                            f"the labeling campaign '{info.name}' ({info.id}) on the dataset {info.dataset_id}: "
                            f"{estimate.labels + estimate.skipped:,} examples drawn")
    summary = [section.facts["sentence"], f"Design: {info.description}; {estimate.interval}."]
    return Report(f"Labeling campaign {info.name}", Settings(level=info.level, seed=info.seed), [section], summary,
                  [], provenance)
