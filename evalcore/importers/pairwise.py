"""AlpacaEval annotations and MT-Bench (FastChat ``llm_judge``) judgments: pairwise verdicts and judge scores.

Formats:

- **AlpacaEval** ``annotations.json`` (tatsu-lab/alpaca_eval, ``results/<model>/<annotator>/annotations.json``): a
  JSON list of ``{instruction, output_1, generator_1, output_2, generator_2, dataset, annotator, preference, ...}``.
  ``preference`` is 1 when ``output_1`` wins and 2 when ``output_2`` wins; a draw is 0 (AlpacaEval 1) or 1.5
  (AlpacaEval 2, whose ``pairwise_to_winrate`` maps 0 to 1.5); weighted annotators give fractions in [1, 2];
  null when not annotated. -> battles: ``model_a`` = ``generator_1`` (the reference), ``model_b`` =
  ``generator_2``, ``judge`` = ``preference - 1`` (0.5 for a draw): the annotator is an AI judge (e.g.
  ``alpaca_eval_gpt4``), so its verdict is the ``judge`` role, never a human ``outcome`` (the notes name it).
  ``instruction`` is the ``input`` text; ``raw_completion`` (the judge's output) the ``explanation``: as written
  where it is text, its ``concise_explanation`` where it is an object holding one (the chain-of-thought annotator
  ``alpaca_eval_cot_gpt4_turbo_fn``, e.g. ``results/alpaca-7b/alpaca_eval_cot_gpt4_turbo_fn/annotations.json``),
  else the object or list as JSON text; ``dataset`` is kept as text. The notes name the file.
  The run's ``results/<model>/model_outputs.json`` (a JSON list of ``{instruction, output, generator, dataset}``:
  the model's answers, no verdicts) is claimed so that a run folder can be uploaded whole: beside annotations it
  is set aside with a note; alone it is refused, naming the annotations file to upload (a file of that shape under
  another name is left to the table reader). FastChat's other MT-Bench data files (``data/<bench>/question.jsonl``
  ``{question_id, category, turns}``, ``judge_prompts.jsonl``, ``model_answer/<model>.jsonl`` and
  ``reference_answer/<model>.jsonl`` ``{question_id, answer_id, model_id, choices, tstamp}``; instructlab/eval
  commit 810dcfc ``data/mt_bench/``) are set aside the same way beside judgments, and refused alone.
- **MT-Bench** judgments (lm-sys/FastChat ``fastchat/llm_judge/common.py``, ``play_a_match_single`` /
  ``play_a_match_pair``; ``data/<bench>/model_judgment/<judge>_single.jsonl`` / ``_pair.jsonl``), JSON Lines:

  * single-answer grading ``{question_id, model, judge: [judge model, prompt name], user_prompt, judgment, score,
    turn, tstamp}`` -> a log of the AI judge's ratings: ``model``; ``task`` = the bench (from the
    ``data/<bench>/`` folder, else ``mt_bench``); ``example_id`` = ``"<question_id>/turn <turn>"`` (the two turns of a question are graded
    separately; ``turn`` is absent, i.e. 1, in older files); ``group`` = MT-Bench's category of the question when
    every question id is one of its 80 (81-90 writing, 91-100 roleplay, 101-110 reasoning, 111-120 math, 121-130
    coding, 131-140 extraction, 141-150 stem, 151-160 humanities: ``data/mt_bench/question.jsonl``);
    ``score`` = the judge's rating, on the scale its prompt instructs ("rate the response on a scale of 1 to 10";
    a judge's second-turn prompts keep it in the system prompt, which the file does not hold: the scale its other
    prompts state; FastChat's 1-10 where none does): ratings outside that scale are read as written with a warning
    naming the values seen and the scale. ``score == -1`` (the judge's output had no parsable rating) is left out
    and counted, as FastChat's ``show_result.py`` does. Each judge (its model and prompt; FastChat's math and
    multi-turn variants of a prompt are one) is a task of its own where several grade the same answers, or where
    the file holds several judge models. A (model, question, turn) judged again by the same judge is a ``repeat``
    (numbered 0, 1 ... in file order; FastChat averages every judgment). ``user_prompt`` (the judge's prompt, which
    holds the question and the model's answer) is the ``input`` text, ``judgment`` (the judge's reasoning) the
    ``explanation``.
  * pairwise grading ``{question_id, model_1, model_2, g1_winner, g2_winner, judge, turn, ...}``: the judge sees
    both orders (g1: model_1 first, g2: swapped); each winner is ``model_1`` / ``model_2`` / ``tie`` / ``error``.
    As in ``show_result.py``: an error in either order -> left out; the same verdict in both -> that verdict;
    different verdicts (position bias) -> a tie. -> battles ``model_a`` = ``model_1``, ``model_b`` = ``model_2``,
    ``judge`` = the AI judge's verdict (1 model_2 wins, 0 model_1 wins, 0.5 a tie): never a human ``outcome``.
    Rows with one ``winner`` field instead are read the same way. ``g1_judgment`` (the judge's reasoning, answers
    in the first order) is the ``explanation``, ``g1_user_prompt`` (the judge's prompt, holding the question and
    both answers) or a ``question`` field the ``input``.
  * human judgments (HF dataset ``lmsys/mt_bench_human_judgments``, read by FastChat ``compute_agreement.py``): a
    JSON list or JSON Lines of ``{question_id, model_a, model_b, winner, judge, turn, conversation_a?, ...}``,
    winner ``model_a`` / ``model_b`` / ``tie`` / ``tie (bothbad)`` -> battles (both kinds of tie are 0.5). A
    ``judge`` that is a person (a string: ``expert_N`` / ``author_N``) gives the ``outcome``; a list (``["gpt-4",
    "pair-v2"]``, the dataset's ``gpt4_pair`` split: ``get_judge_name`` in ``compute_agreement.py``) is an AI judge
    and gives the ``judge`` role. The user turns of ``conversation_a`` are the ``input`` text. Chatbot Arena's
    ``clean_battle`` files (``anony`` / ``language`` / ``tstamp``, judge ``arena_user_*``) have the same keys and
    are read by :mod:`evalcore.importers.chatbot_arena`, not here.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, as_number, field_of, json_lines, left_out_note, parse_json
from evalcore.importers.chat_text import user_turns

TOOL = "AlpacaEval / MT-Bench"
ALPACA_EVAL = "AlpacaEval"
MT_BENCH = "MT-Bench"

#: MT-Bench's categories, ten questions each from question 81 (FastChat data/mt_bench/question.jsonl)
MT_BENCH_CATEGORIES = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")
_FIRST_QUESTION = 81
_UNPARSED = -1
_TOLERANCE = 1e-6
_BENCH_FOLDER = re.compile(r"(?:^|/)data/([^/]+)/model_judgment(?:/|$)")

#: AlpacaEval's file of a run's answers (results/<model>/model_outputs.json), claimed only under this name
_MODEL_OUTPUTS = "model_outputs.json"
_PAIR_VERDICTS = {"model_1": 0.0, "model_2": 1.0, "tie": 0.5}
_HUMAN_VERDICTS = {"model_a": 0.0, "model_b": 1.0, "tie": 0.5, "tie (bothbad)": 0.5}
#: keys of Chatbot Arena's clean_battle records that MT-Bench's human judgments lack (read by chatbot_arena.py)
_ARENA_KEYS = re.compile(rb'"(?:anony|language|tstamp)"\s*:|"arena_user_')


def sniff(file: LogFile) -> bool:
    """AlpacaEval annotations (a JSON list with instruction / output_1) or MT-Bench judgments (records with
    question_id and FastChat's model / model_1 / model_a fields)."""
    try:
        head = file.head(1 << 16)
        if not head.startswith((b"[", b"{")):
            return False
        if head.startswith(b"[") and b'"instruction"' in head and b'"output_1"' in head:
            return True
        if file.base == _MODEL_OUTPUTS and _is_model_outputs(head):
            return True
        if _mt_bench_data(file):
            return True
        return _mt_bench_kind(head) is not None
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _mt_bench_kind(head: bytes) -> str | None:
    if b'"question_id"' not in head:
        return None
    if b'"model"' in head and b'"judge"' in head:
        return "single"
    if b'"model_1"' in head and b'"model_2"' in head:
        return "pair"
    if b'"model_a"' in head and b'"model_b"' in head and b'"winner"' in head and not _ARENA_KEYS.search(head):
        return "human"
    return None


def _is_model_outputs(head: bytes) -> bool:
    """AlpacaEval's model_outputs.json: a JSON list of {instruction, output, generator}, without output_1."""
    return (head.startswith(b"[") and b'"instruction"' in head and b'"output"' in head
            and b'"generator"' in head and b'"output_1"' not in head)


def _mt_bench_data(file: LogFile) -> bool:
    """FastChat's MT-Bench data files beside the judgments (``data/<bench>/question.jsonl``, ``judge_prompts.jsonl``,
    ``model_answer/<model>.jsonl``, ``reference_answer/<model>.jsonl``): questions and answers, no verdicts."""
    head = file.head(4096)
    if not head.startswith(b"{"):
        return False
    where = f"/{file.folder}/{file.name}".replace("\\", "/")
    if file.base == "question.jsonl":
        return b'"question_id"' in head and b'"turns"' in head and b'"model' not in head
    if file.base == "judge_prompts.jsonl":
        return b'"prompt_template"' in head
    return (("/model_answer/" in where or "/reference_answer/" in where) and b'"question_id"' in head
            and b'"answer_id"' in head and b'"choices"' in head)


def convert(files: list[LogFile]) -> list[Imported]:
    outputs = [file for file in files if file.base == _MODEL_OUTPUTS and _is_model_outputs(file.head(1 << 16))]
    questions = [file for file in files if file not in outputs and _mt_bench_data(file)]
    judged = [file for file in files if file not in outputs and file not in questions]
    if not judged:
        if outputs:
            names = ", ".join(file.name for file in outputs)
            raise EvalDataError(f"{names}: AlpacaEval's model outputs (each instruction with the model's answer) "
                                "hold no verdicts. Upload the annotations.json in the annotator's folder beside it "
                                "(results/<model>/<annotator>/annotations.json), which holds the AI judge's "
                                "preference for each answer.")
        names = ", ".join(file.name for file in questions)
        raise EvalDataError(f"{names}: MT-Bench's questions, answers or judge prompts (FastChat's data/<bench>/ "
                            "folder) hold no judgments. Upload the judge's file beside them "
                            "(data/<bench>/model_judgment/<judge>_single.jsonl or _pair.jsonl), which FastChat's "
                            "gen_judgment.py writes.")
    out = [_convert_one(file) for file in judged]
    if outputs:
        names = ", ".join(file.name for file in outputs)
        out[0].notes.append(f"{names}: not needed (AlpacaEval's model outputs: the answers, without verdicts; the "
                            "verdicts are in annotations.json).")
    if questions:
        names = ", ".join(file.name for file in questions)
        out[0].notes.append(f"{names}: not needed (MT-Bench's questions, answers or judge prompts, without "
                            "verdicts; the judgments are in model_judgment/).")
    out[0].files = (*out[0].files, *(file.name for file in (*outputs, *questions)))
    return out


def _judge_text(value) -> str | None:
    """The AlpacaEval judge's output (raw_completion) as text: a string as written, an object's
    concise_explanation (chain-of-thought annotators), else the object or list as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("concise_explanation"), str):
        return value["concise_explanation"]
    if isinstance(value, (dict, list)) and value:
        return json.dumps(value, ensure_ascii=False)
    return None


def _convert_one(file: LogFile) -> Imported:
    records, numbers = _records(file)
    if not records:
        raise EvalDataError(f"{file.name}: the file holds no judgments.")
    keys = set().union(*(r.keys() for r in records[:50]))
    if {"generator_1", "generator_2"} <= keys or "output_1" in keys:
        return _alpaca_eval(file, records, numbers)
    if "model_1" in keys or "g1_winner" in keys:
        return _mt_pair(file, records, numbers)
    if "model_a" in keys:
        return _mt_human(file, records, numbers)
    return _mt_single(file, records, numbers)


def _records(file: LogFile) -> tuple[list[dict], list[str]]:
    """The records of a JSON list or JSON Lines file, and how to name each in a message."""
    if file.head(1).startswith(b"["):
        doc = parse_json(file)
        pairs = list(enumerate(doc, 1)) if isinstance(doc, list) else []
        what = "record"
    else:
        pairs = list(json_lines(file))
        what = "line"
    records, numbers = [], []
    for number, value in pairs:
        if not isinstance(value, dict):
            raise EvalDataError(f"{file.name} ({what} {number}): expected a JSON object, found "
                                f"{type(value).__name__}.")
        records.append(value)
        numbers.append(f"{what} {number}")
    return records, numbers


def _table(file: LogFile, records: list[dict], numbers: list[str], required: tuple[str, ...],
           optional: tuple[str, ...] = ()) -> pd.DataFrame:
    """The fields of every record; a required field missing (or null) in any record raises, naming it."""
    frame = pd.DataFrame({name: [r.get(name) for r in records] for name in (*required, *optional)})
    for name in required:
        missing = np.fromiter((name not in r for r in records), bool, len(records))
        if missing.any():
            first = int(np.argmax(missing))
            field_of(records[first], name, file, numbers[first])
    return frame


def _text(series: pd.Series) -> pd.Series:
    return series.map(lambda v: "" if v is None else ("/".join(map(str, v)) if isinstance(v, list) else str(v)))


def _prose(series: pd.Series) -> pd.Series:
    """A text role's values: plain str where the tool wrote text, None elsewhere (uncut: validation bounds it)."""
    return series.map(lambda v: v if isinstance(v, str) else None).astype(object)


def _add_text(out: pd.DataFrame, frame: pd.DataFrame, roles: dict[str, str], keep: np.ndarray | None = None) -> None:
    """Add the text roles ``{role: column}`` of ``frame`` to ``out`` (rows ``keep``) where any value is text."""
    for role, column in roles.items():
        if column not in frame:
            continue
        values = _prose(frame[column])
        values = values[keep] if keep is not None else values
        if values.notna().any():
            out[role] = values.reset_index(drop=True).to_numpy()


# ----------------------------------------------------------------------------------------------------------------
# AlpacaEval


def _alpaca_eval(file: LogFile, records: list[dict], numbers: list[str]) -> Imported:
    frame = _table(file, records, numbers, ("generator_1", "generator_2"),
                   ("preference", "dataset", "annotator", "instruction", "raw_completion"))
    if not any("preference" in r for r in records):
        field_of(records[0], "preference", file, numbers[0])
    total = len(frame)
    notes: list[str] = []
    preference = pd.to_numeric(frame["preference"].map(lambda v: as_number(v, booleans=False)), errors="coerce")
    missing = preference.isna().to_numpy()
    draw_zero = (preference == 0).to_numpy()
    clipped = preference.clip(1.0, 2.0)
    valid = draw_zero | (~missing & ((preference - clipped).abs() <= _TOLERANCE).to_numpy())
    invalid = ~missing & ~valid
    outcome = np.where(draw_zero, 0.5, clipped.to_numpy() - 1.0)
    model_a, model_b = _text(frame["generator_1"]), _text(frame["generator_2"])
    itself = (model_a == model_b).to_numpy() & valid
    for count, why in ((missing.sum(), "no preference (not annotated)"),
                       (invalid.sum(), "the preference is not 0 (draw) or a number from 1 to 2"),
                       (itself.sum(), "both outputs come from the same generator")):
        if count:
            notes.append(f"{file.name}: {left_out_note(int(count), total, 'annotations', why)}")
    keep = valid & ~itself
    if not keep.any():
        if itself.any() and itself.sum() == valid.sum():
            raise EvalDataError(f"{file.name}: all {int(itself.sum()):,} annotations compare {model_a[itself].iloc[0]} "
                                "with itself (the reference model's own folder): there is no preference between two "
                                "models. Upload the annotations.json of another model, judged against it.")
        raise EvalDataError(f"{file.name}: no annotation has a preference between two generators.")
    out = pd.DataFrame({"model_a": model_a, "model_b": model_b, "judge": outcome})
    if frame["dataset"].notna().any():
        out["dataset"] = _text(frame["dataset"])
    out = out[keep].reset_index(drop=True)
    frame["raw_completion"] = frame["raw_completion"].map(_judge_text).astype(object)
    _add_text(out, frame, {"input": "instruction", "explanation": "raw_completion"}, keep)
    annotators = sorted(set(_text(frame["annotator"][keep]).replace("", np.nan).dropna()))
    who = (f"the AI judge{'s' if len(annotators) > 1 else ''} {', '.join(annotators)} (annotator)" if annotators
           else "AlpacaEval's annotator, an AI judge")
    notes.append(f"{file.name}: verdicts by {who} are the judge role; no battle has a human vote. judge = the "
                 "annotator's preference for generator_2 (model_b) over generator_1 (model_a, the reference): "
                 "preference 1 -> 0 (generator_1 wins), 2 -> 1 (generator_2 wins), a draw (0 or 1.5) -> 0.5, "
                 "fractions of weighted annotators in between.")
    if "dataset" in out:
        notes.append("dataset (the instruction's source) is kept as text.")
    return Imported(out, kind="battles", tool=ALPACA_EVAL, files=(file.name,), notes=notes, judges=tuple(annotators))


# ----------------------------------------------------------------------------------------------------------------
# MT-Bench


def _bench(file: LogFile) -> str:
    match = _BENCH_FOLDER.search(file.name.replace("\\", "/"))
    return match.group(1) if match else "mt_bench"


#: the rating scale of FastChat's single-answer judge prompts (``judge_prompts.jsonl``: "rate the response on a scale
#: of 1 to 10", parsed from "[[rating]]")
_FASTCHAT_SCALE = (1.0, 10.0)
#: the judge's instruction to rate (FastChat: "you must rate the response on a scale of 1 to 10"), not a scale that
#: the question or the answer quoted in the prompt mentions
_STATED_SCALE = re.compile(r"\brate (?:the|this|each|their) (?:[\w']+ ){0,3}?on a scale (?:of|from) (-?\d+(?:\.\d+)?) "
                           r"(?:to|-|–) (-?\d+(?:\.\d+)?)", re.IGNORECASE)


def _stated_scale(prompt) -> tuple[float, float] | None:
    """The rating scale a judge's prompt instructs ("rate the response on a scale of 1 to 10"), or None."""
    found = _STATED_SCALE.search(prompt) if isinstance(prompt, str) else None
    return (float(found[1]), float(found[2])) if found and float(found[1]) < float(found[2]) else None


def _prompt_family(judge) -> str | None:
    """The judge prompt's name without FastChat's per-question variants ("single-math-v1-multi-turn" ->
    "single-v1": the prompts of one judge for math questions and second turns), or None when the judge names none."""
    if not isinstance(judge, list) or len(judge) < 2 or judge[1] is None:
        return None
    return str(judge[1]).replace("-multi-turn", "").replace("-math-", "-")


def _some_values(values: list[float], k: int = 8) -> str:
    """'0, 35, 73.5 and 12 more'."""
    return ", ".join(f"{v:g}" for v in values[:k]) + (f" and {len(values) - k} more" if len(values) > k else "")


def _mt_single(file: LogFile, records: list[dict], numbers: list[str]) -> Imported:
    frame = _table(file, records, numbers, ("question_id", "model", "score"), ("turn", "judge", "user_prompt",
                                                                               "judgment"))
    total = len(frame)
    notes: list[str] = []
    warnings: list[str] = []
    score = pd.to_numeric(frame["score"].map(lambda v: as_number(v, booleans=False)), errors="coerce")
    unparsed = (score == _UNPARSED).to_numpy()
    missing = score.isna().to_numpy()
    # FastChat writes the judgment "$ERROR$" when the judge's API call failed (common.py, chat_completion_*)
    failed = unparsed & (frame["judgment"].map(lambda j: isinstance(j, str) and j.strip() == "$ERROR$")).to_numpy()
    for count, why in ((failed.sum(), "the call to the judge failed (judgment '$ERROR$', score -1)"),
                       ((unparsed & ~failed).sum(), "the judge's output had no rating that FastChat could parse "
                                                    "(score -1)"),
                       (missing.sum(), "no numeric score")):
        if count:
            notes.append(f"{file.name}: {left_out_note(int(count), total, 'judgments', why)}")
    turns = pd.to_numeric(frame["turn"], errors="coerce").fillna(1).astype(int)
    lost = pd.Series(unparsed | missing).groupby(turns.to_numpy()).mean()
    if len(lost) > 1 and lost.max() - lost.min() > 0.25:
        shares = ", ".join(f"turn {t}: {share:.0%}" for t, share in lost.items())
        notes.append(f"{file.name}: the judgments left out are not spread evenly over the turns ({shares} left out): "
                     f"a mean over the kept ones leans towards turn {lost.idxmin()}.")
    keep = ~unparsed & ~missing
    if not keep.any():
        raise EvalDataError(f"{file.name}: no judgment has a rating (every score is -1 or missing).")
    turn = pd.to_numeric(frame["turn"], errors="coerce").fillna(1).astype(int).astype(str)
    question = _text(frame["question_id"])
    out = pd.DataFrame({"model": _text(frame["model"]), "task": _bench(file),
                        "example_id": question + "/turn " + turn, "score": score})
    judges = frame["judge"].map(lambda j: str(j[0]) if isinstance(j, list) and j else (None if j is None else str(j)))
    out = out[keep].reset_index(drop=True)
    _add_text(out, frame, {"input": "user_prompt", "explanation": "judgment"}, keep)
    judges = judges[keep].reset_index(drop=True)
    ids = pd.to_numeric(frame["question_id"][keep], errors="coerce").to_numpy()
    in_range = (~np.isnan(ids)) & (ids >= _FIRST_QUESTION) & (ids < _FIRST_QUESTION + 10 * len(MT_BENCH_CATEGORIES))
    if in_range.all() and (ids == np.round(ids)).all():
        out["group"] = np.asarray(MT_BENCH_CATEGORIES)[((ids - _FIRST_QUESTION) // 10).astype(int)]
        notes.append("group = MT-Bench's category of each question (writing, roleplay ...; questions 81-160, ten "
                     "per category).")
    names = sorted(set(judges.dropna()))
    prompts = frame["judge"].map(_prompt_family)[keep].reset_index(drop=True)
    judged_by = judges.fillna("?") + ", prompt " + prompts.fillna("?")
    answers = out["model"] + "\x00" + out["example_id"]
    several_prompts = bool((prompts.fillna("?").groupby([answers, judges.fillna("?")]).nunique() > 1).any())
    if len(names) > 1 or several_prompts:
        out["task"] = out["task"] + " (judge " + (judged_by if several_prompts else judges.fillna("?")) + ")"
        if several_prompts:
            notes.append(f"{file.name}: answers are graded by {judged_by.nunique()} judges (judge model and prompt: "
                         f"{'; '.join(sorted(set(judged_by)))}): each judge's scores are a task of their own, not "
                         "repeats of one another (each prompt asks its own question, on its own scale).")
        else:
            notes.append(f"The file holds judgments by {len(names)} judge models ({', '.join(names)}): each judge's "
                         "scores are a task of their own.")
    repeat = out.groupby(["model", "task", "example_id"], sort=False).cumcount()
    if (repeat > 0).any():
        out["repeat"] = repeat.astype(int)
        notes.append(f"{int((repeat > 0).sum()):,} judgments grade a (model, question, turn) already graded "
                     "(re-judged by the same judge and prompt): each is a repeat, numbered in file order.")
    judge = f" by {', '.join(names)}" if names else ""
    scales = frame["user_prompt"].map(_stated_scale)[keep].reset_index(drop=True) if "user_prompt" in frame else \
        pd.Series([None] * len(out), dtype=object)
    # a judge's prompts for second turns hold its instruction in the system prompt, which the file does not keep:
    # they rate on the scale the same judge's other prompts state
    by_judge = scales.groupby(judged_by).agg(lambda s: s.dropna().mode().iloc[0] if s.notna().any() else None)
    expected = scales.where(scales.notna(), judged_by.map(by_judge)).map(lambda scale: scale or _FASTCHAT_SCALE)
    low, high = expected.map(lambda scale: scale[0]), expected.map(lambda scale: scale[1])
    outside = ((out["score"] < low) | (out["score"] > high)).to_numpy()
    used = sorted(set(expected))
    span = (f"from {used[0][0]:g} to {used[0][1]:g}" if len(used) == 1
            else "on the scales " + ", ".join(f"{a:g} to {b:g}" for a, b in used))
    basis = ("the scale of FastChat's single-answer prompts" if scales.isna().all() else
             "as the judge's prompts state")
    scale_said = f"{span}, {basis}"
    if outside.any():
        seen = sorted(set(out["score"][outside]))
        warnings.append(f"{file.name}: {int(outside.sum()):,} of {len(out):,} ratings lie outside the scale the judge "
                        f"was given ({scale_said}): values seen {_some_values(seen)}; ratings of the file range from "
                        f"{out['score'].min():g} to {out['score'].max():g}. The judge rated on another scale (a "
                        "custom prompt?): the scores are read as written, so their mean is on that scale; check the "
                        "judge's prompt, or rescale the ratings before comparing them with other MT-Bench scores.")
        notes.append(f"score = the AI judge's rating as written{judge} (single-answer grading; values from "
                     f"{out['score'].min():g} to {out['score'].max():g}, see the warning); each turn of a question "
                     "is an example ('81/turn 1').")
    else:
        notes.append(f"score = the AI judge's rating {span}{judge} ({basis}; single-answer grading); each turn of a "
                     "question is an example ('81/turn 1').")
    if "input" in out:
        notes.append("input = the judge's prompt (it holds the question and the model's answer); explanation = the "
                     "judge's reasoning.")
    columns = [c for c in ("model", "task", "group", "example_id", "repeat", "score", "input", "explanation")
               if c in out]
    return Imported(out[columns], kind="log", tool=MT_BENCH, files=(file.name,), notes=notes, warnings=warnings)


def _mt_pair(file: LogFile, records: list[dict], numbers: list[str]) -> Imported:
    frame = _table(file, records, numbers, ("question_id", "model_1", "model_2"),
                   ("g1_winner", "g2_winner", "winner", "judge", "question", "g1_user_prompt", "g1_judgment"))
    has_pair = np.fromiter(("g1_winner" in r and "g2_winner" in r for r in records), bool, len(records))
    if not has_pair.all():
        lacking = np.fromiter(("winner" not in r for r in records), bool, len(records)) & ~has_pair
        if lacking.any():
            first = int(np.argmax(lacking))
            field_of(records[first], "g1_winner", file, numbers[first])
    g1 = _text(frame["g1_winner"].where(has_pair, frame["winner"])).str.strip().str.lower()
    g2 = _text(frame["g2_winner"].where(has_pair, frame["winner"])).str.strip().str.lower()
    error = ((g1 == "error") | (g2 == "error")).to_numpy()
    known = g1.isin(list(_PAIR_VERDICTS)) & g2.isin(list(_PAIR_VERDICTS))
    unknown = ~known.to_numpy() & ~error
    inconsistent = known & (g1 != g2)
    outcome = g1.map(_PAIR_VERDICTS).where(~inconsistent, 0.5)
    total = len(frame)
    notes = [f"{file.name}: {left_out_note(int(n), total, 'pairwise judgments', why)}" for n, why in (
        (error.sum(), "the judge's output had no parsable verdict in one or both of the two orders ('error')"),
        (unknown.sum(), "a verdict other than model_1, model_2, tie or error")) if n]
    n_inconsistent = int(inconsistent.sum())
    if n_inconsistent:
        notes.append(f"{n_inconsistent:,} pairwise judgments give different winners when the answers are swapped "
                     "(position bias): each counts as a tie, as in FastChat.")
    keep = known.to_numpy()
    judges = _judge_names(frame["judge"][keep])
    named = tuple(judges.split(", ")) if judges else ()
    text = frame.assign(input=frame["question"].where(frame["question"].map(lambda v: isinstance(v, str)),
                                                      frame["g1_user_prompt"]))
    return _battles(file, frame["model_1"], frame["model_2"], None, outcome, keep, notes,
                    f"Verdicts by the AI judge {judges or '(not named)'} are the judge role; no battle has a human "
                    "vote. judge = the verdict with the answers in both orders (model_a = model_1, model_b = "
                    "model_2): 1 if model_2 wins, 0 if model_1 wins, 0.5 a tie.", text,
                    {"input": "input", "explanation": "g1_judgment"}, judges=named)


def _judge_names(judges: pd.Series) -> str:
    """'gpt-4 (pair-v2)' for FastChat's judge lists [model, prompt name]; the distinct names, comma-separated."""
    def name(j):
        if isinstance(j, list) and j:
            return str(j[0]) + (f" ({', '.join(map(str, j[1:]))})" if len(j) > 1 else "")
        return None if j is None or (isinstance(j, float) and np.isnan(j)) else str(j)
    return ", ".join(sorted(set(judges.map(name).dropna())))


def _mt_human(file: LogFile, records: list[dict], numbers: list[str]) -> Imported:
    frame = _table(file, records, numbers, ("model_a", "model_b", "winner"), ("judge", "conversation_a"))
    winner = _text(frame["winner"]).str.strip().str.lower()
    known = winner.isin(list(_HUMAN_VERDICTS)).to_numpy()
    notes = []
    if (~known).any():
        notes.append(f"{file.name}: " + left_out_note(int((~known).sum()), len(frame), "votes",
                                                      "a winner other than model_a, model_b, tie or tie (bothbad)"))
    by_ai = frame["judge"].map(lambda j: isinstance(j, list)).to_numpy()  # FastChat: [judge model, prompt name]
    verdict = winner.map(_HUMAN_VERDICTS).astype(float)
    human, ai = known & ~by_ai, known & by_ai
    people = sorted(set(_text(frame["judge"][human]).replace("", np.nan).dropna()))
    parts = []
    if human.any():
        named = f"{len(people):,} people ({', '.join(people[:5])}{', ...' if len(people) > 5 else ''})" if people \
            else "people"
        parts.append(f"{int(human.sum()):,} votes by {named} are human votes (the outcome role)")
    if ai.any():
        parts.append(f"{int(ai.sum()):,} verdicts by the AI judge {_judge_names(frame['judge'][ai])} are the judge "
                     "role" + ("" if human.any() else "; no battle in this file has a human vote"))
    text = frame.assign(input=frame["conversation_a"].map(user_turns))
    return _battles(file, frame["model_a"], frame["model_b"], verdict.where(~by_ai), verdict.where(by_ai), known,
                    notes, "; ".join(parts) + ". Each is 1 if model_b wins, 0 if model_a wins, 0.5 a "
                    "tie (with or without 'bothbad').", text, {"input": "input"})


def _battles(file: LogFile, model_a: pd.Series, model_b: pd.Series, outcome: pd.Series | None,
             judge: pd.Series | None, keep: np.ndarray, notes: list[str], how: str, frame: pd.DataFrame,
             text: dict[str, str], judges: tuple[str, ...] = ()) -> Imported:
    """Battles ``model_a`` vs ``model_b`` with a human ``outcome`` and/or an AI ``judge`` verdict (a column only
    where some kept row has one; ``judges`` names the AI judges), the text roles ``text`` of ``frame``; rows
    ``keep`` but no self-comparisons."""
    a, b = _text(model_a), _text(model_b)
    itself = (a == b).to_numpy() & keep
    if itself.any():
        notes.append(f"{file.name}: "
                     + left_out_note(int(itself.sum()), len(a), "pairwise judgments", "a model compared with itself"))
    keep = keep & ~itself
    if not keep.any():
        raise EvalDataError(f"{file.name}: no judgment has a verdict between two models.")
    out = pd.DataFrame({"model_a": a, "model_b": b})
    for role, values in (("outcome", outcome), ("judge", judge)):
        if values is not None and values[keep].notna().any():
            out[role] = values.astype(float)
    out = out[keep].reset_index(drop=True)
    _add_text(out, frame, text, keep)
    notes.append(how)
    return Imported(out, kind="battles", tool=MT_BENCH, files=(file.name,), notes=notes, judges=judges)
