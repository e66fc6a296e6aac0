"""The three revocable links outlive a hub restart (hub/revocable_links.py, kept in the hub's
settings): the TV link and the players' screen link renewed, a table's overlay link made
again in place of its first and another table's withdrawn, the hub stopped and started on
the same database; each live key still opens its page's questions (the overlay: its
stream), each withdrawn one is still refused with the words that say so. Against the real
hub (a Mosquitto, the hub's process parts, its web server on a socket), the staff through
the routes their dashboards use."""

from __future__ import annotations

from contextlib import closing

from hub import auth
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings

STAFF = {"maria": "floor", "sam": "supervisor", "bea": "broadcast"}


def _started(settings: HubSettings) -> Hub:
    hub = Hub(settings).start()
    assert hub.connected.wait(10)
    return hub


def _asked(hub: Hub, path: str, key: str) -> tuple[int, dict]:
    """A TV's or a players' screen's question with the link's key: the status, the answer."""
    import requests

    answer = requests.get(hub.url + path, headers={"X-Room-Key": key}, timeout=10)
    return answer.status_code, answer.json()


def _overlay(hub: Hub, key: str) -> tuple[int, str]:
    """The overlay page's stream opened with ``key``, as OBS's browser source does (on the
    hub's own machine: plain HTTP is let through): 200 and its first event's name, or the
    refusal's status and words."""
    import requests

    with requests.get(hub.url + "/api/overlay/stream", headers={"X-Overlay-Key": key},
                      stream=True, timeout=10) as answer:
        if answer.status_code != 200:
            return answer.status_code, answer.json()["error"]
        with closing(answer):
            for line in answer.iter_lines():  # the first event comes at once (timeout: 10 s)
                if line.startswith(b"event: "):
                    return 200, line.removeprefix(b"event: ").decode()
    raise AssertionError("the overlay's stream ended without an event")


def _key(link: dict, page: str) -> str:
    return link["path"].removeprefix(f"/{page}#")


def test_live_links_open_and_withdrawn_ones_stay_refused_after_a_restart(tmp_path, broker):
    users = tmp_path / "users.toml"
    for name, role in STAFF.items():
        auth.save_user(users, name, role, f"{name}-password")
    settings = HubSettings(venue="links", db=str(tmp_path / "hub.db"), users=str(users),
                           port=broker.port, http_port=0)
    hub = _started(settings)
    try:
        for table in ("t1", "t2"):  # tables heard: the overlay's links are a table's
            hub.call(lambda floor, t=table: floor.on_status(
                t, {"state": "online", "boot": 1, "table": t, "ts": 1}))
        maria, sam, bea = (Staff(hub.url, name, f"{name}-password") for name in STAFF)
        old_tv = hub.tv_key
        status, tv = maria.post("/api/tv-link/withdraw", {"generation": 1})
        assert status == 200 and tv["generation"] == 2
        old_players = _key(sam.get("/api/players-link")[1], "players")
        status, players = sam.post("/api/players-link/withdraw", {"generation": 1})
        assert status == 200 and players["generation"] == 2
        replaced = _key(bea.post("/api/broadcast/overlay-links", {"table": "t1"})[1][0],
                        "overlay")
        bea.post("/api/broadcast/overlay-links", {"table": "t2"})
        status, overlays = bea.post("/api/broadcast/overlay-links", {"table": "t1"})
        assert status == 200 and [x["table"] for x in overlays] == ["t1", "t2"]
        withdrawn_t2 = _key(overlays[1], "overlay")
        status, overlays = bea.post("/api/broadcast/overlay-links/withdraw", {"table": "t2"})
        assert status == 200 and [x["table"] for x in overlays] == ["t1"]
        live_t1 = _key(overlays[0], "overlay")
        assert _overlay(hub, live_t1) == (200, "feed")
        assert _overlay(hub, withdrawn_t2)[0] == 403
        for one in (maria, sam, bea):
            one.close()
    finally:
        hub.stop()

    again = _started(settings)
    try:
        maria, sam, bea = (Staff(again.url, name, f"{name}-password") for name in STAFF)
        assert maria.get("/api/tv-link") == (200, tv)
        assert _asked(again, "/api/tv", _key(tv, "tv"))[0] == 200
        assert _asked(again, "/api/tv", old_tv) == (
            403, {"error": "this TV link was withdrawn: ask the floor for the new one"})

        assert sam.get("/api/players-link") == (200, players)
        assert _asked(again, "/api/players-screen", _key(players, "players"))[0] == 200
        assert _asked(again, "/api/players-screen", old_players) == (
            403, {"error": "this players' screen link was withdrawn: ask the floor for the "
                           "new one"})

        assert bea.get("/api/broadcast/overlay-links") == (200, overlays)
        assert _overlay(again, live_t1) == (200, "feed")
        for withdrawn in (replaced, withdrawn_t2):
            assert _overlay(again, withdrawn) == (
                403, "this overlay link was withdrawn: ask the production for the new one")
        assert _overlay(again, "never-made") == (
            403, "this is not an overlay link: a broadcast login makes one")
        for one in (maria, sam, bea):
            one.close()
    finally:
        again.stop()
