"""Label page: an annotation queue run by statistics. One example at a time in the design's order, the estimate
with its interval beside it after every label, and "you can stop" once the interval is narrow enough
(:mod:`evalcore.labeling`). A campaign opens from its address (``?campaign=ID``)."""

import hashlib
import math

import pandas as pd
import streamlit as st

from evalcore.data.display import literal
from evalcore.errors import EvalDataError
from evalcore.labeling import agreement
from evalcore.labeling.campaign import Campaign, sentence
from evalcore.labeling.figures import estimate_figure
from evalcore.labeling.queue import DESIGN_NAMES, DESIGNS
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common.labeling_cache import example_table
from pages.common.navigation import ensure_app_navigation
from pages.common.workspace_store import locked, viewer, workspace

ensure_app_navigation()

ANNOTATOR = "label_annotator"
WHAT = {"correct": "accuracy", "score": "mean score", "pairwise": "share model B wins"}

st.title("Label")
member = viewer()


def _annotator() -> str | None:
    """The signed-in member; on an instance without sign-in, the name typed here (kept for the session)."""
    if member is not None:
        return member
    name = st.text_input("Your name (each label carries it)", key=ANNOTATOR, placeholder="e.g. alice")
    return name.strip() or None


def _open(campaign_id: str) -> Campaign | None:
    try:
        return Campaign.open(workspace(), campaign_id, viewer=member)
    except (LookupError, PermissionError) as exc:
        st.error(literal(str(exc).strip("'\"")))
        return None


# ------------------------------------------------------------------------------------------------ no campaign yet
def _new_campaign() -> None:
    """Choose campaigns to open, or plan a new one on a saved dataset (or the session's data, saved first)."""
    campaigns = Campaign.list(workspace(), member)
    render.answer(f"{len(campaigns)} labeling campaign{'' if len(campaigns) == 1 else 's'} in this workspace: open "
                  "one, or start a new one below.")
    if campaigns:
        listing = pd.DataFrame({"campaign": [c.name for c in campaigns], "model": [c.model for c in campaigns],
                                "design": [DESIGN_NAMES[c.design] for c in campaigns],
                                "owner": [c.owner or "" for c in campaigns], "created": [c.created for c in campaigns],
                                "link": [f"?campaign={c.id}" for c in campaigns]})
        render.table(listing, "labeling campaigns", link=st.column_config.LinkColumn("open", display_text="open"))
    if (why := locked()) is not None:
        st.info(literal(why))
        return
    st.subheader("Start a campaign", anchor=False)
    datasets = workspace().datasets(member)
    choices = {"current": f"The current data ({ds.data_name()}; saved to the workspace when the campaign starts)",
               **{d.id: f"{d.name} ({d.rows:,} rows, {d.models} models)" for d in datasets}}
    with st.form("new_campaign"):
        dataset = st.selectbox("Dataset", list(choices), format_func=choices.get)
        model = st.text_input("Model whose outputs are labeled (battles: 'model_a vs model_b', or 'all')",
                              value=_leader())
        c1, c2, c3 = st.columns(3)
        design = c1.selectbox("Design", DESIGNS, index=DESIGNS.index("neyman"), format_func=DESIGN_NAMES.get)
        goal = c2.radio("Size", ["target half-width", "label budget"], horizontal=True)
        size = c3.number_input("±target (points of the scale) or budget (labels)", min_value=0.001, value=0.02)
        m1, m2, m3 = st.columns(3)
        metric = m1.selectbox("Metric", ["as the log has it", "correct", "score", "pairwise"],
                              help="0/1 correct; a score on the scale beside; A / B / tie for battles")
        low = m2.number_input("Score scale: from", value=0.0)
        high = m3.number_input("to", value=1.0)
        c4, c5, c6 = st.columns(3)
        seed = c4.number_input("Seed", min_value=0, value=0, step=1)
        overlap = c5.number_input("Labels per example (overlap, for agreement)", min_value=1, value=1, step=1)
        shared = c6.checkbox("Every signed-in member labels it", value=member is not None)
        start = st.form_submit_button("Start the campaign", type="primary")
    if not start:
        return
    try:
        dataset_id = _saved(dataset)
        campaign = Campaign.create(
            workspace(), dataset_id, model.strip(), design, target=size if goal.startswith("target") else None,
            budget=int(size) if goal.startswith("label") else None, level=_level(), seed=int(seed), owner=member,
            overlap=int(overlap), shared=shared, metric=None if metric.startswith("as ") else metric,
            scale=(low, high) if metric == "score" else None)
    except (EvalDataError, LookupError, PermissionError) as exc:
        st.error(literal(str(exc).strip("'\"")))
        return
    st.query_params["campaign"] = campaign.id
    st.rerun()


def _leader() -> str:
    """The selection's leader (the first selected model), the model a new campaign labels by default."""
    data = ds.try_active_data(link=False)
    if data is None or data.report.kind != "log":
        return ""
    sel = selection.current(data)
    return sel.models[0] if sel.models else ""


def _level() -> float:
    data = ds.try_active_data(link=False)
    return selection.current(data).level if data is not None else selection.DEFAULT_LEVEL


def _saved(choice: str) -> str:
    """The dataset id of the choice: the session's data is saved to the workspace first."""
    if choice != "current":
        return choice
    data = ds.active_data()
    return workspace().add_dataset(data.loaded, ds.data_name(), owner=member).id


# ------------------------------------------------------------------------------------------------ a campaign
def _give(campaign: Campaign, example_id: str, who: str, value, skipped: bool = False) -> None:
    """A button's callback: keep the label (before the rerun draws the next example)."""
    note = st.session_state.get("label_note") or None
    try:
        campaign.record(example_id, who, value, note=note, skipped=skipped)
        st.session_state["label_note"] = ""
    except (EvalDataError, PermissionError) as exc:
        st.session_state["label_error"] = str(exc)


def _give_score(campaign: Campaign, example_id: str, who: str) -> None:
    """The score typed (read at the click: a callback's arguments were bound when the button was drawn)."""
    _give(campaign, example_id, who, st.session_state["label_score"])


def _give_chosen(campaign: Campaign, who: str) -> None:
    """Replace the label of the example chosen in "Change one of your labels" with the value chosen there."""
    _give(campaign, st.session_state["relabel_example"], who, st.session_state["relabel_value"])


def _show_text(row: pd.Series | None, role: str, title: str) -> None:
    if row is not None and role in row and isinstance(row[role], str) and row[role]:
        st.markdown(f"**{title}**")
        st.text(row[role])  # literal: never Markdown or HTML


def _flipped(seed: int, example_id: str) -> bool:
    """Whether a battle shows model B on the left (seeded per example, so a reload shows the same order)."""
    return int(hashlib.sha256(f"{seed}:{example_id}".encode()).hexdigest(), 16) % 2 == 1


def _buttons(campaign: Campaign, example_id: str, who: str) -> None:
    info = campaign.info
    args = (campaign, example_id, who)
    cols = st.columns(4)
    if info.metric == "correct":
        cols[0].button("Correct", on_click=_give, args=(*args, 1), type="primary", shortcut="y",
                       icon=":material/check:", key="label_correct")
        cols[1].button("Incorrect", on_click=_give, args=(*args, 0), shortcut="n", icon=":material/close:",
                       key="label_incorrect")
    elif info.metric == "pairwise":
        left, right = (1, 0) if _flipped(info.seed, example_id) else (0, 1)  # the display order is random
        cols[0].button("Left is better", on_click=_give, args=(*args, left), shortcut="a", key="label_left")
        cols[1].button("Right is better", on_click=_give, args=(*args, right), shortcut="b", key="label_right")
        cols[2].button("Tie", on_click=_give, args=(*args, 0.5), shortcut="t", key="label_tie")
    else:
        low, high = info.scale
        cols[0].number_input(f"Score ({low:g}–{high:g})", min_value=low, max_value=high, value=low,
                             key="label_score")
        cols[1].button("Save the score", on_click=_give_score, args=args, type="primary", shortcut="enter",
                       key="label_save")
    cols[3].button("Skip", on_click=_give, args=(*args, None, True), shortcut="s", icon=":material/skip_next:",
                   key="label_skip")
    st.text_input("Note (optional, kept with the label)", key="label_note")
    st.caption("Keys: " + {"correct": "Y correct, N incorrect", "pairwise": "A left, B right, T tie",
                           "score": "Enter saves"}[info.metric] + ", S skip.")


def _example(campaign: Campaign, example_id: str, who: str) -> None:
    info = campaign.info
    texts = example_table(info.dataset_id, info.model, info.owner, info.metric)
    row = texts.loc[example_id] if example_id in texts.index else None
    queued = campaign.example(example_id)
    st.subheader(f"Example {literal(example_id)}", anchor=False)
    st.caption(f"Position {queued['position'] + 1:,} of the queue" + (f", stratum {queued['stratum'] + 1}"
                                                                      if info.design in ("proportional", "neyman")
                                                                      else ""))
    _show_text(row, "input", "Input")
    _show_text(row, "target", "Reference")
    if info.metric == "pairwise" and row is not None:
        sides = [str(row.get("model_a", "")), str(row.get("model_b", ""))]
        left, right = sides[::-1] if _flipped(info.seed, example_id) else sides  # the buttons follow this order
        st.text(f"Left: {left}    Right: {right}    (the order is random for each battle)")
    _show_text(row, "output", "The model's output")
    if row is None or not any(isinstance(row.get(r), str) and row.get(r) for r in ("input", "output")):
        st.info("This log keeps no text for its examples: label it from the example id in your own tool.")
    _buttons(campaign, example_id, who)
    if queued["judge"] is not None:
        with st.expander("The AI judge's verdict (hidden by default so it does not anchor you)"):
            st.write(f"{queued['judge']:g}")


def _relabel(campaign: Campaign, who: str) -> None:
    """Change one of one's own labels: the new label replaces it, the earlier one stays in the history."""
    history = campaign.history()
    mine = history[(history["annotator"] == who) & history["replaced_by"].isna() & (history["skipped"] == 0)]
    if mine.empty:
        return
    with st.expander("Change one of your labels (the earlier one stays in the history)"):
        st.selectbox("Example", mine["example_id"].iloc[::-1].head(200).tolist(), key="relabel_example")
        metric = campaign.info.metric
        if metric == "score":
            low, high = campaign.info.scale
            st.number_input("New score", min_value=low, max_value=high, value=low, key="relabel_value")
        else:
            st.radio("New label", ["correct", "incorrect"] if metric == "correct" else ["A", "B", "tie"],
                             horizontal=True, key="relabel_value")
        st.button("Replace my label", on_click=_give_chosen, args=(campaign, who), key="relabel_save")


def _agreement(campaign: Campaign) -> None:
    labels = campaign.current_labels()
    with st.expander("Agreement: between annotators, and the AI judge against the humans"):
        if campaign.info.overlap > 1:
            found = agreement.annotator_agreement(labels, campaign.info.metric, campaign.info.level, campaign.info.seed)
            if found is None:
                st.write("No example has two labels yet.")
            else:
                st.write(f"{found.statistic}: {render.ci(found.value, found.ci_low, found.ci_high)} over "
                         f"{found.n:,} examples. {found.meaning}")
        else:
            st.caption("One label per example: start a campaign with overlap 2 or more to measure agreement.")
        per = labels.groupby("example_id").agg(value=("value", "mean"), judge=("judge", "first"))
        judged = agreement.judge_agreement(per, campaign.info.metric, campaign.info.level, campaign.info.seed)
        if judged is None:
            st.caption("No AI judge verdicts on the labeled examples.")
        else:
            k = judged.kappa
            st.write(f"AI judge vs humans on {judged.n:,} examples: {k.statistic} "
                     f"{render.ci(k.value, k.ci_low, k.ci_high)}. With the judge, the {judged.n:,} labels are "
                     f"worth {judged.effective_labels:,.0f} labels alone (PPI effective sample size).")
            st.dataframe(judged.confusion)


def _campaign(campaign: Campaign) -> None:
    info = campaign.info
    estimate = campaign.estimate()
    render.answer(sentence(info, estimate))
    if estimate.stop:
        st.success(f"You can stop: the {info.level:.0%} interval is within ±{info.target:g}." if info.target is not None
                   else f"You can stop: the budget of {info.budget:,} labels is used.", icon=":material/flag:")
    if not math.isnan(estimate.estimate):
        render.chart(estimate_figure(estimate, info.model, WHAT[info.metric]), f"{info.name} estimate")
    st.progress(min(estimate.labels / max(info.planned, 1), 1.0),
                text=f"{estimate.labels:,} labels of about {info.planned:,} planned; {estimate.needed:,} more "
                     "needed at the current variance" + (f"; {estimate.skipped} skipped" if estimate.skipped else ""))
    st.caption(f"{literal(info.name)} · {literal(info.description)} · {estimate.estimator}. {estimate.meaning}")
    if (message := st.session_state.pop("label_error", None)) is not None:
        st.error(literal(message))
    who = _annotator()
    if who is None:
        st.info("Type your name to start labeling.")
    else:
        try:
            example_id = campaign.next(who)
        except PermissionError as exc:
            st.error(literal(str(exc)))
            example_id = None
        else:
            if example_id is None:
                st.info("The queue is done for you: every example it planned is labeled or claimed.")
            else:
                _example(campaign, example_id, who)
        _relabel(campaign, who)
    _agreement(campaign)
    with st.expander("Every label (with the replaced ones)"):
        render.table(campaign.history(), f"{info.name} labels")
        render.table(campaign.export(), f"{info.name} queue")
    if not math.isnan(estimate.estimate) and locked() is None and info.scale == (0.0, 1.0):
        if st.button("Use this estimate in every view", icon=":material/insights:",
                     help="Saves the campaign's estimate (the design's, with its interval) as a dataset of the "
                          "workspace and opens it: Models, Leaderboard, the report and the command line then show "
                          "it, saying which design it comes from."):
            saved = workspace().add_dataset(campaign.summary(), f"{info.name} · estimate", owner=member)
            ds.use_saved(saved.id, saved.name)
            st.switch_page("pages/models.py")
    if st.button("Other campaigns", icon=":material/list:"):
        del st.query_params["campaign"]
        st.rerun()


campaign_id = st.query_params.get("campaign")
if campaign_id:
    opened = _open(campaign_id)
    if opened is not None:
        _campaign(opened)
else:
    _new_campaign()
