"""The floor's use cases of what players see of the room: the players' screen (a seating
board, name to table and seat, and the floor's announcements with the clock's own, behind a
viewer link of its own the floor may withdraw), and the seat cards the floor prints (the
draw, one player, the latest moves, a table, the final table).

Its link is not the TV's (hub/clock_cases.py): the players' link goes to players' phones
(the same page looks a seat up by name), so it leaks more easily; withdrawing it leaves the
room clock's TVs alone, and the other way round.

What the screen shows is the roster's and nothing else of it: each player in the game, with
the table and seat the floor gave them (a moving player's new seat from the moment the
floor confirms the move, as the dashboards show it). No chips, no cards, no staff names.

A part of the floor's use cases (hub/service.py), on its one worker thread."""

from __future__ import annotations

import functools
import re
import time
import unicodedata
from typing import TYPE_CHECKING, Any

from contract.wire import WireError, decode, encode
from hub.clock_cases import NotTheRoomKey, TvLinkChanged
from hub.floor import room_clock_view
from hub.floor_part import FloorPart
from hub.refused import StaffError
from hub.revocable_links import GenerationLink, RevocableLinks, StaleGeneration

if TYPE_CHECKING:
    from hub.auth import User
    from hub.roster import Player
    from hub.service import FloorService

PLAYERS_KEYS_WITHDRAWN_KEPT = 16
MAX_ANNOUNCEMENTS = 6  # up at once: a screen across a room shows no more
MAX_ANNOUNCEMENT = 160  # characters: two lines at a distance
MOVES_KEPT = 200  # the moves remembered for their seat cards, the newest last
# Seconds an answer of the players' screen is served again: a room of phones asking (each
# every few seconds) costs the floor's one worker a board a second at most, however big the
# field. What the floor does (an announcement, a withdrawal) makes a new one at once.
SCREEN_FRESH = 1.0

Place = tuple[str, int]  # a table and a seat


class PlayersLinkWithdrawn(NotTheRoomKey):
    """A players' screen asking with a link the floor withdrew."""


class PlayersLinkChanged(TvLinkChanged):
    """A withdrawal of a players' link that is no longer the current one (withdrawn already
    from another tablet): refused, so that the link made in its place stays up."""


def table_order(table: str) -> tuple[Any, ...]:
    """Tables in the order a room numbers them: t2 before t10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", table) if part)


@functools.lru_cache(maxsize=4096)  # a name's order is worked out once, not at each answer
def name_order(name: str) -> tuple[str, str]:
    """Names as a board lists them: by their letters without accents, case left out."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name)
                    if not unicodedata.combining(c))
    return plain.casefold(), name


def check_announcement(text: Any) -> str:
    """An announcement as the floor typed it: its spaces collapsed, 1 to MAX_ANNOUNCEMENT
    characters, each one that shows as itself (no control or invisible characters)."""
    if not isinstance(text, str):
        raise StaffError("an announcement is text")
    said = " ".join(text.split())
    if not said:
        raise StaffError("the announcement is empty: type what the players should read")
    if len(said) > MAX_ANNOUNCEMENT:
        raise StaffError(f"an announcement has at most {MAX_ANNOUNCEMENT} characters (this "
                         f"one has {len(said)}): a screen across a room shows no more")
    for place, char in enumerate(said, start=1):
        if unicodedata.category(char)[0] == "C":
            raise StaffError(f"character {place} of the announcement (U+{ord(char):04X}) "
                             "does not show on a screen: type it again without it")
    return said


class PlayersCases(FloorPart):
    def __init__(self, service: FloorService) -> None:
        super().__init__(service)
        # The players' screen's key (its link), its generation and the keys withdrawn, as
        # the settings players_key, players_generation and players_keys_withdrawn keep them.
        self.screen_link = GenerationLink(RevocableLinks(), 0)
        self.announcements: list[dict[str, Any]] = []  # {id, text, ts, by}, oldest first
        self._next_announcement = 1
        self.moves: list[dict[str, Any]] = []  # {batch, ts, player_id, name, from, to}
        self._batch = 0
        self._places: dict[int, Place] = {}  # each seated player's place as last seen
        self._screen: tuple[float, dict[str, Any]] | None = None  # (made, monotonic), answer

    # ------------------------------------------------------------------ kept
    def open(self) -> None:
        """The link, the announcements and the moves as the floor left them (the roster is
        loaded first: its seats are where the moves are looked for from)."""
        db = self.db
        self.screen_link = GenerationLink.from_settings("players", db.setting,
                                                        PLAYERS_KEYS_WITHDRAWN_KEPT)
        for name, value in self.screen_link.settings("players").items():
            if value:  # (no empty list of withdrawn keys written before the first withdrawal)
                db.set_setting(name, value)
        self.announcements = self._kept("players_announcements")
        self._next_announcement = max((a["id"] for a in self.announcements), default=0) + 1
        self.moves = self._kept("players_moves")
        self._batch = max((m["batch"] for m in self.moves), default=0)
        self._places = self._seated()
        db.commit()

    def _kept(self, name: str) -> list[dict[str, Any]]:
        try:
            kept = decode(self.db.setting(name) or "[]")
        except WireError:
            return []  # a damaged database: started afresh rather than not at all
        return [dict(k) for k in kept if isinstance(k, dict)] if isinstance(kept, list) else []

    def _seated(self) -> dict[int, Place]:
        return {p.id: (p.table, p.seat) for p in self.floor.roster.players.values()
                if p.playing and p.table is not None and p.seat is not None}

    # ------------------------------------------------------------------ the moves
    def observe(self) -> None:
        """The roster's seats looked at (between messages, and before each answer here): each
        player seated elsewhere than last seen has moved, the moves seen together one batch
        (a break, a balancing, the final table's draw); a first seat is a draw, not a
        move."""
        now_seated = self._seated()
        moved = [(pid, self._places[pid], place) for pid, place in now_seated.items()
                 if pid in self._places and self._places[pid] != place]
        self._places = now_seated
        if not moved:
            return
        self._batch += 1
        now = self.now_ms()
        players = self.floor.roster.players
        for pid, was, place in moved:
            self.moves.append({"batch": self._batch, "ts": now, "player_id": pid,
                               "name": players[pid].name, "from_table": was[0],
                               "from_seat": was[1], "table": place[0], "seat": place[1]})
        self.moves = self.moves[-MOVES_KEPT:]
        self.db.set_setting("players_moves", encode(self.moves))
        self.db.commit()

    # ------------------------------------------------------------------ the screen
    def players_screen(self, key: str) -> dict[str, Any]:
        """What the players' screen shows; NotTheRoomKey for a key that is not its link's."""
        self._check(key)
        mono = time.monotonic()
        if self._screen is not None and mono - self._screen[0] < SCREEN_FRESH:
            return self._screen[1]
        self.observe()
        structure, elapsed, running = self.service.clock_cases.clock_reading()
        clock = room_clock_view(structure, elapsed, running)
        roster = self.floor.roster
        players = sorted((p for p in roster.players.values() if p.playing),
                         key=lambda p: name_order(p.name))
        winner = roster.winner()
        answer = {"venue": self.service.venue, "now": self.now_ms(),
                "title": clock.get("title"), "on_break": bool(clock.get("on_break")),
                "level": (clock.get("current") or {}).get("level"),
                "players": [{"name": p.name, "table": p.table, "seat": p.seat}
                            for p in players],
                "winner": winner.name if winner is not None else None,
                "announcements": [{"id": a["id"], "text": a["text"], "ts": a["ts"]}
                                  for a in reversed(self.announcements)],
                "clock_announcements": list(clock.get("announcements", [])),
                "next_announcements": list(clock.get("next_announcements", []))}
        self._screen = (mono, answer)
        return answer

    def _check(self, key: str) -> None:
        if not self.screen_link.opens(key):
            if self.screen_link.was_withdrawn(key):
                raise PlayersLinkWithdrawn("this players' screen link was withdrawn: ask the "
                                           "floor for the new one")
            raise NotTheRoomKey("this is not the players' screen link: ask the floor")

    def players_link(self) -> dict[str, Any]:
        """The players' screen link (the key in the fragment, never in a server's logs) and
        its generation."""
        link = self.screen_link
        return {"path": f"/players#{link.key}", "generation": link.generation}

    def withdraw_players_link(self, user: User, generation: int) -> dict[str, Any]:
        """The players' link of ``generation`` withdrawn and a new one made, kept and logged
        (the database first, as the TV link's): a screen or phone showing the old one is
        refused from its next question, and says so. PlayersLinkChanged when ``generation``
        is not the current one."""
        try:
            renewed = self.screen_link.renewed(generation)
        except StaleGeneration as stale:
            said = (f"the players' link of generation {generation} was already withdrawn"
                    if stale.withdrawn_already else
                    f"there is no players' link of generation {generation}")
            raise PlayersLinkChanged(f"{said}; the current link is generation "
                                     f"{stale.current}, left as it is",
                                     self.players_link()) from None
        now = self.now_ms()
        for name, value in renewed.settings("players").items():
            self.db.set_setting(name, value)
        self.db.log(now, user.name, "players-link/withdraw", {"generation": generation})
        self.db.commit()
        self.screen_link = renewed
        self.service.log_book.show(now, user.name, "players-link/withdraw",
                                   {"generation": generation})
        return self.players_link()

    # ------------------------------------------------------------------ announcements
    def announcement_list(self) -> list[dict[str, Any]]:
        """The floor's announcements up now, the newest first, with who typed each."""
        return [dict(a) for a in reversed(self.announcements)]

    def announce(self, user: User, text: Any) -> list[dict[str, Any]]:
        """An announcement on the players' screen, kept and logged."""
        said = check_announcement(text)
        if len(self.announcements) >= MAX_ANNOUNCEMENTS:
            raise StaffError(f"{MAX_ANNOUNCEMENTS} announcements are up already: take one "
                             "down first")
        now = self.now_ms()
        made = {"id": self._next_announcement, "text": said, "ts": now, "by": user.name}
        self.announcements.append(made)
        self._next_announcement += 1
        self.db.set_setting("players_announcements", encode(self.announcements))
        self.log(now, user.name, "players/announce", {"id": made["id"], "text": said})
        self._screen = None  # on the screens at their next question
        return self.announcement_list()

    def take_down(self, user: User, announcement: int) -> list[dict[str, Any]]:
        """An announcement taken off the players' screen, logged."""
        found = next((a for a in self.announcements if a["id"] == announcement), None)
        if found is None:
            raise StaffError(f"no announcement {announcement} is up (taken down already?)")
        self.announcements.remove(found)
        self.db.set_setting("players_announcements", encode(self.announcements))
        self.log(self.now_ms(), user.name, "players/take-down",
                 {"id": announcement, "text": found["text"]})
        self._screen = None
        return self.announcement_list()

    # ------------------------------------------------------------------ seat cards
    def seat_cards(self, what: str, table: str | None = None,
                   player: int | None = None) -> dict[str, Any]:
        """The seat cards to print: ``draw`` every player in the game with a seat, table by
        table; ``moves`` the players of the latest moves (a break, a balancing, the final
        table's draw), each with where they come from; ``table`` the players of one table;
        ``final`` those of the final table (every player left at one table); ``player``
        one player's. StaffError when there is no card to print, saying why."""
        self.observe()
        roster = self.floor.roster
        seated = sorted((p for p in roster.players.values()
                         if p.playing and p.table is not None and p.seat is not None),
                        key=lambda p: (table_order(str(p.table)), p.seat))
        came: dict[int, dict[str, Any]] = {}
        if what == "draw":
            chosen = seated
        elif what == "moves":
            latest = [m for m in self.moves if m["batch"] == self._batch]
            came = {m["player_id"]: m for m in latest}
            chosen = [p for p in seated if p.id in came
                      and (p.table, p.seat) == (came[p.id]["table"], came[p.id]["seat"])]
            if not chosen:
                raise StaffError("no player has moved since the roster's seats were drawn")
        elif what == "table":
            if table is None:
                raise StaffError("say which table: ?table=")
            chosen = [p for p in seated if p.table == table]
            if not chosen:
                raise StaffError(f"no player of the roster sits at table {table}")
        elif what == "final":
            tables = sorted({str(p.table) for p in seated}, key=table_order)
            if len(tables) != 1 or len(seated) != roster.left():
                raise StaffError(f"the players left sit at {len(tables)} tables: draw the "
                                 "final table first (the roster's final table draw)")
            chosen = seated
        elif what == "player":
            chosen = [p for p in roster.players.values() if p.id == player]
            if not chosen:
                raise StaffError(f"no player {player} on the roster")
            if not chosen[0].playing or chosen[0].table is None:
                raise StaffError(f"{chosen[0].name} has no seat: "
                                 + ("out of the tournament" if not chosen[0].playing
                                    else "draw seats first"))
        else:
            raise StaffError(f"no seat cards for {what!r}: draw, moves, table, final or "
                             "player")
        if not chosen:
            raise StaffError("no player has a seat yet: draw seats first")
        structure = self.service.clock_cases.clock_reading()[0]
        return {"venue": self.service.venue, "title": structure.title if structure else None,
                "what": what, "made_at": self.now_ms(),
                "cards": [self._card(p, came.get(p.id)) for p in chosen]}

    @staticmethod
    def _card(player: Player, move: dict[str, Any] | None) -> dict[str, Any]:
        return {"player_id": player.id, "name": player.name, "table": player.table,
                "seat": player.seat,
                "from_table": move["from_table"] if move else None,
                "from_seat": move["from_seat"] if move else None}
