"""An example's text as the tools write it, turned into the plain strings of the text roles (``input``, ``target``,
``output``, ``explanation``).

Tools write a prompt either as a string or as a list of chat messages ``{role, content}`` whose ``content`` is a
string or a list of parts (``{"type": "text", "text": ...}``, images, tool calls ...): OpenAI's chat format
(https://platform.openai.com/docs/api-reference/chat/create, ``messages``), which Inspect AI
(``inspect_ai/model/_chat_message.py``, ``_util/content.py``), OpenAI evals (``evals/prompt/base.py``,
``OpenAICreateChatPrompt``) and the OpenAI Evals API (``sample.input`` / ``sample.output``) follow. The text is
returned whole (never cut here: validation cuts each value at its limit and counts the cuts); anything that holds
no text gives None.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd


def text_of(value: Any) -> str | None:
    """``value`` as plain text: a string as it is, chat messages as ``"role: content"`` lines, a list of strings
    joined by newlines, other JSON values written as JSON; None for None, an empty string or an empty list."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, list):
        if value and all(isinstance(m, dict) and ("content" in m or "role" in m) for m in value):
            return messages_text(value)
        parts = [text_of(v) for v in value]
        return "\n".join(p for p in parts if p is not None) or None
    if isinstance(value, dict) and ("content" in value and "role" in value):
        return messages_text([value])
    if isinstance(value, (int, float, bool, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def messages_text(messages: list) -> str | None:
    """Chat messages as ``"role: content"`` lines (a message without a role gives its content alone)."""
    lines = []
    for message in messages:
        if not isinstance(message, dict):
            text = text_of(message)
        else:
            content = content_text(message.get("content"))
            role = message.get("role")
            text = f"{role}: {content or ''}" if role else content
        if text:
            lines.append(text)
    return "\n".join(lines) or None


def content_text(content: Any, reasoning: bool = True) -> str | None:
    """A message's content as text: a string as it is; a list of parts joined by newlines, text parts by their
    text (``text``, ``refusal`` or ``reasoning``; reasoning parts left out when ``reasoning`` is False, as for a
    model's answer), other parts as ``(image)``, ``(audio)`` ..."""
    if content is None or isinstance(content, str):
        return content or None
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return text_of(content)
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            if not reasoning and part.get("type") == "reasoning":
                continue
            text = next((part[k] for k in ("text", "refusal", "reasoning") if isinstance(part.get(k), str)), None)
            if text is None and isinstance(part.get("type"), str):
                text = f"({part['type']})"
            if text:
                parts.append(text)
    return "\n".join(parts) or None


def last_message(messages: Any, role: str = "assistant") -> str | None:
    """The content of the last message of ``role`` in ``messages`` (None if there is none), without reasoning."""
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == role:
            return content_text(message.get("content"), reasoning=False)
    return None


def user_turns(conversation: Any) -> str | None:
    """The user's turns of an OpenAI-format conversation ``[{role, content}, ...]`` (Chatbot Arena, MT-Bench human
    judgments), joined by blank lines; None when it has none."""
    if not isinstance(conversation, list):
        return None
    turns = [m["content"] for m in conversation
             if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str)]
    return "\n\n".join(turns) if turns else None


def joined(values: Any) -> str | None:
    """Reference answers: a string as it is, several joined by newlines (empty ones dropped)."""
    if isinstance(values, (list, tuple)):
        parts = [text_of(v) for v in values]
        return "\n".join(p for p in parts if p) or None
    return text_of(values)


TEXT_ROLES = ("input", "target", "output", "explanation")


def with_text_columns(frame, roles: tuple[str, ...] = TEXT_ROLES):
    """``frame`` with its text-role columns as plain ``str`` or None (pandas writes NaN for None in some
    operations); a text column holding no text at all is dropped."""
    for role in roles:
        if role not in frame:
            continue
        values = [v if isinstance(v, str) else None for v in frame[role].tolist()]
        if all(v is None for v in values):
            frame = frame.drop(columns=role)
        else:
            frame[role] = pd.Series(values, index=frame.index, dtype=object)
    return frame
