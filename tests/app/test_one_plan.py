"""The Labeling budget page and the report give one labeling plan (issue 47): on the demo, at the same level and
with the defaults of both, the page's answer and the report's labeling section and summary name the same model and
the same numbers of labels, stratified and at random (both call evalcore.sampling.plan.labeling_plan)."""

from __future__ import annotations

from evalcore.data.schema import LOG
from evalcore.engine import as_log
from evalcore.report.sections import Settings, labeling
from evalcore.report.summary import sentences
from evalcore.sampling import plan
from test_answer_sampling_autoeval import answer_after_title, counts_in, goto
from test_pages import independent_demo, open_app


def test_the_page_and_the_report_give_the_same_plan():
    at = open_app()  # the synthetic demo, its leader atlas-l, the level 95%
    goto(at, "sampling", "Labeling budget")
    answer = answer_after_title(at, "Labeling budget")
    n_stratified, n_random = counts_in(answer)[:2]
    assert "atlas-l's accuracy" in answer and "stratified by the model's confidence (proportional" in answer

    settings = Settings()
    assert (settings.target_width, settings.n_strata) == (plan.WIDTH, plan.N_STRATA)
    section = labeling(as_log(independent_demo("synthetic")), LOG, settings, top="atlas-l")
    facts = section.facts
    assert (facts["model"], facts["stratified"], facts["srs"]) == ("atlas-l", n_stratified, n_random)
    said = next(line for line in sentences({"labeling": section}, settings) if "labels suffice" in line)
    assert f"about {n_stratified:,} labels suffice with a stratified sample (proportional + ht) against " \
           f"{n_random:,} at random (predicted from the model's own confidence)" in said
