"""The dashboard's request guard: ASGI middleware in front of Streamlit's own routes (``st.App(middleware=...)``).

Streamlit serves uploads, media files and metrics to anyone who reaches the port. This guard decides before a
request's body is read, so a refused request costs no memory:

* With sign-in configured, ``/_stcore/upload_file/...``, ``/media/...`` (a session's downloads and images) and
  ``/_stcore/metrics`` answer 403 unless the request carries the signed session cookie of a team member who has
  not signed out (:func:`pages.common.sign_in.verdict`, the same rule as the pages).
* Every instance bounds uploads: at most ``EVALCORE_SESSION_UPLOAD_FILES`` files (default 50) and
  ``EVALCORE_SESSION_UPLOAD_MB`` megabytes (default 400) held for one session, and ``EVALCORE_UPLOADS_MB``
  (default 2,048) for all sessions together; a request that would pass them answers 413 with the bound and the
  variable to raise. An upload's bytes are reserved, under a lock, before its body is accepted (its Content-Length,
  or, without one, each chunk as it arrives), counted with what the upload manager holds, and released when the
  request ends, whether it finished, failed or lost its connection (an upload the manager then holds counts there
  until it is dropped). Uploads in flight together therefore share the bounds: checking each request against what
  is already held let ten concurrent 100 MB uploads into one session all pass a 400 MB bound (issue 38).
* Every :data:`JANITOR_SECONDS` the sessions whose reconnect window has passed are shut down (Streamlit only
  forgets them), their uploads and session state dropped, and the freed memory handed back to the system.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import json
import logging
import re
import sys
import threading
import types
from typing import Any

from evalcore.data.limits import MB, env_number

from . import sign_in

UPLOAD = re.compile(r"/_stcore/upload_file/([^/]+)/")
PROTECTED = ("/_stcore/upload_file/", "/media/", "/_stcore/metrics")
USER_COOKIE = "_streamlit_user"
JANITOR_SECONDS = 15.0
_LOG = logging.getLogger(__name__)


def signed_in_claims(headers: dict[str, str]) -> dict[str, Any] | None:
    """The claims of the request's signed Streamlit session cookie; None when absent, forged or expired."""
    from http.cookies import SimpleCookie

    from streamlit.auth_util import get_cookie_with_chunks
    from streamlit.web.server.server_util import get_cookie_secret
    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value

    jar = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - a malformed Cookie header carries no session
        return None
    cookies = {name: morsel.value for name, morsel in jar.items()}
    secret = get_cookie_secret()

    def one(name: str) -> bytes | None:
        value = cookies.get(name)
        return None if value is None else decode_signed_value(secret, name, value.encode("latin-1"))

    decoded = get_cookie_with_chunks(one, USER_COOKIE)
    if decoded is None:
        return None
    try:
        claims = json.loads(decoded.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(claims, dict) or not claims.get("is_logged_in"):
        return None
    claims.pop("origin", None)
    return claims


def team_member_request(headers: dict[str, str]) -> bool:
    """Whether the request comes from a signed-in team member's session."""
    claims = signed_in_claims(headers)
    return claims is not None and sign_in.verdict(claims).identity is not None


def _upload_manager():
    from streamlit.runtime import Runtime

    return Runtime.instance().uploaded_file_mgr if Runtime.exists() else None


def held_bytes(session_id: str | None = None) -> tuple[int, int]:
    """(files, bytes) of uploads held for ``session_id``, or for every session when None."""
    manager = _upload_manager()
    storage = getattr(manager, "file_storage", {})
    sessions = [storage.get(session_id, {})] if session_id is not None else list(storage.values())
    files = [rec for session in sessions for rec in list(session.values())]
    return len(files), sum(len(rec.data) for rec in files)


class Reservation:
    """The bytes reserved for one upload request while its body arrives, for ``session_id``."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.bytes = 0


#: the reservations of the upload requests in flight; read and changed under :data:`_RESERVED_LOCK` only
_RESERVED: set[Reservation] = set()
_RESERVED_LOCK = threading.Lock()


def upload_refusal(reservation: Reservation, more: int) -> str | None:
    """Reserve ``more`` bytes for ``reservation`` (entering it among the requests in flight) and return None; or,
    when they would pass a bound, reserve nothing and say why.

    The check and the reservation are one step under a lock, so that uploads in flight together cannot each pass
    a bound that they pass together. What counts is what the upload manager holds plus what is reserved; a request
    in flight counts as one file of its session."""
    max_files = env_number("EVALCORE_SESSION_UPLOAD_FILES", 50)
    max_session = env_number("EVALCORE_SESSION_UPLOAD_MB", 400) * MB
    max_all = env_number("EVALCORE_UPLOADS_MB", 2048) * MB
    session_id = reservation.session_id
    with _RESERVED_LOCK:
        files, held = held_bytes(session_id)
        _, everyone = held_bytes()
        others = [r for r in _RESERVED if r.session_id == session_id and r is not reservation]
        held += sum(r.bytes for r in others) + reservation.bytes
        everyone += sum(r.bytes for r in _RESERVED if r is not reservation) + reservation.bytes
        if reservation not in _RESERVED and files + len(others) >= max_files:
            return (f"This session already holds {files + len(others)} uploaded files, the most one session may "
                    "hold: remove some first. (Administrators: EVALCORE_SESSION_UPLOAD_FILES raises the limit.)")
        if held + more > max_session:
            return (f"This session's uploads would pass {max_session // MB:,} MB, the most one session may hold: "
                    "remove some first. (Administrators: EVALCORE_SESSION_UPLOAD_MB raises the limit.)")
        if everyone + more > max_all:
            return (f"The server holds or is receiving {everyone // MB:,} MB of uploads for all sessions, near its "
                    f"limit of {max_all // MB:,} MB: try again later. (Administrators: EVALCORE_UPLOADS_MB raises "
                    "the limit.)")
        reservation.bytes += more
        _RESERVED.add(reservation)
    return None


def release(reservation: Reservation) -> None:
    """The request of ``reservation`` has ended: its bytes are no longer reserved (what the upload manager kept of
    it counts there)."""
    with _RESERVED_LOCK:
        _RESERVED.discard(reservation)


def end_expired_sessions() -> bool:
    """Shut down the sessions whose reconnect window (``server.disconnectedSessionTTL``) has passed, and drop the
    uploads of sessions that no longer exist; whether anything was let go.

    Streamlit keeps a disconnected session for reconnection in a TTL cache that only drops it when the cache is next
    touched, and dropping it never shuts it down, so its uploads stayed in memory for good (issue 23: 1.7 GB six
    minutes after the sessions closed). This reaches into the session manager of the pinned Streamlit (1.67);
    ``tests/app/test_guard.py`` fails if that changes. Runs on the server's event loop, as shutdowns must."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    runtime = Runtime.instance()
    manager = runtime._session_mgr
    cache = manager._session_storage._cache
    with manager._storage_lock:
        expired = cache.expire()
    for _, info in expired:
        info.session.shutdown()
        info.session.session_state.clear()  # its values (uploads) and widgets (whose callbacks hold page variables)
    uploads = runtime.uploaded_file_mgr
    orphans = [sid for sid in list(uploads.file_storage) if manager.get_session_info(sid) is None]
    for sid in orphans:
        uploads.remove_session_files(sid)
    if (expired or orphans) and not manager.list_active_sessions():
        # The last script run's module stays installed as __main__, and with it that run's page variables (an
        # upload's frames): with no session left, nothing runs in it any more.
        sys.modules["__main__"] = types.ModuleType("__main__")
    return bool(expired or orphans)


def _release_memory() -> None:
    """Hand freed memory back to the system: Arrow's allocator (pandas' text columns live there) and glibc's heap
    both keep it otherwise."""
    import pyarrow

    pyarrow.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


async def _janitor() -> None:
    """Every :data:`JANITOR_SECONDS`: end expired sessions; when that let something go, collect and trim."""
    while True:
        await asyncio.sleep(JANITOR_SECONDS)
        try:
            if end_expired_sessions():
                gc.collect()
                _release_memory()
        except Exception:  # noqa: BLE001 - the janitor must outlive any one failure; the next round retries
            _LOG.exception("evalcore: ending expired sessions failed")


class RequestGuard:
    """ASGI middleware applying the rules above; everything else passes through untouched."""

    def __init__(self, app) -> None:
        self.app = app
        self._janitor: asyncio.Task | None = None

    async def __call__(self, scope, receive, send) -> None:
        if self._janitor is None:
            self._janitor = asyncio.get_running_loop().create_task(_janitor())
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if sign_in.configured() and path.startswith(PROTECTED) and not team_member_request(headers):
            await _answer(send, 403, "Sign in first: this evalcore instance serves uploads, downloads and metrics "
                                     "to signed-in team members only.")
            return
        upload = UPLOAD.match(path)
        if upload and scope.get("method") == "PUT":
            await self._bounded_upload(upload.group(1), headers, scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _bounded_upload(self, session_id: str, headers: dict[str, str], scope, receive, send) -> None:
        """Pass an upload on with its bytes reserved: its Content-Length before the body is read, and beyond it
        (a chunked upload states none) each chunk as it arrives. A chunk that would pass a bound ends the body for
        the app (as a dropped connection would) and the guard answers 413 instead of the app."""
        try:
            declared = max(int(headers["content-length"]), 0) if "content-length" in headers else 0
        except ValueError:
            declared = 0
        reservation = Reservation(session_id)
        refusal = upload_refusal(reservation, declared)
        if refusal is not None:
            await _answer(send, 413, refusal)
            return
        refused: list[str] = []
        started: list[bool] = []
        arrived = 0

        async def counted_receive():
            nonlocal arrived
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                arrived += len(message.get("body", b""))
                if arrived > reservation.bytes:
                    refusal = upload_refusal(reservation, arrived - reservation.bytes)
                    if refusal is not None:
                        refused.append(refusal)
                        return {"type": "http.disconnect"}
            return message

        async def answering_send(message):
            if refused and not started:
                return  # the guard answers this request
            started.append(True)
            await send(message)

        try:
            await self.app(scope, counted_receive, answering_send)
        except Exception:
            if not refused or started:
                raise
        finally:
            release(reservation)
        if refused and not started:
            await _answer(send, 413, refused[0])


async def _answer(send, status: int, text: str) -> None:
    """A plain-text answer that closes the connection (the request's body is never read)."""
    body = text.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
