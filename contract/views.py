"""The public/private split (SPEC section 4): the ``private`` topic carries an event whole; the
``events`` topic carries its public view, without hole or burn card identities, which are for
the recorder and the roles granted it only."""

from __future__ import annotations

import re
from typing import Any

_CARD = re.compile(r"\b[AKQJT2-9][shdc]\b")
# Irregularities whose card everyone at the table has seen (face up, shown, on the board).
_PUBLIC_CARD_KINDS = frozenset({"exposed_card", "boxed_card", "joker", "foreign_card",
                                "too_many_board_cards"})
# Rulings whose text names only cards that were shown to the table.
_PUBLIC_TEXT_ACTIONS = frozenset({"replace_exposed", "scrap_and_replace", "redeal_flop",
                                  "scramble_flop", "board_stands"})
_PRIVATE_ONLY = frozenset({"hand.record", "card.ignored"})


def public_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event as the dashboard may see it, or None if it is private altogether."""
    kind = event["type"]
    if kind in _PRIVATE_ONLY:
        return None
    out = dict(event)
    if kind == "card":
        role = out.get("role")
        hidden = role in ("hole", "burn") and out.get("face") != "up"
        # A card out of play was seen only if it was a premature board card turned up; a
        # duplicate or an extra card may be the twin of someone's hole card.
        hidden = hidden or (role == "out" and not out.get("premature"))
        if hidden:
            out["card"] = None
            out.pop("tag", None)
            out.pop("deck", None)
    elif kind == "hand.ended":
        secret = {c for cards in event.get("hole", {}).values() for c in cards}
        secret.update(event.get("burns", []))
        out.pop("hole", None)
        out.pop("burns", None)
        out["out"] = [c for c in event.get("out", []) if c not in secret]
        out["hole_counts"] = {seat: len(cards) for seat, cards in event.get("hole", {}).items()}
    elif kind == "irregularity":
        if event.get("kind") not in _PUBLIC_CARD_KINDS:
            out.pop("card", None)
            out.pop("tag", None)
    elif kind == "ruling":
        if event.get("action") not in _PUBLIC_TEXT_ACTIONS:
            out["text"] = _CARD.sub("a card", str(event.get("text", "")))
    elif kind == "board.resolved":
        out.pop("burn", None)
    return out


def public_envelope(private: dict[str, Any]) -> dict[str, Any] | None:
    """A private envelope's public view, the one its table publishes on ``events`` (the same
    envelope fields, its event through ``public_event``), or None if it is private
    altogether: the hub derives what the floor sees from what it recorded with this code."""
    from contract.envelope import envelope, event_of

    shown = public_event(event_of(private))
    if shown is None:
        return None
    return envelope(shown, venue=private["venue"], table=private["table"], seq=private["seq"],
                    boot=private["boot"], ts_ms=private["ts"],
                    historical=bool(private.get("historical")))
