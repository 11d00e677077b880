"""The server drops Streamlit's "missing ScriptRunContext" warning and nothing else (issue 26)."""
import logging
import threading

from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from pages.common import server


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_missing_context_warning_is_dropped_other_messages_kept():
    logger = logging.getLogger(server.MISSING_CONTEXT_LOGGER)
    records = _Records()
    logger.addHandler(records)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        worker = threading.Thread(target=get_script_run_ctx, name="worker-without-context")
        worker.start()
        worker.join()
        logger.warning("another warning of the same module")
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    assert records.messages == ["another warning of the same module"]
