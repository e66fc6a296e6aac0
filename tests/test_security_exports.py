"""What the attacker's trial of issue 43 found, held: no CSV the hub writes starts a formula in
any locale (hub/spreadsheet.py); look-alike names are refused and a name shown on a table's
display loses no letter (hub/names.py); secret files others may read are refused
(tablectl/secret_files.py)."""

from __future__ import annotations

import csv
import io
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from hub import auth
from hub.service import FloorService
from hub.settings import HubSettings
from hub.spreadsheet import cells, csv_writer, safe_cell
from hub.stats import hands_csv

# ------------------------------------------------------------------ CSV exports, any locale
# What a spreadsheet runs at a cell's start, after NFKC (fullwidth and small forms fold into
# these), and the minus sign and dashes, which NFKC leaves.
FORMULA = set("=+-@\u2212\u2010\u2011\u2012\u2013\u2014\u2015")
# Where some reader splits a line: Excel's and LibreOffice's import separators (comma,
# semicolon, tab, space, a pipe as "other"), the Arabic ones, every blank and line break, and
# whatever folds into one of those under NFKC (a fullwidth comma).
SPLIT_AT = set(",;|\t\u060c\u061b")


def _splits(char: str) -> bool:
    return any(c in SPLIT_AT or c.isspace() for c in char + unicodedata.normalize("NFKC", char))


def _pieces(line: str) -> list[str]:
    pieces, current = [], ""
    for char in line:
        if _splits(char):
            pieces.append(current)
            current = ""
        else:
            current += char
    return [*pieces, current]


def _as_read(piece: str) -> str:
    """A cell as a spreadsheet takes it: NFKC, and without the blanks, control and format
    characters and double quotes before it."""
    text = unicodedata.normalize("NFKC", piece)
    while text and (unicodedata.category(text[0])[0] in "ZC" or text[0] == '"'):
        text = unicodedata.normalize("NFKC", text[1:])
    return text


def _formula_cells(line: str) -> list[str]:
    return [p for p in map(_as_read, _pieces(line)) if p[:1] in FORMULA]


TRICKY = st.sampled_from([
    *"=+-@,;|\t\r\n \"'x1",
    "\uff1d", "\uff0b", "\uff0d", "\uff20", "\u2212", "\ufe66", "\ufe62", "\ufe63", "\ufe6b",
    "\u207a", "\u207b", "\u207c", "\u208a", "\u208b", "\u208c", "\u2a75", "\uff0c", "\uff1b",
    "\ufe50", "\ufe54", "\u3000", "\u00a0", "\u200b", "\ufeff", "\u2028", "\x00", "\x0b",
    "\u060c", "\u2013", "\uff02", "\u0338"])
# Mostly the characters that matter here, some of any kind.
TEXT = st.text(st.one_of(TRICKY, TRICKY, TRICKY, st.characters()), max_size=30)


@settings(max_examples=400)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_no_cell_of_an_exported_line_starts_a_formula_however_it_is_split(texts):
    out = io.StringIO()
    csv_writer(out).writerow(cells(texts))
    assert _formula_cells(out.getvalue()) == [], out.getvalue()


@given(TEXT)
def test_a_safe_cell_only_adds_quote_marks(text):
    """Nothing of the text is lost or changed: a reader sees what was typed, marked as text."""
    made = safe_cell(text)
    assert made.replace("'", "") == text.replace("'", "")
    assert safe_cell("Anna Berg") == "Anna Berg" and safe_cell("x-1") == "x-1"


def test_numbers_stay_numbers_and_every_text_is_quoted():
    out = io.StringIO()
    csv_writer(out).writerow(cells((3, 120.5, None, "t1", "-2", True)))
    assert out.getvalue() == '3,120.5,"","t1","\'-2","true"\r\n'


class _Link:
    """The floor's MQTT side, unused here: the roster sends nothing."""

    def send_command(self, table, command):
        raise AssertionError("no command expected")

    def publish_clock(self, reading):
        pass

    def answer_clock(self, answer):
        pass


def test_the_issue_s_names_in_the_finishing_order_run_as_no_formula(tmp_path):
    """The finishing order as the dashboard's GET /api/roster/finishing.csv serves it (the
    floor's use case it calls), read as Excel reads it in DE (";"), in EN (","), split at
    tabs or blanks: `x;=1+1`, the fullwidth `＝` even with ",", the minus sign."""
    names = ["x;=1+1", "\uff1d1+1", "y,\uff0bSUM(A1)", "z \u22121+2", "@SUM(1)", "w ; -1",
             "v|\uff20A1"]
    floor = FloorService(HubSettings(venue="v", db=str(tmp_path / "hub.db")), _Link(),
                         wall=lambda: 1_800_000_000.0)
    floor.open()
    try:
        maria = auth.User("maria", "floor", "")
        for name in names:
            floor.add_player(maria, name)
        roster = floor.floor.roster
        for seat, player in enumerate(roster.players.values(), start=1):
            player.table, player.seat = "-t1", seat  # (a table id may start with "-")
            roster.went_out("-t1", seat, 1_800_000_000_000 + seat, seat)
        text = floor.finishing_csv()
    finally:
        floor.close()
    lines = text.splitlines()
    assert len(lines) == 1 + len(names)
    for line in lines:
        assert _formula_cells(line) == [], line
    rows = list(csv.reader(io.StringIO(text)))
    assert {row[1] for row in rows[1:]} == {"x;'=1+1", "'\uff1d1+1", "y,'\uff0bSUM(A1)",
                                            "z '\u22121+2", "'@SUM(1)", "w ; '-1",
                                            "v|'\uff20A1"}
    assert rows[1][0] == "1" and lines[1].startswith("1,")  # a place is a number
    for separator in (";", ",", "\t"):  # as a reader honouring quotes splits it
        for row in csv.reader(io.StringIO(text), delimiter=separator):
            assert not [c for c in row if _as_read(c)[:1] in FORMULA], row


def test_the_hands_csv_writes_through_the_same_cells():
    events = [{"table": "t1", "seq": 1, "type": "hand.started", "ts": 1_800_000_000_000,
               "hand": 1, "dealer": "x;\uff1d1+1", "data": {}}]
    text = hands_csv(events, 0, 2**53)
    assert list(csv.reader(io.StringIO(text)))[1][2] == "x;'\uff1d1+1"
    for line in text.splitlines():
        assert _formula_cells(line) == [], line
