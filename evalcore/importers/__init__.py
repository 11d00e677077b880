"""Logs written by other evaluation tools, turned into evalcore's canonical tables.

One module per tool (:mod:`.inspect` Inspect AI, :mod:`.lm_eval` lm-evaluation-harness, :mod:`.helm` HELM,
:mod:`.promptfoo`, :mod:`.openai_evals` OpenAI evals, :mod:`.openai_evals_api` OpenAI Evals API output items,
:mod:`.pairwise` AlpacaEval and MT-Bench judgments, :mod:`.alpaca_eval_leaderboard` AlpacaEval leaderboards,
:mod:`.chatbot_arena` Chatbot Arena battles, :mod:`.every_eval_ever` every_eval_ever, :mod:`.deepeval` DeepEval,
:mod:`.lighteval` lighteval details, :mod:`.ragas` Ragas per-sample results), with :mod:`.chat_text` turning their
prompts and chats into text; :mod:`.detect` recognises each file's tool from its content, :mod:`.combine` stacks
several files.
Most users call :func:`evalcore.data.validation.load_eval_log` / :func:`evalcore.data.validation.load_eval_logs`, which use these.
"""

from evalcore.importers.base import Imported, LogFile
from evalcore.importers.combine import RawLog, read_logs
from evalcore.importers.detect import expand, tool_of, tools

__all__ = ["Imported", "LogFile", "RawLog", "expand", "read_logs", "tool_of", "tools"]
