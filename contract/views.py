"""The public/private split (SPEC section 4): the ``private`` topic carries an event whole; the
``events`` topic carries its public view, without hole or burn card identities, which are for
the recorder and the roles granted it only.

What is private is each event class's to say (``controller.events``: ``public_view``). This
is the one adapter for JSON: the table's link and the hub alike read a stored or received
event back into its class and ask it, so that the view is decided by the same code on both
sides of the wire."""

from __future__ import annotations

from typing import Any

from controller.events import read


def public_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event as the dashboard may see it, or None if it is private altogether (or of a
    type no event class has: there is no one to say what of it is public)."""
    typed = read(event)
    return typed.public_view(event) if typed is not None else None


def public_envelope(private: dict[str, Any]) -> dict[str, Any] | None:
    """A private envelope's public view, the one its table publishes on ``events`` (the same
    envelope fields, its event through ``public_event``), or None if it is private
    altogether: the hub derives what the floor sees from what it recorded with this code."""
    from contract.envelope import envelope, event_of, incarnation_of

    shown = public_event(event_of(private))
    if shown is None:
        return None
    return envelope(shown, venue=private["venue"], table=private["table"], seq=private["seq"],
                    boot=private["boot"], ts_ms=private["ts"],
                    historical=bool(private.get("historical")),
                    incarnation=incarnation_of(private))
