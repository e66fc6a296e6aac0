"""The hub's web side as an attacker on the venue Wi-Fi and a fuzzer see it (issue 12): the
OpenAPI contract, fuzzed with schemathesis as each role; limits on bodies, slow clients,
connections and streams, tested with real sockets; logins that resist guessing and cannot be
turned against staff. Memory and threads are read from /proc."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from contract.commands import COMMANDS
from contract.schema import document
from contract.wire import decode
from hub import auth
from hub.service import FloorService
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings, users_file_mode
from tests.conftest import open_event_stream, wait_for

VENUE = "webtest"
OPENAPI = Path(__file__).resolve().parents[1] / "docs" / "openapi.json"
ROLES = {"viewer": "val", "floor": "maria", "supervisor": "sam", "broadcast": "bea"}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    from simulators.broker import Broker

    directory = tmp_path_factory.mktemp("web")
    broker = Broker(directory / "mosquitto").start()
    users = directory / "users.toml"
    for role, name in ROLES.items():
        auth.save_user(users, name, role, f"{name}-password")
    started = Hub(HubSettings(venue=VENUE, db=str(directory / "hub.db"), users=str(users),
                              port=broker.port, http_port=0)).start()
    assert started.connected.wait(10)
    yield started
    started.stop()
    broker.kill()


def _address(hub):
    host, port = hub.url.split("//")[1].split(":")
    return host, int(port)


def _session(hub, role):
    import requests

    session = requests.Session()
    # The hub on this machine: no proxy to look up in the environment (requests did, for
    # each of the contract fuzz's 2,500 requests: a twentieth of its time).
    session.trust_env = False
    if role != "anonymous":
        name = ROLES[role]
        answer = session.post(hub.url + "/login", data={"user": name,
                                                         "password": f"{name}-password"},
                              allow_redirects=False, timeout=10)
        assert answer.status_code == 303 and answer.headers["Location"] == "/", answer.text
    return session


def _rss_kb(pid=None):
    for line in Path(f"/proc/{pid or os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


# ---------------------------------------------------------------------------- the contract

def test_the_openapi_document_in_the_repo_is_the_one_the_hub_serves(hub):
    import requests

    served = requests.get(hub.url + "/api/openapi.json", timeout=10).json()
    assert served == json.loads(OPENAPI.read_text()), \
        "docs/openapi.json is stale: python -m hub.web > docs/openapi.json"
    operations = {f"{m.upper()} {p}" for p, ops in served["paths"].items() for m in ops}
    assert {"GET /api/state", "GET /api/stream", "POST /api/clock",
            "POST /api/tables/{table}/cmd/{name}", "POST /api/alerts/{alert}/ack"} <= operations
    # A command's body is the contract's schema of it, less the transaction the hub adds.
    body = served["paths"]["/api/tables/{table}/cmd/{name}"]["post"]["requestBody"]
    shapes = body["content"]["application/json"]["schema"]["anyOf"]
    assert [shape["title"] for shape in shapes] == list(COMMANDS)
    assert shapes[0]["properties"] == {
        k: v for k, v in document()["components"]["schemas"]["SeatingCommand"][
            "properties"].items() if k != "transaction"}


def _contract():
    """The document's operations to fuzz, less the endless streams. Schemathesis is imported
    here and requests in the functions that send with it, not by the module: each of the
    suite's workers imports every test module to collect it, and schemathesis (a second of
    imports, requests among them) is for this file's fuzzing only."""
    import schemathesis

    return schemathesis.openapi.from_path(str(OPENAPI)).exclude(path="/api/stream").exclude(
        path="/api/broadcast/tables/{table}/stream")


@pytest.fixture(scope="module")
def sessions(hub):
    made = {role: _session(hub, role) for role in ("anonymous", *ROLES)}
    yield made
    for session in made.values():
        session.close()


def _fuzz(operation, hub, sessions, statuses) -> None:
    """Generated requests for one operation (and the document's own examples of it), each
    sent as every role and with no session."""
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    from hub.web import deps

    strategies = [operation.as_strategy(), *operation.get_strategies_from_examples()]

    @settings(max_examples=8, deadline=None, derandomize=True, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=st.one_of(*strategies))
    def send(case):
        for role, session in sessions.items():
            # The session's own cookie, over whatever the generator made of the documented one.
            token = session.cookies.get(deps.COOKIE)
            response = case.call_and_validate(
                base_url=hub.url, session=session, timeout=10,
                cookies={deps.COOKIE: token} if token else {},
                checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                        response_schema_conformance])
            if role != "anonymous" and case.method == "GET" and response.status_code == 401:
                raise AssertionError(f"{role}'s session was not used: {response.text}")
            statuses.add((role, case.method, case.path, response.status_code))

    send()


def test_every_operation_as_every_role_answers_within_the_contract(hub, sessions):
    """No 5xx, no answer outside the document (status, content type, body), no hang: each
    generated request is sent as every role (and with no session) to the running hub. Then a
    barrier against a fuzzer that only ever met the login wall: every role got past it
    somewhere, and a viewer's clock call was refused (403)."""
    statuses: set[tuple[str, str, str, int]] = set()
    operations = [result.ok() for result in _contract().get_all_operations()]
    assert len(operations) >= 7
    for operation in operations:
        _fuzz(operation, hub, sessions, statuses)
    for role in ROLES:
        assert any(r == role and code == 200 for r, _, _, code in statuses), role
    assert ("viewer", "POST", "/api/clock", 403) in statuses


# ---------------------------------------------------------------------------- bodies and headers

def _raw(hub, request: bytes, read_timeout=10.0) -> bytes:
    with socket.create_connection(_address(hub), timeout=read_timeout) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and b'"error"' in b"".join(chunks):
                break
        return b"".join(chunks)


@pytest.mark.parametrize("length, status", [("-1", b"400"), ("abc", b"400"),
                                            ("99999999999", b"413"), ("20000", b"413")])
def test_a_bad_or_huge_content_length_is_answered_with_a_reason(hub, length, status):
    answer = _raw(hub, b"POST /api/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                       b"\r\nContent-Length: " + length.encode() + b"\r\n\r\n{}")
    head = answer.split(b"\r\n", 1)[0]
    assert status in head, answer[:300]
    assert b"content-security-policy" in answer.lower()


def test_a_chunked_body_over_the_limit_is_refused_while_it_is_read(hub):
    chunk = b"x" * 8192
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\n"
    answer = _raw(hub, b"POST /api/clock HTTP/1.1\r\nHost: x\r\nContent-Type: "
                       b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    assert b" 413 " in answer.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("body", [b"[" * 5000 + b"]" * 5000, b'{"action": "add", "value": 1e400}',
                                  b'{"action": "add", "value": NaN}', b"\xff\xfe"])
def test_hostile_json_is_a_400_with_a_reason_never_a_dropped_connection(hub, sessions, body):
    answer = sessions["floor"].post(hub.url + "/api/clock", data=body, timeout=10,
                                    headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"]
    assert answer.headers["Content-Security-Policy"].startswith("default-src 'self'")


@pytest.mark.parametrize("path", ["/api/tables/t1/hands?n=%C2%B2", "/api/tables/t1/hands?n=0",
                                  "/api/tables/t..1/hands", "/nothing", "/api/alerts/x/ack"])
def test_odd_requests_are_answered_as_json_with_security_headers(hub, sessions, path):
    answer = sessions["floor"].get(hub.url + path, timeout=10)
    assert answer.status_code in (400, 404, 405)
    assert decode(answer.content)["error"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"


def test_a_slow_client_is_cut_within_the_request_deadline(hub, monkeypatch):
    """Headers trickled a byte every half second, and a body that never comes: both
    connections are closed by the hub within the deadline (plus a margin), however often a
    byte arrives (uvicorn's own keep-alive timer starts again with each)."""
    from hub.web import server

    monkeypatch.setattr(server, "REQUEST_DEADLINE", 2.0)
    started = time.monotonic()
    trickler = socket.create_connection(_address(hub), timeout=30)
    silent = socket.create_connection(_address(hub), timeout=30)
    silent.sendall(b"POST /api/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 100\r\n\r\n{")
    closed = {"trickler": None, "silent": None}

    def trickle() -> None:
        for byte in b"GET /api/state HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"y" * 100:
            try:
                trickler.sendall(bytes([byte]))
                if trickler.recv(1, socket.MSG_DONTWAIT) == b"":
                    break
            except BlockingIOError:
                pass
            except OSError:
                break
            time.sleep(0.5)
        closed["trickler"] = time.monotonic() - started

    def wait_close() -> None:
        try:
            while silent.recv(4096):
                pass
        except OSError:
            pass
        closed["silent"] = time.monotonic() - started

    threads = [threading.Thread(target=trickle), threading.Thread(target=wait_close)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(40)
    trickler.close()
    silent.close()
    limit = server.REQUEST_DEADLINE + 5
    assert closed["silent"] is not None and closed["silent"] < limit, closed
    assert closed["trickler"] is not None and closed["trickler"] < limit, closed


def test_connections_over_the_cap_are_refused_and_half_sent_requests_free_their_threads(hub):
    from hub.web import server

    threads_before = len(os.listdir("/proc/self/task"))
    held = []
    try:
        for _ in range(server.MAX_CONNECTIONS + 20):
            sock = socket.create_connection(_address(hub), timeout=10)
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")  # never finished
            held.append(sock)
        # Over the cap, a complete request is answered 503 (not queued, not hung).
        answer = _raw(hub, b"GET /api/state HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b" 503 " in answer.split(b"\r\n", 1)[0], answer[:200]
        # Half-sent requests hold no thread of the hub: it serves them on one event loop.
        assert len(os.listdir("/proc/self/task")) - threads_before < 10
    finally:
        for sock in held:
            sock.close()
    assert wait_for(lambda: b" 401 " in _raw(hub, b"GET /api/state HTTP/1.1\r\nHost: x\r\n"
                                                     b"\r\n").split(b"\r\n", 1)[0], 20)


def test_one_host_re_opening_half_sent_requests_cannot_keep_a_supervisor_out(hub):
    """300 half-sent requests, each re-opened as it is cut, left a supervisor with 503 on 16
    of 17 tries. One address holds at most its share; the 503 it then meets carries the
    security headers; a supervisor on another address is served."""
    from hub.web import guard, server

    host, port = _address(hub)
    held, refused = [], []
    try:
        for _ in range(300):  # from 127.0.0.3 (127.0.0.1 is the trusted reverse proxy's)
            sock = socket.create_connection((host, port), timeout=10,
                                            source_address=("127.0.0.3", 0))
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")  # never finished
            sock.settimeout(0.05)
            try:
                answer = sock.recv(4096)
            except TimeoutError:
                answer = b""
            (refused if answer else held).append((sock, answer))
        # A crowded hub may write a refusal later than 0.05 s. The barrier: one more request
        # from the same address, answered 503 after every earlier connection was taken in
        # (one event loop, in order); then a refusal that came late is already here.
        barrier = socket.create_connection((host, port), timeout=10,
                                           source_address=("127.0.0.3", 0))
        barrier.sendall(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")
        last = barrier.recv(4096)
        refused.append((barrier, last))
        for sock, _ in list(held):
            sock.setblocking(False)
            try:
                late = sock.recv(4096)
            except BlockingIOError:
                continue
            held.remove((sock, b""))
            refused.append((sock, late))
        assert len(held) <= server.MAX_CONNECTIONS_PER_ADDRESS
        assert b" 503 " in last.split(b"\r\n", 1)[0]
        for header in guard.SECURITY_HEADERS:
            assert header.lower().encode() + b": " in last, header
        # The supervisor's tablet, another address (bound to 127.0.0.2 on loopback).
        for _ in range(17):
            with socket.create_connection((host, port), timeout=10,
                                          source_address=("127.0.0.2", 0)) as sock:
                sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: x\r\n\r\n")
                assert b" 401 " in sock.recv(4096).split(b"\r\n", 1)[0]  # served: no login
    finally:
        for sock, _ in held + refused:
            sock.close()


def test_a_405_names_what_is_allowed_and_plain_http_gets_no_hsts(hub):
    import requests

    answer = requests.delete(hub.url + "/api/state", timeout=10)
    assert answer.status_code == 405 and "GET" in answer.headers["Allow"]
    assert "Strict-Transport-Security" not in answer.headers  # HTTPS only (test_security)


def test_the_clock_takes_no_true_for_a_number(hub):
    """JSON true was taken as 1 (a second added)."""
    maria = _session(hub, "floor")

    def clock(action, value=None):
        return maria.post(hub.url + "/api/clock", json={"action": action, "value": value},
                          timeout=10).status_code

    assert clock("start", "tda-2024") == 200
    try:
        for value in (True, "3", [3]):
            assert clock("add", value) == 400, value
        assert clock("add", 60) == 200  # a number is a number
    finally:
        assert clock("stop") == 200


def test_each_domain_error_has_its_answer_and_anything_else_is_a_bug():
    """The use cases' errors are mapped to answers in one place: the staff's mistakes are 400s
    with the reason, a wrong room key a 403, a TV link withdrawn already a 409 with the
    current one, a floor that does not answer a 503; an error not listed (a TypeError, say)
    is no client's fault, and is left to be a 500."""
    import asyncio

    from fastapi import FastAPI

    from contract.commands import CommandError
    from hub.balance_desk import BalanceRefused
    from hub.clock_cases import NotTheRoomKey, TvLinkChanged
    from hub.refused import StaffError
    from hub.roster import RosterError
    from hub.venue_clock import ClockError
    from hub.web import errors

    app = FastAPI()
    errors.install(app)
    raised: list[Exception] = []

    @app.post("/api/x")
    def use_case() -> None:  # a route whose use case raised what the test gives it
        raise raised[-1]

    def answer(exc):
        """The answer to a request whose use case raised ``exc``, through the app's own
        middleware (None: no handler took it, and the server would answer a 500)."""
        raised.append(exc)
        sent: list[dict] = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "path": "/api/x", "raw_path": b"/api/x", "root_path": "",
                 "scheme": "http", "query_string": b"", "headers": [],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
        try:
            asyncio.run(app(scope, receive, send))
        except Exception as escaped:
            assert escaped is exc
            return None
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], decode(body)

    for mistake in (StaffError, RosterError, BalanceRefused, ClockError, CommandError):
        assert answer(mistake("said so")) == (400, {"error": "said so"}), mistake
    assert answer(NotTheRoomKey("not the link")) == (403, {"error": "not the link"})
    current = {"path": "/tv#k", "generation": 2}
    assert answer(TvLinkChanged("withdrawn already", current)) == (
        409, {"error": "withdrawn already", "current": current})
    from controller.payouts import PayoutTableError
    from hub.payout_cases import PayoutsFrozen

    status, body = answer(PayoutTableError("ours", ["paid: missing", "source: missing"]))
    assert (status, body["problems"]) == (400, ["paid: missing", "source: missing"])
    assert answer(PayoutsFrozen("frozen")) == (409, {"error": "frozen"})
    assert answer(TimeoutError())[0] == 503
    assert answer(TypeError("a bug")) is None and answer(ValueError("a bug")) is None


def test_a_call_the_floor_does_not_answer_in_time_is_a_503_and_is_not_done_later(
        hub, monkeypatch, caplog):
    from hub.web import deps

    monkeypatch.setattr(deps, "FLOOR_TIMEOUT", 0.5)
    caplog.set_level(logging.WARNING, logger="tablectl.hub")
    release = threading.Event()
    maria = Staff(hub.url, "maria", "maria-password")
    try:
        hub.worker.submit(lambda floor: release.wait(10))  # the floor's worker is busy
        assert maria.post("/api/roster/players", {"name": "Late Larry"}) == (
            503, {"error": "the hub did not answer in time: try again"})
    finally:
        release.set()
        maria.close()
    names = [p["name"] for p in hub.call(FloorService.roster)["players"]]
    assert "Late Larry" not in names, "a request given up on was done once the floor was free"
    # The log says what held the floor: the call it was on, what waited, where its thread was.
    [line] = [r.getMessage() for r in caplog.records if "for the floor in vain" in r.getMessage()]
    assert line.startswith("FloorService.add_player waited 0.5 s"), line
    # (What waits: this request, and whatever the venue's tables sent meanwhile.)
    assert "has been on Call(test_a_call_the_floor" in line, line
    assert re.search(r", [1-9][0-9]* waiting;", line), line
    assert "release.wait(10)" in line, line


def test_the_users_file_is_never_readable_by_others(tmp_path, monkeypatch):
    """It was written, then chmod'ed: readable by others meanwhile (and for good if the chmod
    failed). Created 0600, swapped in whole."""
    from pathlib import Path

    def no_chmod(self, mode):
        raise PermissionError("chmod refused")

    monkeypatch.setattr(Path, "chmod", no_chmod)
    old_umask = os.umask(0o022)
    try:
        auth.save_user(tmp_path / "users.toml", "maria", "floor", "maria-password")
        (tmp_path / "users.toml").write_text((tmp_path / "users.toml").read_text())  # 0644 now
        os.chmod(tmp_path / "users.toml", 0o644)
        auth.save_user(tmp_path / "users.toml", "sam", "supervisor", "sam-password")
    finally:
        os.umask(old_umask)
    assert (tmp_path / "users.toml").stat().st_mode & 0o777 == 0o600
    assert set(auth.load_users(tmp_path / "users.toml")) == {"maria", "sam"}


# ---------------------------------------------------------------------------- streams

def test_streams_are_capped_per_session_and_a_stalled_viewer_is_dropped(hub):
    from hub.web import streams

    maria = Staff(hub.url, "maria", "maria-password")
    cookie = maria.cookie()
    opened = []
    try:
        for _ in range(streams.MAX_STREAMS_PER_SESSION):
            sock, status = open_event_stream(hub.url, cookie)
            opened.append(sock)
            assert b" 200 " in status
        one_more = maria.get("/api/stream")
        assert one_more[0] == 429 and "at most" in one_more[1]["error"]
        # The opened streams now stop reading; the floor floods them with updates.
        for sock in opened:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        registry = hub.web.streams
        mine = [v for v in registry.viewers if v.session in cookie]
        assert len(mine) == streams.MAX_STREAMS_PER_SESSION
        rss_before = _rss_kb()
        big = {"kind": "hub", "broker": "ok", "since": 1, "padding": "p" * 2000}
        hub.call(lambda floor: floor.broadcast([big] * (streams.STREAM_QUEUE * 3)))
        assert wait_for(lambda: all(v not in registry.viewers for v in mine), 30), \
            "a viewer that stopped reading was not dropped"
        assert _rss_kb() - rss_before < 100_000
    finally:
        for sock in opened:
            sock.close()
        maria.close()


def _ends(sock, within=10.0):
    """The stream ends (the chunked body's last chunk, or the connection closed)."""
    sock.settimeout(within)
    data = b""
    try:
        while b"0\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return True
            data += chunk
    except TimeoutError:
        return False
    return True


def test_a_stream_ends_when_its_session_ends(hub, monkeypatch):
    """Logged out, or expired: the stream that session opened ends too (it went on delivering
    the floor log)."""
    import requests

    from hub.web import streams

    monkeypatch.setattr(streams, "SESSION_CHECK", 0.5)  # an idle stream's look at its session
    maria = Staff(hub.url, "maria", "maria-password")
    sock, status = open_event_stream(hub.url, maria.cookie())
    try:
        assert b" 200 " in status
        out = requests.post(hub.url + "/logout", headers={"Cookie": maria.cookie()},
                            allow_redirects=False, timeout=10)
        assert out.status_code == 303
        assert _ends(sock), "a stream outlived its logout"
    finally:
        sock.close()
    maria = Staff(hub.url, "maria", "maria-password")
    sock, status = open_event_stream(hub.url, maria.cookie())
    try:
        assert b" 200 " in status
        with hub.sessions._lock:  # the shift is over: the session expires now
            for token, session in list(hub.sessions._sessions.items()):
                if token in maria.cookie():
                    hub.sessions._sessions[token] = session._replace(expires=0.0)
        # (ends at its next look, 0.5 s; allowed the 8 s the 2 s look had, for a busy machine)
        assert _ends(sock, 8.0), "a stream outlived its session"
    finally:
        sock.close()
        maria.close()


def test_one_account_cannot_take_every_stream_and_staff_keep_room(hub, monkeypatch):
    """One viewer account logged in over and over took all 200 streams, and a supervisor then
    had none. Capped per account; the last STAFF_STREAMS are the staff's."""
    from hub.web import streams

    opened = []
    logins = []
    try:
        for _ in range(3):  # 3 sessions x 4 streams: the account's cap comes first
            val = Staff(hub.url, "val", "val-password")
            logins.append(val)
            for _ in range(streams.MAX_STREAMS_PER_SESSION):
                sock, status = open_event_stream(hub.url, val.cookie())
                opened.append(sock)
                if b" 429 " in status:
                    break
        assert len([v for v in hub.web.streams.viewers if v.account == "val"]) == \
            streams.MAX_STREAMS_PER_ACCOUNT
        refused = logins[-1].get("/api/stream")
        assert refused[0] == 429 and "an account" in refused[1]["error"]
        # The room nearly full of viewers' streams: the floor still gets one.
        monkeypatch.setattr(streams, "MAX_STREAMS", streams.MAX_STREAMS_PER_ACCOUNT + 2)
        monkeypatch.setattr(streams, "STAFF_STREAMS", 2)
        monkeypatch.setattr(streams, "MAX_STREAMS_PER_ACCOUNT", 100)
        viewer_full = logins[-1].get("/api/stream")
        assert viewer_full[0] == 503, viewer_full
        maria = Staff(hub.url, "maria", "maria-password")
        logins.append(maria)
        sock, status = open_event_stream(hub.url, maria.cookie())
        opened.append(sock)
        assert b" 200 " in status
    finally:
        for sock in opened:
            sock.close()
        for staff in logins:
            staff.close()


# ---------------------------------------------------------------------------- logins

def _login(hub, name, password, address_header=None):
    import requests

    headers = {"X-Forwarded-For": address_header} if address_header else {}
    answer = requests.post(hub.url + "/login", data={"user": name, "password": password},
                           headers=headers, allow_redirects=False, timeout=30)
    location = answer.headers.get("Location", "")
    return "ok" if location == "/" else urllib.parse.unquote_plus(location.split("error=")[-1])


def test_parallel_guesses_cannot_slip_past_the_count_and_staff_elsewhere_still_log_in(hub):
    """41 simultaneous wrong-then-right attempts from one address: the count is atomic, so at
    most USER_FREE passwords are checked before the backoff; maria, on the room's tablet
    (another address), logs in at once."""
    results: list[str] = []

    def attempt(index: int) -> None:
        password = "wrong-guess" if index < 40 else "maria-password"
        results.append(_login(hub, "maria", password, "10.9.9.9"))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(41)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    checked = [r for r in results if r in ("ok", "wrong user name or password")]
    assert len(checked) <= auth.USER_FREE, results
    assert results.count("ok") <= 1
    assert any(r.startswith("too many failed attempts") for r in results)
    assert _login(hub, "maria", "maria-password", "10.1.1.1") == "ok"


def test_guesses_at_one_name_from_many_addresses_meet_a_ceiling_that_locks_nobody_out(
        tmp_path, monkeypatch):
    """120 guesses for one name from 120 addresses were all checked in 2.3 s. Past a few,
    one check every ACCOUNT_CAP seconds for that name; where it logged in before (the room's
    tablet) it logs in at once, and elsewhere after that wait at most."""
    auth.save_user(tmp_path / "u.toml", "maria", "floor", "maria-pass")
    sessions = auth.Sessions(auth.load_users(tmp_path / "u.toml"))
    checked: list[str] = []
    monkeypatch.setattr(auth, "check_password",
                        lambda password, stored: checked.append(password) or
                        password == "maria-pass")
    sessions.login("maria", "maria-pass", 0.0, "10.1.1.1")  # the tablet, at the shift's start
    checked.clear()
    refusals = []
    for index in range(120):
        try:
            sessions.login("maria", f"guess-{index}", 100.0 + index * 0.02, f"10.8.{index}.1")
        except auth.LoginRefused as exc:
            refusals.append(str(exc))
    assert len(checked) <= auth.ACCOUNT_FREE + 2, len(checked)
    assert any(r.startswith("too many failed attempts") for r in refusals)
    assert sessions.login("maria", "maria-pass", 103.0, "10.1.1.1")  # the tablet: at once
    with pytest.raises(auth.LoginRefused, match="too many"):
        sessions.login("maria", "maria-pass", 103.0, "10.5.5.5")  # a new device: it waits,
    assert sessions.login("maria", "maria-pass", 103.0 + auth.ACCOUNT_CAP + 1, "10.5.5.5")


def test_an_unknown_name_costs_the_same_scrypt_as_a_known_one(tmp_path, monkeypatch):
    """No timing oracle: a wrong password for a known name and any password for an unknown
    (or impossible) one each run one scrypt check with the same parameters."""
    auth.save_user(tmp_path / "u.toml", "maria", "floor", "maria-pass")
    sessions = auth.Sessions(auth.load_users(tmp_path / "u.toml"))
    checked: list[str] = []
    real = auth.check_password
    monkeypatch.setattr(auth, "check_password",
                        lambda password, stored: checked.append(stored.split("$", 4)[1:4])
                        or real(password, stored))
    for name, address in (("maria", "10.0.0.1"), ("nobody", "10.0.0.2"),
                          ("n" * 8000, "10.0.0.3")):
        with pytest.raises(auth.LoginRefused, match="wrong user name or password"):
            sessions.login(name, "guess-guess", 1.0, address)
    assert len(checked) == 3 and checked[0] == checked[1] == checked[2]


def test_what_is_remembered_of_failures_is_bounded_and_pruned(monkeypatch):
    monkeypatch.setattr(auth, "MAX_FAILURE_KEYS", 50)
    monkeypatch.setattr(auth, "check_password", lambda password, stored: False)
    sessions = auth.Sessions({})
    for index in range(500):
        with pytest.raises(auth.LoginRefused):
            sessions.login("n" * 8000 + str(index), "x", 100.0, f"10.0.{index // 250}."
                                                                 f"{index % 250}")
    assert len(sessions._failures) <= 50
    assert all(len(key) < 40 for key in sessions._failures)  # no 8 kB name is kept
    with pytest.raises(auth.LoginRefused):
        sessions.login("maria", "x", 100.0 + auth.FAILURE_WINDOW + 1, "10.1.1.1")
    assert len(sessions._failures) == 3  # the old ones were pruned (address, name, both)


def test_failed_logins_do_not_grow_the_hub(hub, monkeypatch):
    """scrypt takes 16 MiB a check, and a thread's allocator keeps what it had: the checks run
    on the two threads of their own and nowhere else, however many requests come, so failed
    logins (long names, many addresses) cannot grow the hub by 16 MiB a web thread."""
    threads: set[str] = set()
    check = auth.check_password

    def watched(password: str, stored: str) -> bool:
        threads.add(threading.current_thread().name)
        return check(password, stored)

    monkeypatch.setattr(auth, "check_password", watched)
    for index in range(10):  # the way in: the web side's threads, the throttle's books
        _login(hub, "nobody", "x", f"10.76.0.{index}")
    rss_before = _rss_kb()
    for index in range(40):  # (each a check on the scrypt threads: 40 show where they run)
        _login(hub, "n" * 8000 + str(index), "x", f"10.77.0.{index}")
    assert threads and all(name.startswith("scrypt") for name in threads), threads
    assert len(threads) <= auth.SCRYPT_AT_ONCE
    # What the process holds besides: a second scrypt thread starting now (16 MiB) is allowed
    # for; 40 web threads' worth of scrypt memory is not.
    assert _rss_kb() - rss_before < 40_000



def test_a_login_added_while_the_hub_runs_works_at_once_and_a_removed_one_ends(tmp_path):
    """`tablectl hub-user` while the hub runs: the new login works without a restart, a user
    taken out of the file loses its session, and a file broken mid-edit keeps the accounts
    read last."""
    users = tmp_path / "u.toml"
    auth.save_user(users, "maria", "floor", "maria-pass")
    sessions = auth.Sessions(auth.UsersFile(users, loose=users_file_mode))
    token = sessions.login("maria", "maria-pass", 0.0, "10.0.0.1")
    with pytest.raises(auth.LoginRefused):
        sessions.login("nina", "nina-pass", 0.0, "10.0.0.2")
    auth.save_user(users, "nina", "floor", "nina-pass")
    nina = sessions.login("nina", "nina-pass", 1.0, "10.0.0.2")
    assert sessions.user(nina, 2.0).name == "nina"
    good = users.read_text()
    users.write_text(good + "\n[users.broken\n")  # half-edited by hand
    assert sessions.user(token, 3.0).name == "maria"  # the accounts read last
    kept = "\n".join(line for line in good.split("\n[users.nina]")[0].splitlines())
    users.write_text(kept + "\n")  # maria only: nina is taken out
    assert sessions.user(nina, 4.0) is None and sessions.user(token, 4.0).name == "maria"


def test_the_servers_protocol_fits_the_uvicorn_it_was_written_for():
    """hub/web/server.py subclasses uvicorn's HTTP/1.1 protocol and reads its attributes: the
    installed uvicorn is the release pyproject.toml bounds, its protocol gives what the
    subclass reads, and one that does not is named at the hub's start, not found by a
    deadline that silently never fires."""
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from hub.web.server import UVICORN_WRITTEN_FOR, uvicorn_problems

    assert uvicorn.__version__.startswith(UVICORN_WRITTEN_FOR + "."), uvicorn.__version__
    assert uvicorn_problems() == []

    class Renamed(H11Protocol):  # a later uvicorn that renamed the 400 answer and the parser
        send_400_response = None  # type: ignore[assignment]

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            del self.conn

    assert uvicorn_problems(Renamed) == ["Renamed.send_400_response is gone",
                                         "Renamed has no conn",
                                         "Renamed.conn is not an h11 Connection"]
