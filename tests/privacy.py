"""What the tests check the dashboard's feed with: no hole or burn card leaks."""

from __future__ import annotations

import re
from typing import Any


def private_leaks(public_texts: list[str], ended: dict[str, Any], shown: set[str]) -> list[str]:
    """Hole or burn cards of a hand (its ``hand.ended``) that appear in what the dashboard
    received for it, other than cards the table saw anyway (used by the tests)."""
    secret = {c for cards in ended.get("hole", {}).values() for c in cards}
    secret.update(ended.get("burns", []))
    secret -= shown | {"??", "JK"}
    text = "\n".join(public_texts)
    return sorted(card for card in secret if re.search(rf"\b{card}\b", text)
                  or re.search(rf"(?<![0-9A-Za-z]){re.escape(as_shown(card))}", text))


SUITS = {"s": "\u2660", "h": "\u2665", "d": "\u2666", "c": "\u2663"}


def as_shown(card: str) -> str:
    """A card as the dashboard writes it (A\u2660, 10\u2665): a leak in that form is a leak too."""
    return ("10" if card[0] == "T" else card[0]) + SUITS.get(card[1:], card[1:])


def shown_cards(events: list[dict[str, Any]]) -> set[str]:
    """Cards the whole table saw during a hand: turned up, shown or put back after a
    premature deal (their identities are public even if they end as burns)."""
    shown: set[str] = set()
    for event in events:
        if event["type"] == "card" and (event.get("face") == "up" or event.get("role") in (
                "board", "scrap") or (event.get("role") == "out" and event.get("premature"))):
            shown.add(str(event.get("card")))
        if event["type"] == "ruling":
            shown.update(event.get("candidates", []) + event.get("returned", []))
        if event["type"] == "irregularity" and event.get("kind") == "foreign_card":
            shown.add(str(event.get("card")))  # another deck's card: not anyone's hole card
    return shown
