"""Bounded work: run a function on untrusted input in a child process whose memory and time are limited.

Parsing and validating a file someone uploaded is the one step of evalcore whose cost the uploader controls. On a
shared server it runs in a short-lived child interpreter (``python -c`` of :func:`_child_main`, started with
:mod:`subprocess`) with

* an address-space limit (``RLIMIT_AS``) of ``memory_bytes`` above what the child holds once it has imported
  evalcore's reader: an allocation beyond it fails inside the child, which reports it;
* a deadline of ``seconds``: the child is killed when it passes;
* at most ``workers`` such children at once in the process, counted once for every caller whatever limits it
  passes (further callers wait for a slot, within the deadline): several loads at once together hold at most
  ``workers`` times ``memory_bytes``. Slots were kept per value of ``workers``, so callers passing different limits
  did not share them.

The child is a fresh interpreter, not a fork or a ``multiprocessing`` child: those re-run the caller's main script
in the child (under Streamlit that is the dashboard's ``app.py``, which fails outside a script run, for instance
with sign-in configured) and a fork inherits the server's threads and locks. Starting one costs about 0.7 s of
imports, small beside reading a file. The caller's process never holds more than the result, and its threads keep
serving other users while they wait. Every way the child can fail becomes an :class:`~evalcore.errors.EvalDataError`
that names the bound and how to raise it.

=============================  =====================================  ========
variable                       bound                                  default
=============================  =====================================  ========
``EVALCORE_WORKER_MEMORY_MB``  memory one child may add                4,096
``EVALCORE_WORKER_SECONDS``    time one child may take                120
``EVALCORE_WORKERS``           children at once per server process    2
=============================  =====================================  ========

Files that are clearly within these bounds (:func:`clearly_small`: plain files, none compressed or an archive,
together at most :data:`IN_PROCESS_BYTES`) are read in the caller's process (``run_bounded(..., in_process=True)``):
a megabyte of text cannot come near the bounds, and the child's start, a second import of pandas, would cost the
command line more than the reading (``evalcore validate`` of a small file).
"""

from __future__ import annotations

import ctypes
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from evalcore.errors import EvalDataError
from evalcore.data.limits import MB, env_number

try:  # POSIX only; elsewhere the deadline still applies
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]


@dataclass(frozen=True)
class WorkLimits:
    """Bounds on one piece of untrusted work: memory it may add, seconds it may take, children at once."""

    memory_bytes: int = 4096 * MB
    seconds: float = 120.0
    workers: int = 2

    @classmethod
    def from_env(cls) -> "WorkLimits":
        """The bounds configured by ``EVALCORE_WORKER_MEMORY_MB``, ``EVALCORE_WORKER_SECONDS``, ``EVALCORE_WORKERS``."""
        return cls(memory_bytes=env_number("EVALCORE_WORKER_MEMORY_MB", 4096) * MB,
                   seconds=float(env_number("EVALCORE_WORKER_SECONDS", 120)),
                   workers=env_number("EVALCORE_WORKERS", 2))


#: the children running in this process, whoever started them; read and changed under the condition's lock only
_running = 0
_slot_freed = threading.Condition()
#: how a native library that aborts instead of raising says it ran out of memory (Arrow's CSV parser does)
_OUT_OF_MEMORY = re.compile(r"out of memory|MemoryError|bad_alloc|Cannot allocate memory", re.IGNORECASE)
#: plain files together at most this size are read in the caller's process (:func:`clearly_small`)
IN_PROCESS_BYTES = 1 * MB
#: a folder of more files than this is read in the child whatever their size
IN_PROCESS_FILES = 200
#: the first bytes of files that expand when read (gzip, bzip2, xz, Zstandard, zip and Inspect's .eval) or that
#: declare their own sizes (Parquet): read in the child whatever their size
_PACKED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd", b"PK", b"PAR1")
#: what the child imports before its memory is capped (the reader and its libraries), so the cap counts the work
_PRELOAD = "evalcore.data.validation"


def _take_slot(workers: int, seconds: float) -> bool:
    """Count one more child running in this process once fewer than ``workers`` run, waiting at most ``seconds``;
    whether it was counted."""
    global _running
    with _slot_freed:
        if not _slot_freed.wait_for(lambda: _running < workers, timeout=seconds):
            return False
        _running += 1
    return True


def _give_slot() -> None:
    global _running
    with _slot_freed:
        _running -= 1
        _slot_freed.notify_all()  # waiters may allow different numbers of workers


def clearly_small(paths: Sequence[Path]) -> bool:
    """Whether reading ``paths`` (files, or folders of at most :data:`IN_PROCESS_FILES` files) is clearly within the
    child's bounds: every file is plain (none starts as a compressed file, an archive or Parquet does) and together
    they hold at most :data:`IN_PROCESS_BYTES`."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += [f for f in path.rglob("*") if f.is_file()]
        elif path.is_file():
            files.append(path)
        else:
            return False
        if len(files) > IN_PROCESS_FILES:
            return False
    try:
        if sum(f.stat().st_size for f in files) > IN_PROCESS_BYTES:
            return False
        for file in files:
            with file.open("rb") as handle:
                if handle.read(6).startswith(_PACKED):
                    return False
    except OSError:
        return False
    return True


def run_bounded(fn: Callable[..., Any], *args: Any, limits: WorkLimits | None = None,
                what: str = "Reading the file", in_process: bool = False) -> Any:
    """``fn(*args)`` computed in a child process within ``limits``; its result, or its EvalDataError re-raised.

    ``fn`` and ``args`` must be picklable (``fn`` a module-level function). ``what`` names the work in messages.
    ``in_process``: the work is clearly within the bounds (:func:`clearly_small` of its files) and runs here.
    """
    if in_process:
        return fn(*args)
    limits = limits or WorkLimits.from_env()
    start = time.monotonic()
    if not _take_slot(limits.workers, limits.seconds):
        raise EvalDataError(
            f"{what} could not start: the server is busy with {limits.workers} other files for longer than "
            f"{limits.seconds:g} s. Try again in a minute. (Administrators: EVALCORE_WORKERS sets how many files "
            "are read at once.)")
    try:
        return _run_child(fn, args, limits, what, limits.seconds - (time.monotonic() - start))
    finally:
        _give_slot()


def _run_child(fn, args, limits: WorkLimits, what: str, seconds: float) -> Any:
    # two pickles: the settings first (the child sets its import path before it unpickles the work)
    job = pickle.dumps((sys.path, limits.memory_bytes, seconds)) + pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL)
    with tempfile.TemporaryFile() as errors:  # on disk: what the child prints costs the caller no memory
        child = subprocess.Popen([sys.executable, "-c", "from evalcore.data.sandbox import _child_main; _child_main()"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                 env=_child_environment())
        try:
            out, _ = child.communicate(job, timeout=max(seconds, 0.0))
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise EvalDataError(
                f"{what} took longer than {limits.seconds:g} s, the limit for one file, and was stopped. Upload a "
                "smaller file or a sample. (Administrators: EVALCORE_WORKER_SECONDS raises the limit.)") from None
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        errors.seek(max(0, errors.seek(0, os.SEEK_END) - 4096))
        last_words = errors.read().decode("utf-8", "replace")
    try:
        status, payload = pickle.loads(out) if out else ("died", None)
    except Exception:  # noqa: BLE001 - a child killed while writing leaves a partial pickle
        status, payload = "died", None
    if status == "ok":
        return payload
    if status == "error":
        raise EvalDataError(payload)
    if status == "memory" or (status == "died" and (child.returncode in (-signal.SIGKILL, 137)
                                                    or _OUT_OF_MEMORY.search(last_words))):
        raise EvalDataError(
            f"{what} needed more than {limits.memory_bytes // MB:,} MB of memory, the limit for one file, and was "
            "stopped. Upload a smaller file or a sample. (Administrators: EVALCORE_WORKER_MEMORY_MB raises the "
            "limit.)")
    raise EvalDataError(f"{what} failed unexpectedly ({payload or f'the worker exited with code {child.returncode}'}).")


def _child_environment() -> dict[str, str]:
    """The caller's environment, with the caller's import path (so that the child finds evalcore itself; the rest
    of ``sys.path`` follows in the job)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _child_main() -> None:
    """The child's side: read the job from stdin, cap memory, run it, write ``(status, payload)`` to stdout.

    Anything the work itself prints goes to stderr, so the result's channel stays clean."""
    result = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    path, memory_bytes, seconds = pickle.load(sys.stdin.buffer)
    sys.path[:] = path
    __import__(_PRELOAD)
    _end_with_parent(seconds)
    _limit_memory(memory_bytes)
    try:
        fn, args = pickle.load(sys.stdin.buffer)
        outcome = ("ok", fn(*args))
    except EvalDataError as exc:
        outcome = ("error", str(exc))
    except MemoryError:
        outcome = ("memory", None)
    except Exception as exc:  # noqa: BLE001 - reported to the caller as an unexpected failure
        outcome = ("crash", f"{type(exc).__name__}: {exc}")
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        data = pickle.dumps(("memory", None))
    except Exception as exc:  # noqa: BLE001 - a result that cannot be pickled
        data = pickle.dumps(("crash", f"the result cannot be sent back ({type(exc).__name__}: {exc})"))
    result.write(data)
    result.close()


def _end_with_parent(seconds: float) -> None:
    """Die with the process that started this child, and at the deadline even if nobody is left to enforce it
    (a server that stopped while the child worked must not leave it running)."""
    if hasattr(signal, "alarm"):
        signal.alarm(int(seconds) + 5)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _limit_memory(memory_bytes: int) -> None:
    """Cap the address space at what the process maps now plus ``memory_bytes``."""
    if resource is None:
        return
    mapped = _mapped_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = mapped + memory_bytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _mapped_bytes() -> int:
    """The process's virtual memory size (VmSize), 0 where /proc is absent."""
    try:
        with open(f"/proc/{os.getpid()}/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
