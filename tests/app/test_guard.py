"""The request guard in front of Streamlit's routes: sign-in for uploads, media and metrics, and upload bounds,
decided from the request's headers alone (the body of a refused request is never read)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from evalcore.data.limits import MB
from pages.common import guard


@dataclass
class Rec:
    data: bytes


class FakeUploads:
    def __init__(self, storage: dict[str, dict[str, Rec]]) -> None:
        self.file_storage = storage


@pytest.fixture()
def uploads(monkeypatch):
    storage: dict[str, dict[str, Rec]] = {}
    monkeypatch.setattr(guard, "_upload_manager", lambda: FakeUploads(storage))
    return storage


def client(monkeypatch, configured: bool, member: bool = False) -> TestClient:
    reached: list[str] = []

    async def anything(request):
        if request.method == "PUT":
            await request.body()
        reached.append(request.url.path)
        return PlainTextResponse("ok")

    monkeypatch.setattr(guard.sign_in, "configured", lambda: configured)
    monkeypatch.setattr(guard, "team_member_request", lambda headers: member)
    app = Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "PUT", "DELETE"])],
                    middleware=[Middleware(guard.RequestGuard)])
    test_client = TestClient(app)
    test_client.reached = reached
    return test_client


def test_with_sign_in_uploads_media_and_metrics_need_a_member(monkeypatch, uploads):
    stranger = client(monkeypatch, configured=True, member=False)
    for method, path in (("PUT", "/_stcore/upload_file/s1/f1"), ("GET", "/media/abc.csv"),
                         ("GET", "/_stcore/metrics")):
        answer = stranger.request(method, path, content=b"x" * 1000)
        assert answer.status_code == 403 and "Sign in first" in answer.text
    assert stranger.get("/_stcore/health").status_code == 200  # the rest passes (the page itself asks for sign-in)
    assert stranger.reached == ["/_stcore/health"]
    member = client(monkeypatch, configured=True, member=True)
    assert member.get("/media/abc.csv").status_code == 200
    assert member.put("/_stcore/upload_file/s1/f1", content=b"x").status_code == 200


def test_without_sign_in_nothing_is_refused_for_want_of_a_session(monkeypatch, uploads):
    anyone = client(monkeypatch, configured=False)
    assert anyone.get("/media/abc.csv").status_code == 200
    assert anyone.put("/_stcore/upload_file/s1/f1", content=b"x").status_code == 200


def test_a_session_may_hold_a_bounded_number_and_size_of_uploads(monkeypatch, uploads):
    monkeypatch.setenv("EVALCORE_SESSION_UPLOAD_FILES", "3")
    monkeypatch.setenv("EVALCORE_SESSION_UPLOAD_MB", "10")
    anyone = client(monkeypatch, configured=False)
    uploads["s1"] = {"a": Rec(b"x" * 4 * MB), "b": Rec(b"x" * 4 * MB)}
    answer = anyone.put("/_stcore/upload_file/s1/c", content=b"x" * (3 * MB))
    assert answer.status_code == 413 and "10 MB" in answer.text and "EVALCORE_SESSION_UPLOAD_MB" in answer.text
    assert anyone.put("/_stcore/upload_file/s1/c", content=b"x" * MB).status_code == 200  # 9 MB: fits
    assert anyone.put("/_stcore/upload_file/s2/a", content=b"x" * (3 * MB)).status_code == 200  # another session
    uploads["s1"]["c"] = Rec(b"x")
    answer = anyone.put("/_stcore/upload_file/s1/d", content=b"x")
    assert answer.status_code == 413 and "3 uploaded files" in answer.text
    assert "EVALCORE_SESSION_UPLOAD_FILES" in answer.text


def test_all_sessions_together_are_bounded_too(monkeypatch, uploads):
    monkeypatch.setenv("EVALCORE_UPLOADS_MB", "20")
    anyone = client(monkeypatch, configured=False)
    for session in ("s1", "s2", "s3"):
        uploads[session] = {"a": Rec(b"x" * 6 * MB)}
    answer = anyone.put("/_stcore/upload_file/s4/a", content=b"x" * (3 * MB))
    assert answer.status_code == 413 and "EVALCORE_UPLOADS_MB" in answer.text


def test_an_upload_without_a_length_is_counted_as_its_chunks_arrive(monkeypatch, uploads):
    monkeypatch.setenv("EVALCORE_SESSION_UPLOAD_MB", "2")
    anyone = client(monkeypatch, configured=False)
    uploads["s1"] = {"a": Rec(b"x" * MB)}

    def chunks(n_chunks: int):
        for _ in range(n_chunks):
            yield b"x" * (MB // 4)

    answer = anyone.put("/_stcore/upload_file/s1/b", content=chunks(5))  # 1 MB held + 1.25 MB > 2 MB
    assert answer.status_code == 413 and "2 MB" in answer.text and "EVALCORE_SESSION_UPLOAD_MB" in answer.text
    assert anyone.reached == []  # the app never answered it
    assert anyone.put("/_stcore/upload_file/s1/b", content=chunks(3)).status_code == 200  # 1.75 MB: fits
    assert not guard._RESERVED  # both requests ended: nothing stays reserved


def test_uploads_in_flight_together_share_the_bounds(monkeypatch, uploads):
    """Ten reservations made before any body arrives: only those that fit together are accepted, and every one
    is released when its request ends."""
    monkeypatch.setenv("EVALCORE_SESSION_UPLOAD_MB", "10")
    monkeypatch.setenv("EVALCORE_UPLOADS_MB", "15")
    s1 = [guard.Reservation("s1") for _ in range(10)]
    verdicts = [guard.upload_refusal(r, 3 * MB) for r in s1]
    assert [v is None for v in verdicts] == [True] * 3 + [False] * 7  # 9 MB reserved; a fourth would make 12
    assert all("10 MB" in v and "EVALCORE_SESSION_UPLOAD_MB" in v for v in verdicts[3:])
    s2 = [guard.Reservation("s2") for _ in range(3)]
    verdicts = [guard.upload_refusal(r, 3 * MB) for r in s2]
    assert [v is None for v in verdicts] == [True, True, False]  # 15 MB in flight for all sessions
    assert "15 MB" in verdicts[2] and "EVALCORE_UPLOADS_MB" in verdicts[2]
    for reservation in s1 + s2:
        guard.release(reservation)
    assert not guard._RESERVED
    later = guard.Reservation("s2")
    assert guard.upload_refusal(later, 9 * MB) is None
    guard.release(later)


def test_a_forged_or_missing_cookie_is_no_session():
    assert guard.signed_in_claims({}) is None
    assert guard.signed_in_claims({"cookie": "_streamlit_user=forged.value.sig"}) is None
    assert guard.signed_in_claims({"cookie": "\x00;;=="}) is None


def test_expired_sessions_are_shut_down_with_their_uploads_on_the_pinned_streamlit(monkeypatch):
    """Streamlit only forgets a disconnected session once its reconnect window passes; the guard's janitor shuts
    it down (its uploads go) and drops uploads of sessions that no longer exist. Real session manager, storage and
    upload manager of the pinned Streamlit: this fails if their internals change."""
    import types

    from streamlit.runtime import Runtime
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.session_manager import SessionInfo
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    clock = [1000.0]
    storage = MemorySessionStorage(ttl_seconds=10)
    storage._cache._timer = lambda: clock[0]
    uploads = MemoryUploadedFileManager("/_stcore/upload_file")
    manager = WebsocketSessionManager(storage, uploads, script_cache=None, message_enqueued_callback=None)

    class Session:
        def __init__(self, sid: str) -> None:
            self.id, self.down = sid, False
            self.session_state = {"upload_bytes": b"x" * 100}

        def shutdown(self) -> None:
            self.down = True
            uploads.remove_session_files(self.id)

    gone, fresh = Session("gone"), Session("fresh")
    storage.save(SessionInfo(client=None, session=gone))
    for sid in ("gone", "fresh", "orphan"):
        uploads.add_file(sid, UploadedFileRec(file_id="f", name="a.csv", type="text/csv", data=b"x" * 1000))
    runtime = types.SimpleNamespace(_session_mgr=manager, uploaded_file_mgr=uploads)
    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: runtime))
    monkeypatch.setitem(__import__("sys").modules, "__main__", __import__("sys").modules["__main__"])

    clock[0] += 5
    storage.save(SessionInfo(client=None, session=fresh))
    assert guard.end_expired_sessions()  # the orphan's uploads go; nothing has expired yet
    assert not gone.down and set(uploads.file_storage) == {"gone", "fresh"}
    clock[0] += 6  # "gone" is past its window, "fresh" is not
    assert guard.end_expired_sessions()
    assert gone.down and gone.session_state == {} and not fresh.down
    assert set(uploads.file_storage) == {"fresh"}
    assert not guard.end_expired_sessions()  # nothing more to let go
