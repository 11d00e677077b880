"""evalcore.importers.chat_text: an example's text from the shapes tools write (strings, OpenAI-style chat
messages with string or part-list content, lists of reference answers)."""

from __future__ import annotations

import pandas as pd

import evalcore.data  # noqa: F401  (imported first: evalcore.importers alone meets a circular import)
from evalcore.importers.chat_text import content_text, joined, last_message, text_of, with_text_columns


def test_text_of_strings_messages_and_other_values():
    assert text_of("plain") == "plain" and text_of("") is None and text_of(None) is None and text_of([]) is None
    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Look:"}, {"type": "image", "image": "data:"}]},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}]
    assert text_of(messages) == "system: Be brief.\nuser: Look:\n(image)\nassistant: "
    assert text_of({"answer": 4}) == '{"answer": 4}' and text_of(3) == "3"


def test_content_text_and_last_message_leave_reasoning_out_of_answers():
    parts = [{"type": "reasoning", "reasoning": "think"}, {"type": "text", "text": "B"}]
    assert content_text(parts) == "think\nB" and content_text(parts, reasoning=False) == "B"
    chat = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": parts},
            {"role": "user", "content": "again"}]
    assert last_message(chat) == "B" and last_message(chat, "user") == "again" and last_message("x") is None


def test_joined_references():
    assert joined(["4", "", "four"]) == "4\nfour" and joined("A") == "A" and joined([]) is None


def test_with_text_columns_makes_str_or_none_and_drops_empty_columns():
    frame = pd.DataFrame({"model": ["a", "b"], "input": ["q", float("nan")], "target": [None, None]})
    out = with_text_columns(frame)
    assert list(out.columns) == ["model", "input"] and out["input"].tolist() == ["q", None]
