"""The floor's use cases of chip counts: a table's stacks entered by the floor (at a break, at
the final table), each player's latest count with when it was counted and by whom, kept in the
hub's settings (``chip_counts``) across a restart and each entry in the floor log; and the
figures the TV and the dashboard show from them: the average stack, the chip leader, and a
player's stack in M. A part of the floor's use cases (hub/service.py), on its one worker thread.

The average stack from the counts is the counted players' own average ("average of 5 counted
stacks"): a player not counted is left out of it, never guessed. With no count of a player
still playing, the average is the starting stacks' (chips bought over the players left), said
so. A count taken before a player's bust-out (then a re-entry) is no longer theirs: left out.

M (Harrington's): a stack over what one orbit of the table costs at the level in play, the
small blind, the big blind and the antes. The structures' ``ante`` is taken as a big-blind ante
(one ante a hand, posted by the big blind, as houses/structures/tda-2024.toml says most
TDA-run events use): once per orbit, so M = stack / (sb + bb + ante).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hub.floor_part import FloorPart
from hub.refused import StaffError

if TYPE_CHECKING:
    from hub.auth import User
    from hub.roster import Player

MOST_CHIPS = 2**53 - 1


class ChipCountRefused(StaffError):
    """A table's counts refused: ``problems`` lists every one (answered 400)."""

    def __init__(self, table: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"the chip counts of table {table} were not taken: "
                         + "; ".join(problems))


def m_of(chips: int, blinds: Mapping[str, int] | None) -> float | None:
    """A stack in M: over one orbit's small blind, big blind and (big-blind) ante; None
    without a level in play."""
    if blinds is None:
        return None
    orbit = blinds["sb"] + blinds["bb"] + blinds["ante"]
    return round(chips / orbit, 1) if orbit > 0 else None


class ChipCases(FloorPart):
    def open(self) -> None:
        """The counts as the floor left them."""
        kept = self.db.setting("chip_counts")
        self.counts: dict[int, dict[str, Any]] = (
            {int(k): v for k, v in json.loads(kept).items()} if kept else {})

    def cleared(self) -> None:
        """A new tournament (the roster cleared): no count."""
        self.counts = {}
        self.db.set_setting("chip_counts", "")

    def current(self, player: Player) -> dict[str, Any] | None:
        """``player``'s latest count while still theirs (not before a bust-out)."""
        count = self.counts.get(player.id)
        if count is None or not player.playing:
            return None
        if player.last_out_at is not None and count["at"] < player.last_out_at:
            return None
        return count

    def enter(self, user: User, table: str, stacks: list[tuple[int, int]]) -> dict[str, Any]:
        """A table's counts (player id, chips) entered by the floor: every player must be on
        the roster, playing and seated at ``table``, once; every problem listed
        (ChipCountRefused). Kept with the time and who counted, logged. The counts' view."""
        roster = self.floor.roster
        problems: list[str] = []
        if not stacks:
            problems.append("no stack sent: send each player's chips")
        seen: set[int] = set()
        for player_id, chips in stacks:
            player = roster.players.get(player_id)
            if player is None:
                problems.append(f"player {player_id}: not on the roster")
            elif not player.playing:
                problems.append(f"player {player_id} ({player.name}): out of the tournament")
            elif player.table != table:
                where = (f"seated at table {player.table}" if player.table is not None
                         else "not seated")
                problems.append(f"player {player_id} ({player.name}): {where}, not at "
                                f"table {table}")
            if player_id in seen:
                problems.append(f"player {player_id}: sent twice")
            seen.add(player_id)
            if not 0 <= chips <= MOST_CHIPS:
                problems.append(f"player {player_id}: chips {chips} must be a whole number "
                                f"from 0 to {MOST_CHIPS}")
        if problems:
            raise ChipCountRefused(table, problems)
        now = self.now_ms()
        for player_id, chips in stacks:
            self.counts[player_id] = {"chips": chips, "at": now, "by": user.name,
                                      "table": table}
        self.db.set_setting("chip_counts", json.dumps(
            {str(k): v for k, v in sorted(self.counts.items())}))
        self.log(now, user.name, "chips/count", {
            "table": table, "stacks": {roster.players[p].name: c for p, c in stacks}})
        return self.view()

    def view(self) -> dict[str, Any]:
        """Every player still playing with their latest count (None: not counted) and its M
        at the level in play, the average and the chip leader (``figures``)."""
        blinds = self.blinds()
        players = []
        for player in sorted(self.floor.roster.players.values(), key=lambda p: p.id):
            if not player.playing:
                continue
            count = self.current(player)
            players.append({"player": player.id, "name": player.name, "table": player.table,
                            "seat": player.seat,
                            "chips": None if count is None else count["chips"],
                            "at": None if count is None else count["at"],
                            "by": None if count is None else count["by"],
                            "m": None if count is None else m_of(count["chips"], blinds)})
        return {"blinds": blinds, "players": players, **self.figures()}

    def blinds(self) -> dict[str, int] | None:
        """The level in play's small blind, big blind and ante (on a break, the level before
        it); None without a structure."""
        clock = self.service.clock
        if clock.structure is None:
            return None
        level = clock.structure.level_at(clock.elapsed())
        period = next((p for p in clock.structure.periods if p.level == level), None)
        return None if period is None else {"level": level, "sb": period.sb, "bb": period.bb,
                                             "ante": period.ante}

    def figures(self) -> dict[str, Any]:
        """The average stack from the counts (``average_from``: "counts", the counted
        players' own average, ``counted`` of ``players_left``) and the chip leader; nothing
        without a count of a player still playing."""
        counted = [(p, c) for p in self.floor.roster.players.values()
                   if (c := self.current(p)) is not None]
        if not counted:
            return {}
        leader, top = max(counted, key=lambda pc: (pc[1]["chips"], -pc[0].id))
        return {"average_stack": round(sum(c["chips"] for _, c in counted) / len(counted)),
                "average_from": "counts", "counted": len(counted),
                "players_left": self.floor.roster.left(),
                "counted_at": max(c["at"] for _, c in counted),
                "chip_leader": {"player": leader.id, "name": leader.name,
                                "chips": top["chips"], "at": top["at"]}}
