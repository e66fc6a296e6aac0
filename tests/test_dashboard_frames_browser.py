"""The floor dashboard's frames (issue 50): what a frame draws, in a real browser
(``tests.floor_browser``'s venue). A tap waits for the frame under way when the finger lands,
so a frame draws what is on screen and leaves the rest to short tasks of its own."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.conftest import wait_for
from tests.floor_browser import RawTable, box_of, floor_venue, login_page

# Each card drawn, and whether in a frame's redraw (drawChanged) or apart from it.
WATCH_CARDS = """() => {
  window.__cards = [];
  window.__inFrame = false;
  const frame = drawChanged;
  window.drawChanged = () => {
    window.__inFrame = true;
    try { frame(); } finally { window.__inFrame = false; }
  };
  const card = drawCard;
  window.drawCard = (node, t) => {
    window.__cards.push([t.name, window.__inFrame, t.hand]);
    return card(node, t);
  };
}"""
ON_SCREEN = "(n) => n.checkVisibility({ contentVisibilityAuto: true })"


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    yield from floor_venue(tmp_path_factory)


def test_a_card_off_screen_is_drawn_after_the_frame_and_right_when_it_comes_back(venue):
    """A busy room changes some 40 cards in each of its card frames, most of them off screen:
    drawn in the frame, they made it long, and a tap waited for it. A card the browser skips
    off screen (content-visibility) is drawn apart, after the frame, and shows the table's
    latest as it comes back on screen; a card on screen is drawn in the frame."""
    maria = login_page(venue, "maria", viewport={"width": 1280, "height": 400})
    t41 = RawTable(venue, "t41")
    try:
        t41.state("D41", 3, [1, 2, 3])
        card = maria.locator(".table[data-table=t41]")
        name = card.locator(".name")  # in the card: skipped with its content, off screen
        expect(card).to_contain_text("hand 3")
        maria.evaluate(WATCH_CARDS)
        # On screen: drawn in the frame.
        assert name.evaluate(ON_SCREEN)
        t41.state("D41", 4, [1, 2, 3])
        expect(card).to_contain_text("hand 4")
        assert ["t41", True, 4] in maria.evaluate("window.__cards")
        # Off screen: drawn apart from the frame.
        maria.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        assert wait_for(lambda: not name.evaluate(ON_SCREEN), 15)
        maria.evaluate("window.__cards = []")
        t41.state("D41", 5, [1, 2, 3])
        expect(card).to_contain_text("hand 5")
        drawn = maria.evaluate("window.__cards.filter(([name]) => name === 't41')")
        assert drawn and all(not in_frame for _, in_frame, _ in drawn), drawn
        # Changed while off screen, it is right as it comes back.
        t41.state("D41", 6, [1, 2, 3, 4])
        maria.evaluate("window.scrollTo(0, 0)")
        assert wait_for(lambda: name.evaluate(ON_SCREEN), 15)
        expect(card).to_contain_text("hand 6")
        expect(card.locator(".seat.taken")).to_have_count(4)
    finally:
        t41.forget()
        t41.close()
        maria.context.close()


def repainted_frames(trace: bytes) -> list[list[str]]:
    """Chromium's trace, by frame painted: the elements whose paint layer was painted anew. A
    frame's paint is one ``Paint`` event over the whole view (the document), with one inside it
    for each layer painted anew, named by its element (the layers that did not change are
    taken from the cache and not named)."""
    events = json.loads(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    paints = [e for e in events if e.get("name") == "Paint" and e.get("ph") == "X"]
    frames = []
    for view in (e for e in paints if e["args"]["data"].get("nodeName") == "#document"):
        start, end = view["ts"], view["ts"] + view.get("dur", 0)
        frames.append([str(e["args"]["data"].get("nodeName", "")) for e in paints
                       if e is not view and (e["pid"], e["tid"]) == (view["pid"], view["tid"])
                       and start <= e["ts"] <= end])
    return frames


def test_the_tick_repaints_what_counts_not_the_cards(venue):
    """Every second the tick writes each card's status ("online 5m 9s") and clock. Written in
    the card's flow, each repainted its whole card, every card on screen, and the "live"
    written again repainted the sticky header: a frame with the tick repaints the status and
    the clock alone (each a paint layer that moves nothing), and the card looks as it did, the
    status on the name's line at the right, the clock after the level on its line."""
    maria = login_page(venue, "maria", viewport={"width": 1280, "height": 800})
    browser = venue["browser"]
    try:
        card = maria.locator("#tables .table[data-table=t1]")
        status, name = card.locator(".status"), card.locator(".name")
        expect(card.locator(".left")).to_contain_text(":")  # the venue clock runs
        # The look: the status beside the name at the card's right, the clock after the level.
        name_box, status_box = box_of(name), box_of(status)
        assert abs(status_box["y"] - name_box["y"]) < 1, (name_box, status_box)
        right = card.evaluate("(c) => c.getBoundingClientRect().right"
                              " - parseFloat(getComputedStyle(c).paddingRight)")
        text_right = status.evaluate("(s) => { const r = document.createRange();"
                                     " r.selectNodeContents(s);"
                                     " return r.getBoundingClientRect().right; }")
        assert abs(text_right - right) < 1, (text_right, right)
        # The texts' own boxes: the level's ends where the clock's (its space first) begins.
        level = card.locator(".left").evaluate(
            "(left) => [left.previousSibling, left].map((node) => {"
            " const r = document.createRange(); r.selectNodeContents(node);"
            " const box = r.getBoundingClientRect(); return [box.left, box.right, box.top]; })")
        assert abs(level[0][1] - level[1][0]) < 1 and abs(level[0][2] - level[1][2]) < 1, level
        # The repaints: traced over three ticks of the status's "since".
        browser.start_tracing(categories=["devtools.timeline",
                                          "disabled-by-default-devtools.timeline"])
        try:
            for _ in range(3):
                before = status.text_content()
                assert wait_for(lambda: status.text_content() != before, 15)  # noqa: B023
        finally:
            frames = repainted_frames(browser.stop_tracing())
        ticks = [f for f in frames if any("class='status'" in n for n in f)]
        assert ticks, frames
        # Some tick frame repaints what counts and nothing else (the cards' status and clock,
        # the header's clock, an alert's "ago"): neither a card (an update of the table's may
        # come in any frame) nor the header.
        counting = ("class='status'", "class='left'", "class='when'", "id='clock'")
        alone = [f for f in ticks if all(any(c in n for c in counting) for n in f)]
        assert alone, ticks
        assert not any(n.startswith("HEADER") for f in frames for n in f), frames
    finally:
        maria.context.close()
