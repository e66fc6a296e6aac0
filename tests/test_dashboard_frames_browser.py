"""The floor dashboard's frames (issue 50): what a frame draws, in a real browser
(``tests.floor_browser``'s venue). A tap waits for the frame under way when the finger lands,
so a frame draws what is on screen and leaves the rest to short tasks of its own."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import wait_for
from tests.floor_browser import RawTable, floor_venue, login_page

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
