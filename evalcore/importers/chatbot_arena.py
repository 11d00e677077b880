"""LMSYS Chatbot Arena battles: the ``clean_battle`` JSON of FastChat's arena pipeline -> pairwise battles.

Format (lm-sys/FastChat ``fastchat/serve/monitor/clean_battle_data.py``, ``process_data`` and the writer at its end;
read by ``fastchat/serve/monitor/elo_analysis.py``): one JSON array (``json.dump``, sorted by ``tstamp``) of votes

    {"model_a", "model_b", "winner", "judge", "turn", "anony", "language", "tstamp",
     "question_id"?, "conversation_a"?, "conversation_b"?, "dedup_tag"?, "conv_metadata"?, ...}

``winner`` is ``model_a`` / ``model_b`` / ``tie`` / ``tie (bothbad)`` (``convert_type``: leftvote, rightvote,
tievote, bothbad_vote); ``judge`` is ``arena_user_<id>``: a person who voted in the Arena. ``--mode simple``
(``clean_battle_<date>.json``, and the public ``clean_battle_<date>_public.json`` of the leaderboard notebook, with
``dedup_tag`` / ``conv_metadata`` / ``category_tag`` added by later steps) drops ``question_id`` and the
conversations; ``--mode conv_release`` (``clean_battle_conv_<date>.json``; HF dataset
``lmsys/chatbot_arena_conversations``) keeps them, ``conversation_a`` being ``[{role, content}, ...]``. JSON Lines
of the same records are read too.

-> battles: ``model_a``, ``model_b``, ``outcome`` (the person's vote: 0 model_a wins, 1 model_b wins, 0.5 for both
``tie`` and ``tie (bothbad)``, as ``elo_analysis.py`` counts them; the notes count each kind), ``anony`` (1 for an
anonymous battle, 0 otherwise: the official leaderboard uses only anonymous ones; kept, counted in the notes),
``language`` kept as text, and ``input`` = the user's turns of ``conversation_a`` where the file has them. A record
whose ``judge`` is a FastChat AI-judge list (``["gpt-4", "pair-v2"]``) gives the ``judge`` role instead. Records
with any other winner (or none) are left out and counted; a missing ``model_a`` / ``model_b`` is refused naming the
record. ``dedup_tag.sampled`` false (prompts the notebook down-samples as too frequent) is counted, not dropped.
The same battles as a table (CSV / TSV with model_a, model_b and winner columns, e.g. the notebook's DataFrame saved
with ``to_csv``) are read alike; there a winner may also be the winning model's name.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from evalcore.data.reading import read_table
from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, json_lines, left_out_note, parse_json
from evalcore.importers.chat_text import user_turns

TOOL = "Chatbot Arena"

VERDICTS = {"model_a": 0.0, "model_b": 1.0, "tie": 0.5, "tie (bothbad)": 0.5}
#: the fields read (the others, e.g. conv_metadata, are not needed)
_FIELDS = ("model_a", "model_b", "winner", "judge", "anony", "language", "tstamp", "conversation_a", "dedup_tag")
_ARENA_KEYS = re.compile(rb'"(?:anony|language|tstamp)"\s*:|"arena_user_')
_MAX_LISTED = 5


def sniff(file: LogFile) -> bool:
    """A JSON array or JSON Lines of records with model_a / model_b / winner and one of the Arena's own keys
    (anony, language, tstamp) or an ``arena_user_`` judge; FastChat's MT-Bench pair files (model_1 / model_2) are
    not claimed. Also a table (CSV / TSV) whose header has model_a, model_b and winner."""
    try:
        head = file.head(1 << 16)
        if not head.startswith((b"[", b"{")):
            return _is_battle_table(head)
        has = all(key in head for key in (b'"model_a"', b'"model_b"', b'"winner"'))
        return has and b'"model_1"' not in head and _ARENA_KEYS.search(head) is not None
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    return [_convert_one(file) for file in files]


def _is_battle_table(head: bytes) -> bool:
    """Whether ``head`` starts a CSV / TSV table whose header has model_a, model_b and winner columns."""
    first = head.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()[0] if head.strip() else ""
    return any({"model_a", "model_b", "winner"} <= {cell.strip().strip('"').lower() for cell in first.split(sep)}
               for sep in (",", "\t", ";"))


def _records(file: LogFile) -> tuple[list, str]:
    """The records of a JSON array, JSON Lines or a table (CSV / TSV, read within the load's limits), and the word
    for one of them in a message."""
    if not file.head(1).startswith((b"[", b"{")):
        try:
            table = read_table(file.data, file.budget.limits, file.budget, file.name)
        except EvalDataError as exc:
            raise EvalDataError(f"{file.name}: {exc}") from exc
        table.columns = [str(c).strip().lower() for c in table.columns]
        table = table.astype(object).where(table.notna(), None)
        return table.to_dict("records"), "row"
    if file.head(1).startswith(b"["):
        doc = parse_json(file)
        if not isinstance(doc, list):
            raise EvalDataError(f"{file.name}: expected a JSON array of battles.")
        return doc, "record"
    return [value for _, value in json_lines(file)], "line"


def _convert_one(file: LogFile) -> Imported:
    records, what = _records(file)
    if not records:
        raise EvalDataError(f"{file.name}: the file holds no battles.")
    bad = np.fromiter((type(r) is not dict for r in records), bool, len(records))
    if bad.any():
        first = int(np.argmax(bad))
        raise EvalDataError(f"{file.name} ({what} {first + 1}): expected a JSON object (a battle), found "
                            f"{type(records[first]).__name__}.")
    frame = pd.DataFrame.from_records(records, columns=list(_FIELDS))
    del records
    total = len(frame)
    for name in ("model_a", "model_b"):
        missing = ~_each(frame[name], lambda v: isinstance(v, (str, int, float)) and v == v, "string")
        if missing.any():
            first = int(np.argmax(missing))
            raise EvalDataError(f"{file.name} ({what} {first + 1}): the field '{name}' is missing or not a model "
                                f"name ({int(missing.sum()):,} battles); every battle needs model_a, model_b and "
                                "winner, as FastChat's clean_battle_data.py writes them.")
    a, b = frame["model_a"].astype(str), frame["model_b"].astype(str)
    named = _strings(frame["winner"]).str.strip()
    winner = named.str.lower()
    # a winner written as the winning model's name (as tables do) is that side's win
    winner = winner.where(named.ne(a) | winner.isin(list(VERDICTS)), "model_a")
    winner = winner.where(named.ne(b) | winner.isin(list(VERDICTS)), "model_b")
    verdict = winner.map(VERDICTS).astype(float)
    unknown = verdict.isna().to_numpy()
    itself = (a == b).to_numpy() & ~unknown
    notes: list[str] = []
    if unknown.any():
        seen = sorted({"(none)" if v is None or v != v else str(v) for v in frame["winner"][unknown]})
        shown = ", ".join(repr(v) for v in seen[:_MAX_LISTED]) + (", ..." if len(seen) > _MAX_LISTED else "")
        notes.append(left_out_note(int(unknown.sum()), total, "battles",
                                   f"a winner other than model_a, model_b, tie or tie (bothbad) ({shown})"))
    if itself.any():
        notes.append(left_out_note(int(itself.sum()), total, "battles", "a model compared with itself"))
    keep = ~unknown & ~itself
    if not keep.any():
        raise EvalDataError(f"{file.name}: no battle has a winner between two different models (model_a, model_b, "
                            "tie or tie (bothbad)).")
    by_ai = ~_each(frame["judge"], lambda j: not isinstance(j, list), "string")  # AI judge: [model, prompt]
    out = pd.DataFrame({"model_a": a, "model_b": b})
    human, ai = keep & ~by_ai, keep & by_ai
    if human.any():
        out["outcome"] = verdict.where(~by_ai)
    if ai.any():
        out["judge"] = verdict.where(by_ai)
    anony = _each(frame["anony"], lambda v: isinstance(v, bool), "boolean")
    if anony.any():
        out["anony"] = frame["anony"].where(anony).astype(float)
    language = _strings(frame["language"])
    if language.notna().any():
        out["language"] = language.astype(object).where(language.notna(), None)
    if frame["conversation_a"].notna().any():
        out["input"] = pd.Series([user_turns(c) for c in frame["conversation_a"]], dtype=object)
    sampled = pd.Series([t.get("sampled") if type(t) is dict else None for t in frame["dedup_tag"]], dtype=object)
    out = out[keep].reset_index(drop=True)
    notes += _counts(winner[keep], by_ai[keep], frame["judge"][keep], out, sampled[keep])
    return Imported(out, kind="battles", tool=TOOL, files=(file.name,), notes=notes)


def _each(column: pd.Series, test, fast: str) -> np.ndarray:
    """``test`` of each value, skipped (all true) when pandas infers the whole column as ``fast`` without gaps."""
    if pd.api.types.infer_dtype(column, skipna=False) == fast and not column.isna().any():
        return np.ones(len(column), bool)
    return np.fromiter((bool(test(v)) for v in column), bool, len(column))


def _strings(column: pd.Series) -> pd.Series:
    """The column's text values, missing (NaN) where a value is not text."""
    if pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
        return column.astype(object)
    return column.where(pd.Series(_each(column, lambda v: isinstance(v, str), "string"), index=column.index))


def _counts(winner: pd.Series, by_ai: np.ndarray, judges: pd.Series, out: pd.DataFrame,
            sampled: pd.Series) -> list[str]:
    """What the kept battles hold: who voted, the ties of each kind, the non-anonymous and down-sampled ones."""
    n = len(winner)
    n_ai = int(by_ai.sum())
    voters = judges[~by_ai].map(lambda j: j if isinstance(j, str) else None)
    arena = int(voters.str.startswith("arena_user_", na=False).sum())
    people = f"{n - n_ai:,} votes by people in the Arena ({voters.nunique():,} voters" + \
        (f"; {n - n_ai - arena:,} with a judge not named arena_user_*" if n - n_ai - arena else "") + ")"
    notes = []
    if n - n_ai and voters.isna().all():  # a table without a judge column: who voted is not said
        notes.append(f"{n - n_ai:,} battles name no judge: their winners are read as human votes (outcome = 1 if "
                     "model_b wins, 0 if model_a wins, 0.5 a tie), as the Arena's are. Winners chosen by an AI judge "
                     "belong in a column mapped to the role 'judge' of a plain table instead.")
    elif n - n_ai:
        notes.append(f"{people} are human votes: outcome = 1 if model_b wins, 0 if model_a wins, 0.5 a tie.")
    if n_ai:
        names = sorted({str(j[0]) for j in judges[by_ai] if j})
        notes.append(f"{n_ai:,} verdicts by the AI judge {', '.join(names) or '(not named)'} are the judge role, "
                     "not human votes.")
    ties, bothbad = int((winner == "tie").sum()), int((winner == "tie (bothbad)").sum())
    if ties or bothbad:
        notes.append(f"Ties: {ties:,} 'tie' and {bothbad:,} 'tie (bothbad)' (both models bad), each 0.5 as in "
                     "FastChat's elo_analysis.py.")
    if "anony" in out:
        named = int((out["anony"] == 0).sum())
        if named:
            notes.append(f"{named:,} of {n:,} battles are not anonymous (anony = 0; the official leaderboard uses "
                         "only anonymous battles): kept, with the column anony to select them.")
    unsampled = int((sampled == False).sum())  # noqa: E712 - None (no tag) is neither
    if unsampled:
        notes.append(f"{unsampled:,} battles are marked dedup_tag.sampled = false (a prompt asked too often; the "
                     "leaderboard notebook leaves them out): kept.")
    return notes
