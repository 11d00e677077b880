"""Label page: an annotation queue run by statistics. One example at a time in the design's order, the estimate
with its interval beside it after every label, and "you can stop" once the interval is narrow enough
(:mod:`evalcore.labeling`). A campaign opens from its address (``?campaign=ID``). A comparison campaign (two or more
models, :mod:`evalcore.labeling.comparison`) shows its answer first (which model is better, by how much, decided or
not), then the example with each distinct output once, in a random order and without the models' names, judged
right or wrong per output (or, for classes and choices, the right answer given once)."""

import hashlib
import json
import math

import numpy as np
import pandas as pd
import streamlit as st

from evalcore.data.display import bidi_visible, cut, literal
from evalcore.data.limits import MAX_NAME_CHARS, MAX_NOTE_CHARS
from evalcore.data.media import MediaError, image_suffix, load_image, media_dir
from evalcore.data.options import chosen_letter, option_lines, parse_options
from evalcore.errors import EvalDataError
from evalcore.workspace import access
from evalcore.labeling.campaign import Campaign, CampaignRecord, author, sentence
from evalcore.labeling.comparison import ComparisonCampaign, comparison_sentence, same_output
from evalcore.labeling.difference import COMPARISON_DESIGN_NAMES, COMPARISON_DESIGNS, ComparisonEstimate
from evalcore.labeling.figures import labels_per_pattern
from evalcore.labeling.queue import DESIGN_NAMES, DESIGNS
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common.labeling_cache import (CampaignState, ComparisonState, campaign_agreement, campaign_state,
                                         comparison_state, dataset_models, example_table)
from pages.common.navigation import ensure_app_navigation
from pages.common.workspace_store import locked, viewer, workspace

ensure_app_navigation()

ANNOTATOR = "label_annotator"
WHAT = {"correct": "accuracy", "score": "mean score", "pairwise": "share model B wins"}
#: characters beyond which a text is shown in a box that scrolls
LONG_TEXT = 1500
#: what a log needs for its examples to be shown (said when it has none of it)
WHAT_TO_ADD = ("add to the log a column 'input' (the question; also read from question or prompt), 'options' (a "
               "list, or columns A, B, C ...) or 'image' (a file under EVALCORE_MEDIA_DIR, or in a zip of images "
               "uploaded below) and save it again")
#: what a new campaign labels
KINDS = {"model": "One model's outputs", "comparison": "A comparison: which of two or more models is better"}
#: the bound of each stored text a page shows (:func:`_bounded`)
BOUNDS = {"note": MAX_NOTE_CHARS, "answer": MAX_NOTE_CHARS, "annotator": MAX_NAME_CHARS,
          "adjudicator": MAX_NAME_CHARS, "campaign": MAX_NAME_CHARS}
#: a comparison campaign's stop rules
STOP_RULES = {"target": "the interval on the difference within ±target",
              "decide": "decided: the interval excludes zero (or the margin)", "budget": "a label budget"}

st.title("Label")
member = viewer()


def _annotator() -> str | None:
    """The signed-in member; on an instance without sign-in, the name typed here (the label's author,
    :func:`evalcore.labeling.campaign.author`: an e-mail address is refused, said), kept in the page's address
    (``&annotator=NAME``) so that a reload keeps it."""
    if member is not None:
        return member
    if ANNOTATOR not in st.session_state:  # a new session (a reload): the name from the address
        st.session_state[ANNOTATOR] = st.query_params.get("annotator", "")
    name = st.text_input("Your name (each label carries it)", key=ANNOTATOR, placeholder="e.g. alice",
                         help="Kept in this page's address, so that a reload keeps it.").strip()
    if name and st.query_params.get("annotator") != name:
        st.query_params["annotator"] = name
    elif not name and "annotator" in st.query_params:
        del st.query_params["annotator"]
    try:
        return author(name)
    except EvalDataError as exc:
        st.error(literal(str(exc)))
        return None


def _labeler() -> str | None:
    """Who labels in this session (:func:`_annotator`); None, said, where this session may not change saved items
    (:func:`locked`: an instance the network reaches without sign-in records no label) or while no name is given."""
    if (why := locked()) is not None:
        st.info(literal(f"No label is recorded in this session: {why}"))
        return None
    who = _annotator()
    if who is None:
        st.info("Type your name to start labeling.")
    return who


def _bounded(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its notes and names cut to today's bounds (:data:`BOUNDS`, :func:`evalcore.data.display.cut`):
    text stored before the bounds existed may be megabytes, which the page would send to every browser."""
    return frame.assign(**{c: frame[c].map(lambda v, n=n: cut(v, n)) for c, n in BOUNDS.items() if c in frame})


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
                                "design": [c.description.split(";")[0] for c in campaigns],  # comparisons too
                                "owner": [c.owner or "" for c in campaigns], "created": [c.created for c in campaigns],
                                "link": [f"?campaign={c.id}" for c in campaigns]})
        render.table(_bounded(listing), "labeling campaigns", link=st.column_config.LinkColumn("open", display_text="open"))
    if (why := locked()) is not None:
        st.info(literal(why))
        return
    st.subheader("Start a campaign", anchor=False)
    datasets = workspace().datasets(member)
    choices = {"current": f"The current data ({ds.data_name()}; saved to the workspace once, with its first "
                          "campaign)",
               **{d.id: f"{d.name} ({d.rows:,} rows, {d.models} models)" for d in datasets}}
    if st.radio("What to label", list(KINDS), format_func=KINDS.get, horizontal=True, key="label_kind") != "model":
        _new_comparison(choices)
        return
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
        seed = c4.number_input("Seed", min_value=0, value=Campaign.next_seed(workspace()), step=1,
                               help="Orders the queue. The default is one more than the largest seed of this "
                                    "workspace's campaigns, so that each campaign has its own queue.")
        overlap = c5.number_input("Labels per example (overlap, for agreement)", min_value=1, value=1, step=1)
        shared = c6.checkbox("Every signed-in member labels it", value=member is not None)
        start = st.form_submit_button("Start the campaign", type="primary")
    if start:
        _start(dataset, lambda dataset_id: Campaign.create(
            workspace(), dataset_id, model.strip(), design, target=size if goal.startswith("target") else None,
            budget=int(size) if goal.startswith("label") else None, level=_level(), seed=int(seed), owner=member,
            overlap=int(overlap), shared=shared, metric=None if metric.startswith("as ") else metric,
            scale=(low, high) if metric == "score" else None))


def _new_comparison(choices: dict[str, str]) -> None:
    """The form that starts a comparison campaign: the dataset (outside the form, so that the models offered are
    its own), two or more of its models, the design and the stop rule."""
    dataset = st.selectbox("Dataset", list(choices), format_func=choices.get, key="compare_dataset")
    models = _models_of(dataset)
    with st.form("new_comparison"):
        chosen = st.multiselect("Models to compare (the first minus the second is the difference in accuracy the "
                                "campaign estimates)", models, default=models[:2],
                                key=f"compare_models_{dataset}")  # per dataset: its own models
        c1, c2 = st.columns(2)
        design = c1.selectbox("Design", COMPARISON_DESIGNS, index=COMPARISON_DESIGNS.index("disagreement"),
                              format_func=COMPARISON_DESIGN_NAMES.get, key="compare_design")
        rule = c2.radio("Stop when", list(STOP_RULES), format_func=STOP_RULES.get, key="compare_rule")
        c3, c4, c5 = st.columns(3)
        target = c3.number_input("±target on the difference (0.02 is 2 points)", min_value=0.001, max_value=0.999,
                                 value=0.02, format="%.3f", key="compare_target")
        margin = c4.number_input("Margin of 'decided' (0: better; 0.01: not worse by more than 1 point)",
                                 min_value=0.0, max_value=0.999, value=0.0, format="%.3f", key="compare_margin")
        budget = c5.number_input("Label budget", min_value=2, value=200, step=1, key="compare_budget")
        c6, c7 = st.columns(2)
        seed = c6.number_input("Seed", min_value=0, value=Campaign.next_seed(workspace()), step=1,
                               help="Orders the queue. The default is one more than the largest seed of this "
                                    "workspace's campaigns, so that each campaign has its own queue.")
        shared = c7.checkbox("Every signed-in member labels it", value=member is not None)
        start = st.form_submit_button("Start the comparison", type="primary")
    if start:
        _start(dataset, lambda dataset_id: Campaign.create(
            workspace(), dataset_id, models=chosen, design=design, target=target if rule == "target" else None,
            budget=int(budget) if rule == "budget" else None, decide=rule == "decide",
            margin=margin if rule == "decide" else 0.0, level=_level(), seed=int(seed), owner=member, shared=shared))


def _models_of(choice: str) -> list[str]:
    """The models of the dataset chosen: a saved one's (cached), or the session's log's."""
    if choice != "current":
        return dataset_models(choice, member)
    data = ds.try_active_data(link=False)
    return list(selection.options(data).models) if data is not None and data.report.kind == "log" else []


def _start(choice: str, create) -> None:
    """Start a campaign on the dataset ``choice`` (``create(dataset_id)`` makes it) and open it; a refusal is shown
    literally and leaves no copy of the session's data behind."""
    dataset_id, saved_now = None, False
    try:
        dataset_id, saved_now = _saved(choice)
        campaign = create(dataset_id)
    except (EvalDataError, LookupError, PermissionError) as exc:
        if saved_now:  # a refused campaign leaves no copy of the session's data behind
            try:
                workspace().delete(dataset_id, viewer=member)
            except (EvalDataError, PermissionError):
                pass  # another campaign or analysis started on it meanwhile: it stays, in use
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


def _saved(choice: str) -> tuple[str, bool]:
    """(the dataset id of the choice, whether it was saved just now). The session's data is a saved dataset already
    when it was opened from the workspace, or when a dataset of the same content that this viewer may see exists
    (the same digest: no second copy); otherwise it is saved now."""
    if choice != "current":
        return choice, False
    source = ds.source()
    if source["type"] == "saved":
        return source["id"], False
    frame = ds.active_data().loaded
    found = workspace().find_dataset(frame, member)
    if found is not None:
        return found.id, False
    return workspace().add_dataset(frame, ds.data_name(), owner=member).id, True


# ------------------------------------------------------------------------------------------------ a campaign
def _give(campaign: Campaign, example_id: str, who: str, value, skipped: bool = False) -> None:
    """A button's callback: keep the label (before the rerun draws the next example); refused, said, where this
    session may not change saved items (:func:`locked`)."""
    if (why := locked()) is not None:
        st.session_state["label_error"] = why
        return
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


def _value(row: pd.Series | None, role: str) -> str | None:
    """The ``role`` text of an example's row; None where the log has none (no column, missing, blank)."""
    value = row.get(role) if row is not None else None
    return value if isinstance(value, str) and value.strip() else None


def _show_text(row: pd.Series | None, role: str, title: str) -> bool:
    """Show the ``role`` text under ``title`` (:func:`_show_block`); whether there was any."""
    value = _value(row, role)
    if value is None:
        return False
    _show_block(title, value)
    return True


def _show_block(title: str, value: str) -> None:
    """``value`` under ``title``, literally (never Markdown or HTML), a long one in a box of its own that scrolls."""
    st.markdown(f"**{title}**")
    (st.container(height=320) if len(value) > LONG_TEXT else st.container()).text(value)


def _show_options(row: pd.Series | None) -> bool:
    """Show a multiple-choice example's options, lettered, the model's choice and the reference marked
    (:mod:`evalcore.data.options`); whether there were any."""
    options = parse_options(_value(row, "options"))
    if not options:
        return False
    st.markdown("**Options**")
    st.text(option_lines(options, chosen_letter(_value(row, "output"), options),
                         chosen_letter(_value(row, "target"), options)))
    return True


def _image_name(row: pd.Series | None) -> tuple[str, str] | None:
    """(the name of the example's image, the role it comes from): its ``image``, else an example id named like an
    image file (ImageNet's ILSVRC2012_val_00000293.JPEG); None when it has neither."""
    if (name := _value(row, "image")) is not None:
        return name, "image"
    example = _value(row, "example_id")
    return (example, "example_id") if image_suffix(example) else None


def _show_image(dataset_id: str, owner: str | None, row: pd.Series | None) -> bool:
    """Show the example's image (:func:`evalcore.data.media.load_image`: the zip of images saved with the dataset,
    read as the campaign's ``owner`` reads the dataset, then EVALCORE_MEDIA_DIR), or one line naming the file and
    why it is not shown; whether the example has an image."""
    found = _image_name(row)
    if found is None:
        return False
    name, role = found
    archive = workspace().media_archive(dataset_id, owner)
    if role == "example_id" and archive is None and media_dir() is None:
        return False  # an id named like a file, and nowhere to look for it: the page says what to add
    try:
        shown = load_image(name, archive)
    except MediaError as exc:
        st.warning(literal(f"The image of this example (role '{role}') is not shown: {exc}"),
                   icon=":material/hide_image:")
        return True
    st.image(shown.data)
    st.caption(literal(f"{name} ({shown.format}, {shown.width:,} x {shown.height:,} pixels)"))
    return True


def _media_upload(dataset_id: str) -> None:
    """Save a zip of the images the dataset's image column names with the dataset (its owner, where saved items may
    change): checked, then kept in the workspace (:meth:`evalcore.workspace.Workspace.add_media`)."""
    with st.expander("Images of this dataset: upload a zip of them"):
        if (why := locked()) is not None:
            st.caption(literal(why))
            return
        upload = st.file_uploader("A zip of the images, at the paths the image column gives", type=["zip"],
                                  key="label_media_zip")
        if upload is None or not st.button("Save the images with the dataset", key="label_media_save"):
            return
        try:
            saved = workspace().add_media(dataset_id, upload.getvalue(), viewer=member)
        except (EvalDataError, LookupError, PermissionError) as exc:
            why = str(exc).strip("'\"")
            st.error(literal(f"{upload.name}: {why}"))
        else:
            st.success(literal(f"{upload.name}: {saved.members:,} files saved with the dataset."))


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
    image = _show_image(info.dataset_id, info.owner, row)
    question = _show_text(row, "input", "Input")
    options = _show_options(row)
    _show_text(row, "target", "Reference")
    if info.metric == "pairwise" and row is not None:
        sides = [str(row.get("model_a", "")), str(row.get("model_b", ""))]
        left, right = sides[::-1] if _flipped(info.seed, example_id) else sides  # the buttons follow this order
        st.text(bidi_visible(f"Left: {left}    Right: {right}    (the order is random for each battle)"))
    _show_text(row, "output", "The model's output")
    if not (image or question or options):
        st.info(literal(f"This log keeps no question, options or image for its examples: label it from the "
                        f"example id in your own tool, or {WHAT_TO_ADD}."))
    if image or not (question or options):
        _media_upload(info.dataset_id)
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


def _agreement(campaign: Campaign, version: tuple[int, int]) -> None:
    """Agreement between annotators, each annotator's quality, and the AI judge against the humans: computed only
    while the section is open, and then once per new label or adjudication (cached by the campaign's version)."""
    info = campaign.info
    box = st.expander("Agreement: between annotators, each annotator's quality, the AI judge against the humans",
                      key="label_agreement", on_change="rerun")
    with box:
        if not box.open:
            return
        found = campaign_agreement(campaign.id, version, _campaign=campaign)
        if found.annotators is None:
            st.caption("No two examples have two labels yet: agreement between annotators needs them (a campaign "
                       "with overlap 2 or more gives them).")
        else:
            a = found.annotators
            st.write(f"{a.statistic}: {render.ci(a.value, a.ci_low, a.ci_high)} over {a.n:,} examples. {a.meaning}")
        if len(found.quality):
            st.markdown("**Each annotator** (against the settled labels, on the examples labeled twice or more or "
                        "adjudicated, and against the other annotators)")
            render.table(found.quality, f"{info.name} annotators")
        if found.judge is None:
            st.caption("No AI judge verdicts on the settled examples.")
        else:
            k = found.judge.kappa
            st.write(f"AI judge vs humans on {found.judge.n:,} settled examples: {k.statistic} "
                     f"{render.ci(k.value, k.ci_low, k.ci_high)}. With the judge, the {found.judge.n:,} labels are "
                     f"worth {found.judge.effective_labels:,.0f} labels alone (PPI effective sample size).")
            st.dataframe(found.judge.confusion)


#: how a label's value reads, per metric (a score as its number)
SHOWN = {"correct": {1.0: "correct", 0.0: "incorrect"}, "pairwise": {0.0: "A", 1.0: "B", 0.5: "tie"}}
#: the most examples the adjudication queue shows at once (the rest follow as these are settled)
QUEUE_SHOWN = 20


def _settle(campaign: Campaign | ComparisonCampaign, example_id: str, who: str, position: int,
            groups: list[tuple[str, list[str]]] | None = None) -> None:
    """A "Settle" button's callback: the value chosen for the example (a comparison's: its outputs' verdicts,
    :func:`_chosen`, for the distinct outputs ``groups``) becomes its adjudicated label."""
    value = (st.session_state.get(f"adjudicate_value_{position}") if groups is None else
             _chosen(campaign, groups, f"compare_adjudicate_{position}"))
    if value is None:
        st.session_state["label_error"] = f"Choose the value of the example {example_id} before settling it."
        return
    try:
        campaign.adjudicate(example_id, value, who, note=st.session_state.get(f"adjudicate_note_{position}") or None)
    except (EvalDataError, PermissionError) as exc:
        st.session_state["label_error"] = str(exc)


def _name_adjudicators(campaign: Campaign) -> None:
    """The owner's "Save the adjudicators" callback: the names typed, comma-separated, replace the list."""
    try:
        campaign.set_adjudicators(st.session_state["label_adjudicators"].split(","), viewer=member)
    except (EvalDataError, PermissionError) as exc:
        st.session_state["label_error"] = str(exc)


def _adjudication(campaign: Campaign | ComparisonCampaign, who: str | None, pending: pd.DataFrame) -> None:
    """The adjudication queue, for the owner and the named adjudicators: how many examples' labels disagree and,
    in a section drawn only while open (open at first for a signed-in adjudicator), each of them with every label
    (annotator, value or verdicts, note: shown literally) and the value to settle it at."""
    info = campaign.info
    owner_here = locked() is None and access.may_change(info.owner, member)
    if not campaign.may_adjudicate(who) and not owner_here:
        return
    examples = pending.drop_duplicates("example_id")
    st.subheader(f"Adjudication queue ({len(examples):,} pending)", anchor=False)
    if owner_here:
        with st.expander("Adjudicators besides the owner"):
            st.text_input("Names or e-mail addresses, comma-separated", value=", ".join(info.adjudicators),
                          key="label_adjudicators")
            st.button("Save the adjudicators", on_click=_name_adjudicators, args=(campaign,),
                      key="label_adjudicators_save")
    if not campaign.may_adjudicate(who):
        st.caption("Type your name above to settle them." if who is None else
                   f"{literal(who)} is not an adjudicator of this campaign: name yourself above to settle them.")
        return
    if examples.empty:
        st.caption("No example awaits adjudication: every example's labels agree or are settled.")
        return
    box = st.expander("Settle them: every label, and the value you choose", key="label_adjudication",
                      on_change="rerun", expanded=member is not None)  # open for a signed-in adjudicator
    with box:
        if box.open:
            (_compare_pending if isinstance(campaign, ComparisonCampaign) else _pending)(campaign, who, pending,
                                                                                         examples)


def _pending(campaign: Campaign, who: str, pending: pd.DataFrame, examples: pd.DataFrame) -> None:
    """The first :data:`QUEUE_SHOWN` examples awaiting adjudication, each with its labels and the value to choose."""
    info = campaign.info
    st.caption("These examples' labels disagree, or they were skipped (often the hard ones): they count in the "
               "estimate only as a range until settled. Choose the right value of each.")
    texts = example_table(info.dataset_id, info.model, info.owner, info.metric)
    for example_id, position in examples[["example_id", "position"]].head(QUEUE_SHOWN).itertuples(index=False):
        with st.container(border=True):
            st.markdown(f"**Example {literal(example_id)}** (position {position + 1:,} of the queue)")
            for label in pending[pending["example_id"] == example_id].itertuples(index=False):
                shown = ("skipped" if label.value != label.value else
                         SHOWN.get(info.metric, {}).get(label.value, f"{label.value:g}"))
                note = f" (note: {cut(label.note, MAX_NOTE_CHARS)})" if isinstance(label.note, str) and label.note \
                    else ""
                st.text(bidi_visible(f"{cut(label.annotator, MAX_NAME_CHARS)}: {shown}{note}"))
            with st.expander("The example"):
                row = texts.loc[example_id] if example_id in texts.index else None
                for role, title in (("input", "Input"), ("target", "Reference"), ("output", "The model's output")):
                    _show_text(row, role, title)
            left, middle, right = st.columns([2, 3, 1])
            if info.metric == "score":
                left.number_input("Settled score", min_value=info.scale[0], max_value=info.scale[1], value=None,
                                  key=f"adjudicate_value_{position}")
            else:
                left.radio("Settled label", list(SHOWN[info.metric].values()), index=None, horizontal=True,
                           key=f"adjudicate_value_{position}")
            middle.text_input("Note (optional)", key=f"adjudicate_note_{position}")
            right.button("Settle", on_click=_settle, args=(campaign, example_id, who, int(position)),
                         key=f"adjudicate_save_{position}", type="primary")
    if len(examples) > QUEUE_SHOWN:
        st.caption(f"{len(examples) - QUEUE_SHOWN:,} more follow as these are settled.")


def _records(campaign: Campaign) -> None:
    """Every label and adjudication with the replaced ones, and the queue with the settled labels (CSV each):
    read only while the section is open."""
    info = campaign.info
    box = st.expander("Every label and adjudication (with the replaced ones), and the queue", key="label_records",
                      on_change="rerun")
    with box:
        if not box.open:
            return
        render.table(_bounded(campaign.history()), f"{info.name} labels")
        adjudications = campaign.adjudications()
        if len(adjudications):
            render.table(_bounded(adjudications), f"{info.name} adjudications")
        render.table(_bounded(campaign.export()), f"{info.name} queue")


def _answer(campaign: Campaign, state: CampaignState) -> None:
    """The estimate in a sentence, the chart, the progress and what the interval means."""
    info, estimate = campaign.info, state.estimate
    render.answer(sentence(info, estimate))
    if estimate.stop:
        st.success(f"You can stop: the {info.level:.0%} interval is within ±{info.target:g}." if info.target is not None
                   else f"You can stop: the budget of {info.budget:,} labels is used.", icon=":material/flag:")
    if state.figure is not None:
        render.chart(state.figure, f"{info.name} estimate")
    st.progress(min(estimate.labels / max(info.planned, 1), 1.0),
                text=f"{estimate.labels:,} labels of about {info.planned:,} planned; {estimate.needed:,} more "
                     "needed at the current variance" + (f"; {estimate.skipped} skipped" if estimate.skipped else ""))
    st.caption(f"{literal(cut(info.name, MAX_NAME_CHARS))} · {literal(info.description)} · {estimate.estimator}. "
               f"{estimate.meaning}")
    if len(state.skips):
        with st.expander(f"Skipped examples: {estimate.skipped:,} ({state.skips['share'].iloc[0]:.0%} of those drawn)"):
            st.caption("Skips are rarely at random (annotators skip the hard ones): the interval counts each skipped "
                       "example at its worst and best value (Manski bounds). Their confidence and AI-judge profile "
                       "beside the settled examples':")
            render.table(state.skips, f"{info.name} skipped examples")


def _campaign(campaign: Campaign) -> None:
    info = campaign.info
    top = st.container()  # the answer, filled once the next example is on screen: a click shows it first
    if (message := st.session_state.pop("label_error", None)) is not None:
        st.error(literal(message))
    who = _labeler()
    if who is not None:
        if (example_id := _claimed(campaign, who)) is not None:
            _example(campaign, example_id, who)
        _relabel(campaign, who)
    version = campaign.version()
    with top:
        state = campaign_state(campaign.id, version, WHAT[info.metric], _campaign=campaign)
        _answer(campaign, state)
    estimate = state.estimate
    _adjudication(campaign, who, state.pending)
    _agreement(campaign, version)
    _records(campaign)
    if not math.isnan(estimate.estimate) and locked() is None and info.scale == (0.0, 1.0):
        if st.button("Use this estimate in every view", icon=":material/insights:",
                     help="Saves the campaign's estimate (the design's, with its interval) as a dataset of the "
                          "workspace and opens it: Models, Leaderboard, the report and the command line then show "
                          "it, saying which design it comes from."):
            saved = workspace().add_dataset(campaign.summary(), f"{info.name} · estimate", owner=member)
            ds.use_saved(saved.id, saved.name)
            st.switch_page("pages/models.py")
    _other_campaigns()


def _claimed(campaign: Campaign | ComparisonCampaign, who: str) -> str | None:
    """The example the campaign hands ``who`` (claimed for them); None, said, when the queue is done for them, they
    may not label it, or the workspace cannot be written (a full or read-only disk: the workspace's own message,
    :func:`evalcore.workspace.storage.storage_problem`)."""
    try:
        example_id = campaign.next(who)
    except (EvalDataError, PermissionError) as exc:
        st.error(literal(str(exc)))
        return None
    if example_id is None:
        st.info("The queue is done for you: every example it planned is labeled or claimed.")
    return example_id


def _other_campaigns() -> None:
    if st.button("Other campaigns", icon=":material/list:"):
        del st.query_params["campaign"]
        st.rerun()


# ------------------------------------------------------------------------------------------------ a comparison
def _distinct(outputs: dict[str, str], seed: int, example_id: str) -> list[tuple[str, list[str]]]:
    """Each distinct output once (identical after stripping surrounding whitespace, :func:`same_output`: one verdict
    serves every model that gave it) with its models, in a random order seeded per example (a reload shows the same
    order)."""
    groups: dict[str, tuple[str, list[str]]] = {}
    for model, output in outputs.items():
        groups.setdefault(same_output(output), (output, []))[1].append(model)
    shown = list(groups.values())
    rng = np.random.default_rng(int(hashlib.sha256(f"{seed}:{example_id}".encode()).hexdigest(), 16))
    return [shown[i] for i in rng.permutation(len(shown))]


def _give_typed(campaign: ComparisonCampaign, example_id: str, who: str) -> None:
    """"None of these": the class typed is the right answer (read at the click)."""
    _give(campaign, example_id, who, st.session_state.get(f"compare_answer_{example_id}") or "")


def _give_verdicts(campaign: ComparisonCampaign, example_id: str, who: str,
                   groups: list[tuple[str, list[str]]]) -> None:
    """"Save the verdicts": right or wrong for each distinct output (read at the click), given for one model of each
    (the models with the same output share it); refused, naming the outputs, while one has none."""
    chosen = [st.session_state.get(f"compare_verdict_{example_id}_{k}") for k in range(1, len(groups) + 1)]
    missing = [str(k) for k, verdict in enumerate(chosen, 1) if verdict is None]
    if missing:
        st.session_state["label_error"] = (f"Give a verdict for every output (none yet for output "
                                           f"{', '.join(missing)}), or skip the example.")
        return
    _give(campaign, example_id, who, {models[0]: int(verdict == "right")
                                      for (_, models), verdict in zip(groups, chosen)})


def _compare_example(campaign: ComparisonCampaign, example_id: str, who: str) -> None:
    """The example once (image, input, options, reference where the log has them), each distinct output once,
    literally, the models' names in a closed section, and the controls: the right output (classes and choices) or
    a verdict per output (text), a skip, a note."""
    info = campaign.info
    texts = example_table(info.dataset_id, info.models[0], info.owner, "correct")
    # the first model's output is the row's: left out, so that the options mark no model's choice
    row = texts.loc[example_id].drop("output", errors="ignore") if example_id in texts.index else None
    st.subheader(f"Example {literal(example_id)}", anchor=False)
    st.caption(f"Position {campaign.example(example_id)['position'] + 1:,} of the queue; the outputs are in a "
               "random order, without the models' names.")
    image = _show_image(info.dataset_id, info.owner, row)
    question = _show_text(row, "input", "Input")
    options = _show_options(row)
    _show_text(row, "target", "Reference")
    if not (image or question or options):
        st.info(literal(f"This log keeps no question, options or image for its examples: label it from the "
                        f"example id in your own tool, or {WHAT_TO_ADD}."))
    groups = _distinct(campaign.outputs(example_id), info.seed, example_id)
    classes = info.outputs == "class"
    for k, (output, _) in enumerate(groups, 1):
        _show_block(f"Output {k}", output)
        if not classes:
            st.radio(f"Output {k} is", ["right", "wrong"], index=None, horizontal=True,
                     key=f"compare_verdict_{example_id}_{k}")
    with st.expander("Which model gave which output"):
        for k, (_, models) in enumerate(groups, 1):
            st.text(bidi_visible(f"Output {k}: {', '.join(models)}"))
    args = (campaign, example_id, who)
    cols = st.columns(len(groups) + 1 if classes else 2)
    if classes:
        for k, (output, _) in enumerate(groups, 1):
            cols[k - 1].button(f"Output {k} is right", on_click=_give, args=(*args, same_output(output)),
                               shortcut=str(k) if k < 10 else None, key=f"compare_right_{k}")
        left, right = st.columns([3, 1])
        left.text_input("None of these: the right class or choice", key=f"compare_answer_{example_id}")
        right.button("None of these", on_click=_give_typed, args=args, shortcut="0", key="compare_none",
                     help="Saves the class typed beside as the right answer: every output is then wrong (unless "
                          "one equals it).")
        keys = f"1–{min(len(groups), 9)} the output that is right, 0 none of these (the class typed)"
    else:
        cols[0].button("Save the verdicts", on_click=_give_verdicts, args=(*args, groups), type="primary",
                       shortcut="enter", key="compare_save")
        keys = "Enter saves the verdicts"
    cols[-1].button("Skip", on_click=_give, args=(*args, None, True), shortcut="s", icon=":material/skip_next:",
                    key="compare_skip")
    st.text_input("Note (optional, kept with the label)", key="label_note")
    st.caption(f"Keys: {keys}, S skip.")
    if image or not (question or options):
        _media_upload(info.dataset_id)


def _verdict_controls(campaign: ComparisonCampaign, groups: list[tuple[str, list[str]]], key: str) -> None:
    """The distinct outputs ``groups`` (as shown when labeled, numbered) and the controls of a decision on them:
    the right output or a class typed (classes and choices), or a verdict per output (texts); ``key`` prefixes
    their keys (read back by :func:`_chosen`)."""
    for k, (output, _) in enumerate(groups, 1):
        st.text(bidi_visible(f"Output {k} as shown: {cut(output, 300)}"))
    if campaign.info.outputs == "class":
        st.radio("The right output", [f"Output {k}" for k in range(1, len(groups) + 1)] + ["None of these"],
                 index=None, horizontal=True, key=f"{key}_right")
        st.text_input("None of these: the right class or choice", key=f"{key}_typed")
    else:
        for k in range(1, len(groups) + 1):
            st.radio(f"Output {k} is", ["right", "wrong"], index=None, horizontal=True, key=f"{key}_verdict_{k}")


def _chosen(campaign: ComparisonCampaign, groups: list[tuple[str, list[str]]], key: str):
    """The decision drawn by :func:`_verdict_controls` (read at the click): the right answer (classes: the output
    chosen, or the class typed), or {model: 0/1} for one model of each distinct output (texts); None while a
    choice is missing."""
    if campaign.info.outputs == "class":
        chosen = st.session_state.get(f"{key}_right")
        if chosen is None:
            return None
        if chosen == "None of these":
            return st.session_state.get(f"{key}_typed") or None
        return same_output(groups[int(chosen.split()[-1]) - 1][0])
    chosen = [st.session_state.get(f"{key}_verdict_{k}") for k in range(1, len(groups) + 1)]
    if None in chosen:
        return None
    return {models[0]: int(verdict == "right") for (_, models), verdict in zip(groups, chosen)}


def _give_relabel(campaign: ComparisonCampaign, who: str) -> None:
    """"Replace my label" of a comparison: the example chosen and its new answer or verdicts (read at the click);
    the new label replaces one's own, the earlier one stays in the history."""
    example_id = st.session_state["compare_relabel_example"]
    value = _chosen(campaign, _distinct(campaign.outputs(example_id), campaign.info.seed, example_id),
                    "compare_relabel")
    if value is None:
        st.session_state["label_error"] = "Give a verdict for every output of the label you change."
        return
    _give(campaign, example_id, who, value)


def _compare_relabel(campaign: ComparisonCampaign, who: str) -> None:
    """Change one of one's own comparison labels: the example's distinct outputs (as labeled, in the same order),
    then the right one (classes) or a verdict per output (texts)."""
    history = campaign.history()
    mine = history[(history["annotator"] == who) & history["replaced_by"].isna() & (history["skipped"] == 0)]
    if mine.empty:
        return
    with st.expander("Change one of your labels (the earlier one stays in the history)"):
        example_id = st.selectbox("Example", mine["example_id"].iloc[::-1].head(200).tolist(),
                                  format_func=bidi_visible, key="compare_relabel_example")
        _verdict_controls(campaign, _distinct(campaign.outputs(example_id), campaign.info.seed, example_id),
                          "compare_relabel")
        st.button("Replace my label", on_click=_give_relabel, args=(campaign, who), key="compare_relabel_save")


def _said(verdicts: dict | None, answer, groups: list[tuple[str, list[str]]]) -> str:
    """One label of a comparison as the adjudicator reads it: the answer given, or each output's verdict."""
    if verdicts is None:
        return "skipped"
    if isinstance(answer, str) and answer:
        return f"the right answer is {cut(answer, 300)}"
    return ", ".join(f"output {k} {'right' if verdicts.get(models[0]) == 1 else 'wrong'}"
                     for k, (_, models) in enumerate(groups, 1))


def _compare_pending(campaign: ComparisonCampaign, who: str, pending: pd.DataFrame, examples: pd.DataFrame) -> None:
    """The first :data:`QUEUE_SHOWN` comparison examples awaiting adjudication: each with its outputs, every label
    (annotator, verdicts or answer, note: literally) and the decision to settle it."""
    st.caption("These examples' labels disagree, or they were skipped (often the hard ones): they count in the "
               "estimate only as a range until settled. Decide which outputs are right.")
    for example_id, position in examples[["example_id", "position"]].head(QUEUE_SHOWN).itertuples(index=False):
        groups = _distinct(campaign.outputs(example_id), campaign.info.seed, example_id)
        with st.container(border=True):
            st.markdown(f"**Example {literal(example_id)}** (position {position + 1:,} of the queue)")
            for label in pending[pending["example_id"] == example_id].itertuples(index=False):
                note = f" (note: {cut(label.note, MAX_NOTE_CHARS)})" if isinstance(label.note, str) and label.note \
                    else ""
                st.text(bidi_visible(f"{cut(label.annotator, MAX_NAME_CHARS)}: "
                                     f"{_said(label.verdicts, label.answer, groups)}{note}"))
            _verdict_controls(campaign, groups, f"compare_adjudicate_{position}")
            left, right = st.columns([5, 1])
            left.text_input("Note (optional)", key=f"adjudicate_note_{position}")
            right.button("Settle", on_click=_settle, args=(campaign, example_id, who, int(position), groups),
                         key=f"adjudicate_save_{position}", type="primary")
    if len(examples) > QUEUE_SHOWN:
        st.caption(f"{len(examples) - QUEUE_SHOWN:,} more follow as these are settled.")


def _stopped(info: CampaignRecord, estimate: ComparisonEstimate) -> str:
    """Why a comparison campaign may stop, in a line."""
    if info.budget is not None:
        return f"You can stop: the budget of {info.budget:,} labels is used."
    if estimate.decided is not None or estimate.equivalent:
        return "You can stop: the comparison is decided."
    if estimate.labels + estimate.skipped >= info.pool["M"]:
        return "You can stop: every example the design can draw is labeled."
    return f"You can stop: the {info.level:.0%} interval is within ±{100 * info.target:g} points."


def _comparison_answer(campaign: ComparisonCampaign, state: ComparisonState) -> None:
    """The answer in a sentence, every model against the leader, the progress, the labels per agreement pattern,
    what the interval means and the pool's notes."""
    info, estimate = campaign.info, state.estimate
    render.answer(comparison_sentence(info, estimate))
    if estimate.stop:
        st.success(_stopped(info, estimate), icon=":material/flag:")
    if state.figure is not None:
        render.chart(state.figure, f"{info.name} differences")
    given = estimate.labels + estimate.skipped
    st.progress(min(given / max(info.planned, 1), 1.0),
                text=f"{estimate.labels:,} labels of about {info.planned:,} planned"
                     + ("" if estimate.stop or info.decide else f"; {estimate.needed:,} more needed at the current "
                                                                "variance")
                     + (f"; {estimate.skipped} skipped or disputed" if estimate.skipped else ""))
    render.table(labels_per_pattern(info.pool, estimate), f"{info.name} labels per agreement pattern")
    st.caption(f"{literal(cut(info.name, MAX_NAME_CHARS))} · {literal(info.description)} · {estimate.level:.0%} "
               f"{estimate.interval}. {estimate.meaning}")
    for note in info.notes:
        st.caption(literal(note))


def _comparison_records(campaign: ComparisonCampaign) -> None:
    """Every label and adjudication with the replaced ones and the skips (CSV each): read only while the section
    is open."""
    box = st.expander("Every label and adjudication (with the replaced ones and the skips)", key="label_records",
                      on_change="rerun")
    with box:
        if box.open:
            for table, what in ((campaign.history(), "labels"), (campaign.adjudications(), "adjudications")):
                if what == "labels" or len(table):
                    render.table(_bounded(table.assign(verdicts=table["verdicts"].map(lambda v: v and json.dumps(v)))),
                                 f"{campaign.info.name} {what}")


def _comparison(campaign: ComparisonCampaign) -> None:
    top = st.container()  # the answer, filled once the next example is on screen: a click shows it first
    if (message := st.session_state.pop("label_error", None)) is not None:
        st.error(literal(message))
    who = _labeler()
    if who is not None and (example_id := _claimed(campaign, who)) is not None:
        _compare_example(campaign, example_id, who)
    if who is not None:
        _compare_relabel(campaign, who)
    state = comparison_state(campaign.id, campaign.version(), _campaign=campaign)
    with top:
        _comparison_answer(campaign, state)
    _adjudication(campaign, who, state.pending)
    _comparison_records(campaign)
    _other_campaigns()


campaign_id = st.query_params.get("campaign")
if campaign_id:
    opened = _open(campaign_id)
    if opened is not None:
        (_comparison if opened.info.kind == "comparison" else _campaign)(opened)
else:
    _new_campaign()
