"""The tournament's roster: who entered, where each sits, who went out in what place.

Pure: names, seats and times in, players and seating out; the floor view feeds it what the
tables applied (bust-outs, moves, drawn seats) and the hub keeps it in its database. Without
a roster everything works by seat number, as a table knows its players.

Finishing places follow the order of bust-outs (seeds 003 and 004: "The last player
eliminated will be the second prize winner ..."); two players out on the same hand are placed
in the order the floor busts them: the floor busts first the one who started the hand with
fewer chips (the seeds' tie rule), which the shoe cannot see.
"""

from __future__ import annotations

import csv
import io
import random
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from hub.lookalikes import (
    code_point_named,
    default_ignorable,
    lookalike_keys,
    mixed_scripts,
    unlike,
)
from hub.spreadsheet import cells, csv_writer

MAX_PLAYERS = 2000
MAX_NAME = 40
# Shown on a table's display for a character that has no ASCII form: seen, never dropped.
NO_ASCII_FORM = "?"
CSV_COLUMNS = ("name", "entries", "add_ons")


class RosterError(ValueError):
    """A roster change refused: the message says what to do instead."""


@dataclass
class Player:
    id: int
    name: str
    registered_at: int
    entries: int = 1  # the first buy-in and each re-entry
    add_ons: int = 0
    table: str | None = None
    seat: int | None = None
    out_at: int | None = None  # when the table applied the bust-out (None: in the game)
    out_hand: int | None = None
    last_out_at: int | None = None  # the bust-out a re-entry followed (for its take-back)
    last_out_hand: int | None = None
    # Their table's hand when a draw gave them their seat (None: seated otherwise, by a move
    # or before the roster knew hands: taken as having played). A later hand there dealt them in.
    seated_hand: int | None = None
    no_show_at: int | None = None  # removed as a no-show (never played), their buy-in refunded
    refund: str | None = None  # what they were refunded, as the desk says it ("$50")

    @property
    def playing(self) -> bool:
        return self.out_at is None and self.no_show_at is None


@dataclass
class Alternate:
    """A player waiting for a seat while the field is full: entered, in the list's order, as
    seats open during registration."""

    name: str
    added_at: int


def check_name(name: Any) -> str:
    """A player's name as the floor typed it: trimmed, 1 to 40 characters, each one that shows
    as itself."""
    if not isinstance(name, str):
        raise RosterError("a player's name is text")
    said = " ".join(name.split())
    if not said or len(said) > MAX_NAME:
        raise RosterError(f"a player's name has 1 to {MAX_NAME} characters")
    for place, char in enumerate(said, start=1):
        # Control, format and unassigned characters (category C), and those drawn as
        # nothing (a name with one looks like the same name without it: another entrant's).
        if unicodedata.category(char)[0] == "C" or default_ignorable(char):
            raise RosterError(
                f"a player's name holds only characters that show as themselves: its "
                f"character {place}, {code_point_named(char)}, does not (the name would look "
                "like the same name without it, perhaps another entrant's): type the name "
                "again without it")
    return said


def _mixed_alphabets(name: str) -> str | None:
    """Why a name whose letters come from two alphabets (but Latin with Chinese, Japanese or
    Korean) is refused, or None: it is how a twin of another entrant's name is made ('Аlice',
    its 'А' Cyrillic)."""
    mixed = mixed_scripts(name)
    if mixed is None:
        return None
    fewest = min(mixed, key=lambda script: len(mixed[script]))
    letters = ", ".join(f"'{c}'" for c in mixed[fewest])
    return (f"{name!r} mixes {' and '.join(s.title() for s in mixed)} letters ({letters} "
            f"{'is' if len(mixed[fewest]) == 1 else 'are'} {fewest.title()}): type the name "
            "in one alphabet, as on the player's ID (a letter from another alphabet can make a "
            "twin of another entrant's name)")


def display_name(name: str, width: int = 16) -> str:
    """The name as a table's 20-column LCD shows it: ASCII, each character transliterated
    (Zoë Zoe, Weiß Weiss, Сергей Sergey, 王 Wang, मुकेश mukes: anyascii), one without an
    ASCII form shown as '?' rather than dropped (a dropped letter showed 'Аlice' as 'lice'),
    a mark on a letter shown as anyascii gives it (the vowel sign 'ु' as 'u') or left out
    when it gives nothing (an accent); at most ``width`` characters."""
    from anyascii import anyascii

    shown = []
    for char in unicodedata.normalize("NFC", name):
        form = anyascii(char)
        if not form and unicodedata.category(char) in ("Mn", "Me"):
            continue  # an accent on the letter before it, which is shown already
        shown.append(form if form and all(" " <= c <= "~" for c in form) else NO_ASCII_FORM)
    plain = " ".join("".join(shown).split())
    return (plain or "player")[:width].rstrip()


@dataclass
class _Taken:
    """The names a new one may neither repeat nor look like, each kept with where it is: None
    for an entrant, else the line of the import it is on. The first name to hold a key keeps
    it (an import's lines are held after the entrants)."""

    folded: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    lookalikes: dict[tuple[int, str], tuple[str, int | None]] = field(default_factory=dict)

    def hold(self, name: str, line: int | None = None) -> None:
        self.folded.setdefault(name.casefold(), (name, line))
        for key in enumerate(lookalike_keys(name)):
            self.lookalikes.setdefault(key, (name, line))

    def refusal(self, name: str) -> str | None:
        """Why ``name`` cannot enter, or None. The one check an entry and each line of an
        import pass, in this order, the plainest reason first: the same name, a name that looks
        like it, then letters of one alphabet."""
        same = self.folded.get(name.casefold())
        if same is not None:
            held, line = same
            if line is None:
                return f"{held} has entered already: a second buy-in is a re-entry (once out)"
            return f"{name} is on line {line} too"
        twin = next((self.lookalikes[key] for key in enumerate(lookalike_keys(name))
                     if key in self.lookalikes), None)
        if twin is not None:
            held, line = twin
            return _looks_like(name, held, "who has entered already" if line is None
                               else f"on line {line}")
        return _mixed_alphabets(name)


@dataclass
class Roster:
    players: dict[int, Player] = field(default_factory=dict)
    next_id: int = 1
    # Re-entries a player may make: the structure that runs says (its ``max_reentries``);
    # None: as many as late registration allows. The hub sets it from the venue clock.
    max_reentries: int | None = None
    structure: str = ""  # the title of the structure that sets it, for the desk's refusals
    # The alternates, first seated first; closed (why, or None) once registration is.
    alternates: list[Alternate] = field(default_factory=list)
    alternates_closed: str | None = None

    # ------------------------------------------------------------------ entering
    def _taken(self) -> _Taken:
        """The entrants' names, as a new name is checked against them (hub/lookalikes.py)."""
        taken = _Taken()
        for player in self.players.values():
            taken.hold(player.name)
        for alternate in self.alternates:  # an alternate becomes an entrant: one name
            taken.hold(alternate.name)
        return taken

    def _alternate_named(self, name: str) -> str | None:
        position = next((n for n, a in enumerate(self.alternates, start=1)
                         if a.name.casefold() == name.casefold()), None)
        if position is None:
            return None
        return (f"{self.alternates[position - 1].name} is alternate {position}: they are "
                "entered when a seat opens")

    def add(self, name: Any, now: int, entries: int = 1, add_ons: int = 0) -> Player:
        name = check_name(name)
        refusal = self._alternate_named(name) or self._taken().refusal(name)
        if refusal is not None:
            raise RosterError(refusal)
        if len(self.players) >= MAX_PLAYERS:
            raise RosterError(f"a roster holds at most {MAX_PLAYERS} players")
        return self._enter(name, now, entries, add_ons)

    def _enter(self, name: str, now: int, entries: int, add_ons: int) -> Player:
        """A name checked already (``_Taken.refusal``) entered."""
        player = Player(self.next_id, name, now, entries=entries, add_ons=add_ons)
        self.players[player.id] = player
        self.next_id += 1
        return player

    def add_alternate(self, name: Any, now: int) -> Alternate:
        """One more alternate, last in the list (the same names refused as for an entry)."""
        name = check_name(name)
        if self.alternates_closed is not None:
            raise RosterError(f"the alternates list is closed: {self.alternates_closed}")
        refusal = self._alternate_named(name) or self._taken().refusal(name)
        if refusal is not None:
            raise RosterError(refusal)
        if len(self.players) + len(self.alternates) >= MAX_PLAYERS:
            raise RosterError(f"a roster holds at most {MAX_PLAYERS} players")
        alternate = Alternate(name, now)
        self.alternates.append(alternate)
        return alternate

    def drop_alternate(self, position: int) -> Alternate:
        """An alternate who has gone (or was added by mistake) off the list."""
        if not 1 <= position <= len(self.alternates):
            raise RosterError(f"no alternate {position}: the list has "
                              f"{len(self.alternates)}")
        return self.alternates.pop(position - 1)

    def enter_alternate(self, now: int) -> Player | None:
        """The first alternate entered (a seat has opened for them), or None: nobody waits."""
        if not self.alternates:
            return None
        first = self.alternates.pop(0)
        return self._enter(first.name, now, 1, 0)

    @staticmethod
    def csv_columns_ignored(text: str) -> list[str]:
        """The columns of a registration CSV the roster does not read (a registration
        system's email, phone, club...): said to the desk, never an error."""
        header = next(csv.reader(io.StringIO(text)), [])
        return sorted({c.strip() for c in header if c.strip()
                       and c.strip().lower() not in CSV_COLUMNS})

    def import_csv(self, text: str, now: int) -> list[Player]:
        """Entrants from a CSV with a ``name`` column (``entries`` and ``add_ons`` optional,
        any other column ignored: ``csv_columns_ignored``): all or none, every bad line
        listed at once."""
        reader = csv.DictReader(io.StringIO(text))
        columns = {c.strip().lower() for c in (reader.fieldnames or ()) if c}
        rows = list(reader)
        problems = []
        if "name" not in columns:
            raise RosterError("the CSV needs a header line with a 'name' column "
                              "(entries and add_ons are optional)")
        wanted: list[tuple[str, int, int]] = []
        taken = self._taken()
        for number, row in enumerate(rows, start=2):
            if row.get(None):  # type: ignore[call-overload,unused-ignore]
                problems.append(f"line {number}: more values than the header has columns")
                continue
            values = {str(k).strip().lower(): (v or "").strip() for k, v in row.items()
                      if k and str(k).strip().lower() in CSV_COLUMNS}
            try:
                name = check_name(values.get("name", ""))
                entries = _count(values.get("entries") or "1", "entries", minimum=1)
                add_ons = _count(values.get("add_ons") or "0", "add_ons", minimum=0)
            except RosterError as exc:
                problems.append(f"line {number}: {exc}")
                continue
            refusal = self._alternate_named(name) or taken.refusal(name)
            if refusal is not None:
                problems.append(f"line {number}: {refusal}")
            taken.hold(name, number)  # (refused too: a later twin of it is said so as well)
            wanted.append((name, entries, add_ons))
        if len(self.players) + len(wanted) > MAX_PLAYERS:
            problems.append(f"a roster holds at most {MAX_PLAYERS} players")
        if problems:
            raise RosterError("; ".join(problems[:20]) + (
                f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""))
        # Every line was checked against the entrants and the lines before it: none again.
        return [self._enter(name, now, entries, add_ons) for name, entries, add_ons in wanted]

    def reentry(self, player_id: int, now: int) -> Player:
        player = self.player(player_id)
        if player.no_show_at is not None:
            raise RosterError(f"{player.name} was removed as a no-show and refunded: enter "
                              "them again under another name if they play after all")
        if player.playing:
            raise RosterError(f"{player.name} is still in the game: a re-entry follows a "
                              "bust-out")
        most = self.max_reentries
        if most is not None and player.entries - 1 >= most:
            made = player.entries - 1
            raise RosterError(
                f"{player.name} has re-entered {made} time{'s' if made != 1 else ''}: the "
                f"structure that runs ({self.structure or 'its max_reentries'}) allows "
                f"{most} re-entr{'ies' if most != 1 else 'y'} a player; the player stays out")
        player.entries += 1
        player.last_out_at, player.last_out_hand = player.out_at, player.out_hand
        player.out_at = player.out_hand = None
        player.table = player.seat = None  # waiting for a seat: the next draw
        return player

    def take_back_reentry(self, player_id: int) -> Player:
        """A re-entry tapped by mistake: the player is out again, in their place, while they
        wait for a seat (once seated, the floor busts them instead)."""
        player = self.player(player_id)
        if player.last_out_at is None or not player.playing:
            raise RosterError(f"{player.name} has no re-entry to take back")
        if player.table is not None:
            raise RosterError(f"{player.name} is seated at table {player.table} since the "
                              "re-entry: bust the seat instead")
        player.entries -= 1
        player.out_at, player.out_hand = player.last_out_at, player.last_out_hand
        player.last_out_at = player.last_out_hand = None
        return player

    def remove(self, player_id: int) -> Player:
        """An entrant entered by mistake (a wrong name, a double entry), gone before they
        played: never out, no re-entry or add-on. RosterError says why not otherwise."""
        player = self.player(player_id)
        if player.no_show_at is not None:
            raise RosterError(f"{player.name} is a no-show, refunded {player.refund}: their "
                              "line stays on the roster")
        if not player.playing or player.last_out_at is not None:
            raise RosterError(f"{player.name} has played (a bust-out is on record): their "
                              "place stays in the results")
        if player.entries > 1 or player.add_ons:
            raise RosterError(f"{player.name} has a re-entry or an add-on: take it back first")
        del self.players[player_id]
        return player

    def played(self, player: Player, hand: int | None) -> str | None:
        """Why ``player`` has played, or None: a bust-out, a re-entry or an add-on on record,
        or a hand their table (now at ``hand``) has started since a draw gave them their seat
        (the table deals them in from its next hand). A player seated otherwise (moved, or
        on the roster before it knew hands) is taken as having played."""
        if player.out_at is not None or player.last_out_at is not None or player.entries > 1:
            return "a bust-out or a re-entry is on record"
        if player.add_ons:
            return "an add-on is on record"
        if player.table is None:
            return None  # waiting for a seat: never dealt in
        if player.seated_hand is None:
            return f"they were seated at table {player.table} by a move"
        if hand is not None and hand > player.seated_hand:
            return (f"table {player.table} has started hand {hand} since their seat was drawn "
                    f"(at hand {player.seated_hand}): they were dealt in")
        return None

    def no_show(self, player_id: int, now: int, refund: str, hand: int | None) -> Player:
        """An entrant who never came: out of the game without a place, their buy-in refunded
        (``refund``, as said), their line kept. ``hand``: their table's hand now. Refused once
        they have played (``played``: they are busted as anyone else)."""
        player = self.player(player_id)
        if player.no_show_at is not None:
            raise RosterError(f"{player.name} is a no-show already (refunded {player.refund})")
        why = self.played(player, hand)
        if why is not None:
            raise RosterError(f"{player.name} has played ({why}): no refund; bust their seat "
                              "if they are gone")
        player.no_show_at, player.refund = now, refund
        player.table = player.seat = player.seated_hand = None
        return player

    def take_back_add_on(self, player_id: int) -> Player:
        player = self.player(player_id)
        if not player.add_ons:
            raise RosterError(f"{player.name} has no add-on to take back")
        player.add_ons -= 1
        return player

    def add_on(self, player_id: int, most: int | None = None,
               sold: bool = True) -> Player:
        """One more add-on; ``most``: the structure's limit a player; ``sold``: whether the
        structure that runs sells add-ons at all (its add-on chips)."""
        player = self.player(player_id)
        if not sold:
            raise RosterError("the structure that runs sells no add-ons (it gives no "
                              "add_on_stack): no add-on to count")
        if not player.playing:
            raise RosterError(f"{player.name} is out: an add-on is for a player in the game")
        if most is not None and player.add_ons >= most:
            raise RosterError(f"{player.name} has had {player.add_ons} add-on"
                              f"{'s' if player.add_ons != 1 else ''}: the house allows "
                              f"{most}")
        player.add_ons += 1
        return player

    def player(self, player_id: int) -> Player:
        try:
            return self.players[player_id]
        except KeyError:
            raise RosterError(f"no player {player_id} on the roster") from None

    # ------------------------------------------------------------------ what the tables did
    def at(self, table: str, seat: int) -> Player | None:
        return next((p for p in self.players.values()
                     if p.playing and p.table == table and p.seat == seat), None)

    def went_out(self, table: str, seat: int, now: int, hand: int | None) -> Player | None:
        """A bust-out the floor made: the player in that seat is out. Places follow the order
        of bust-outs: two in the same millisecond are a millisecond apart, in the order made."""
        player = self.at(table, seat)
        if player is not None:
            latest = max((p.out_at for p in self.players.values() if p.out_at is not None),
                         default=now - 1)
            player.out_at, player.out_hand = max(now, latest + 1), hand
        return player

    def back_in(self, table: str, seat: int, out_at: int,
                player_id: int | None = None) -> Player | None:
        """A bust-out undone: the player it put out (``player_id``, or who went out of that
        seat at ``out_at``) is in the game again, in that seat."""
        player = next((p for p in self.players.values() if p.table == table
                       and p.seat == seat and not p.playing
                       and (p.id == player_id if player_id is not None
                            else p.out_at == out_at)), None)
        if player is not None:
            player.out_at = player.out_hand = None
        return player

    def moved(self, table: str, seat: int, to_table: str, to_seat: int) -> Player | None:
        player = self.at(table, seat)
        if player is not None:
            player.table, player.seat, player.seated_hand = to_table, to_seat, None
        return player

    # ------------------------------------------------------------------ seating
    def waiting(self) -> list[Player]:
        return [p for p in self.players.values() if p.playing and p.table is None]

    def draw(self, unnamed: Mapping[str, list[int]], free: Mapping[str, list[int]],
             occupied: Mapping[str, int],
             rng: random.Random) -> dict[str, list[tuple[int, Player]]]:
        """Seats drawn for every player waiting, at random. First the seats a table reports
        taken by nobody on the roster (``unnamed``: tables set up before the roster, whose
        players are waiting for their names); then the free seats (``free``), keeping the
        tables even: each player in turn goes to a table with the fewest players
        (``occupied`` now), at a random free seat there. RosterError when more players wait
        than there are seats."""
        waiting = self.waiting()
        places = [(table, seat) for table, seats in sorted(unnamed.items()) for seat in seats]
        spare = {name: list(seats) for name, seats in free.items()}
        room = len(places) + sum(len(s) for s in spare.values())
        if len(waiting) > room:
            raise RosterError(f"{len(waiting)} player{'s wait' if len(waiting) != 1 else ' waits'}"
                              f" and the tables in play have {room} free seat"
                              f"{'s' if room != 1 else ''} for them: open a table first (seat "
                              "a player there by hand: a broken table takes nobody from a draw)")
        rng.shuffle(waiting)
        rng.shuffle(places)
        count = {name: occupied.get(name, 0) for name in spare}
        drawn: dict[str, list[tuple[int, Player]]] = {}
        for player in waiting:
            if places:
                table, seat = places.pop()
            else:
                fewest = min(count[name] for name in spare if spare[name])
                table = rng.choice(sorted(name for name in spare
                                          if spare[name] and count[name] == fewest))
                seat = spare[table].pop(rng.randrange(len(spare[table])))
                count[table] += 1
            player.table, player.seat = table, seat
            drawn.setdefault(table, []).append((seat, player))
        return drawn

    # ------------------------------------------------------------------ views
    def left(self) -> int:
        return sum(1 for p in self.players.values() if p.playing)

    def winner(self) -> Player | None:
        """The one player left of two or more who entered: the tournament is over."""
        playing = [p for p in self.players.values() if p.playing]
        if (len(self.players) - self.no_shows() < 2 or len(playing) != 1
                or self.waiting()):
            return None
        return playing[0]

    def places(self) -> dict[int, int]:
        """Each player out and their finishing place: the last one out is placed just below
        those still playing; the winner, once there is one, first."""
        out = sorted((p for p in self.players.values()
                      if not p.playing and p.no_show_at is None),
                     key=lambda p: (p.out_at or 0, p.id), reverse=True)
        first = self.left() + 1
        places = {p.id: first + index for index, p in enumerate(out)}
        winner = self.winner()
        if winner is not None:
            places[winner.id] = 1
        return places

    def finishing(self) -> list[tuple[int, Player]]:
        """(place, player) for everyone placed, first place up: those out, and the winner
        once the tournament is over; the players still in have none before."""
        places = self.places()
        return sorted(((places[p.id], p) for p in self.players.values() if p.id in places),
                      key=lambda item: item[0])

    def no_shows(self) -> int:
        return sum(1 for p in self.players.values() if p.no_show_at is not None)

    def counts(self) -> dict[str, int]:
        """``entries``: every buy-in taken (a no-show's refunded one too); ``paid_entries``:
        those the prize pool counts, without the no-shows'."""
        players = list(self.players.values())
        return {"entrants": len(players), "entries": sum(p.entries for p in players),
                "paid_entries": sum(p.entries for p in players if p.no_show_at is None),
                "no_shows": self.no_shows(),
                "add_ons": sum(p.add_ons for p in players), "left": self.left(),
                "waiting": len(self.waiting())}

    def reentries_left(self, player: Player) -> int | None:
        """The re-entries ``player`` may still make (None: no limit)."""
        if self.max_reentries is None:
            return None
        return max(0, self.max_reentries - (player.entries - 1))

    def view(self) -> dict[str, Any]:
        places = self.places()
        winner = self.winner()
        return {"players": [{**asdict(p), "place": places.get(p.id),
                             "reentries_left": self.reentries_left(p)}
                            for p in sorted(self.players.values(), key=lambda p: p.id)],
                **self.counts(), "max_reentries": self.max_reentries,
                "alternates": [{"position": n, **asdict(a)}
                               for n, a in enumerate(self.alternates, start=1)],
                "alternates_closed": self.alternates_closed,
                "winner": winner.name if winner is not None else None}

    def finishing_csv(self) -> str:
        """The finishing order for a spreadsheet in any locale (hub/spreadsheet.py)."""
        out = io.StringIO()
        writer = csv_writer(out)
        writer.writerow(cells(("place", "name", "entries", "add_ons", "out_utc", "out_at_ms",
                               "table", "seat", "hand", "refunded")))
        for place, p in self.finishing():
            when = ("" if p.out_at is None  # the winner: never out
                    else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(p.out_at / 1000)))
            writer.writerow(cells((place, p.name, p.entries, p.add_ons, when, p.out_at,
                                   p.table, p.seat, p.out_hand, "")))
        for p in sorted(self.players.values(), key=lambda p: p.id):
            if p.no_show_at is not None:  # no place: their line says so, with the refund
                writer.writerow(cells(("no-show", p.name, p.entries, p.add_ons, "", "", "", "",
                                       "", p.refund)))
        return out.getvalue()


def _looks_like(name: str, other: str, where: str) -> str:
    """Why ``name`` is refused: the name it looks like, where that is, the characters that
    differ, and what to do."""
    differing = unlike(name, other)
    return (f"{name!r} looks like {other!r}, {where}"
            + (f" ({differing})" if differing else "")
            + ": the floor could not tell them apart. The same player buys in again with a "
            "re-entry; another player needs a name that differs to the eye: add an initial "
            f"or a number ('{other} B.', '{other} 2')")


def _count(text: str, what: str, *, minimum: int) -> int:
    if not text.isdigit() or not minimum <= int(text) <= 99:
        raise RosterError(f"{what} {text!r} is a whole number from {minimum} to 99")
    return int(text)
