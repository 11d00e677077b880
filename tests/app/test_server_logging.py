"""The server drops Streamlit's "missing ScriptRunContext" warning and nothing else (issue 26)."""
import logging
import subprocess
import sys
import threading
from pathlib import Path

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


def test_the_server_warms_the_pages_imports_read_from_their_source():
    names = server.page_imports()
    # modules the pages import, directly (import x / from x import y) and as submodules (from x import module)
    assert {"pandas", "evalcore.stats.overall", "pages.common.leaderboard_cache", "evalcore.calibration.figures",
            "pages.common.data_source"} <= set(names)
    # names that are attributes, not modules, are left out (importing them would fail)
    assert "evalcore.data.display.literal" not in names and "pages.common.data_source.ActiveData" not in names
    assert len(names) == len(set(names))


def test_importing_the_server_imports_the_pages_modules_in_the_background():
    probe = ("import sys, threading; import pages.common.server; "
             "[t.join() for t in threading.enumerate() if t.name == 'evalcore-warm-imports']; "
             "print(all(m in sys.modules for m in pages.common.server.page_imports()), "
             "'evalcore.leaderboard.publication' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                         cwd=Path(server.__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]  # every page import warmed; the publication figure stays lazy
