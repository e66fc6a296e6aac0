"""What the attacker's trial of issue 43 found, held: no CSV the hub writes starts a formula in
any locale (hub/spreadsheet.py); look-alike names are refused (hub/lookalikes.py tells them,
hub/roster.py refuses them) and a name shown on a table's display loses no letter
(hub/roster.py's display_name); secret files others may read are refused
(tablectl/secret_files.py)."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.balancing import Move, Proposal
from controller.events import Seating
from controller.inputs import SeatsChange, parse_input
from controller.screens import ALERT_LINES, DisplayModel
from hardware.display import render_lcd
from hub import auth
from hub.floor import FloorView
from hub.lookalikes import skeleton
from hub.roster import Player, Roster, RosterError, display_name
from hub.service import FloorService
from hub.settings import HubSettings
from hub.spreadsheet import cells, csv_writer, safe_cell
from hub.stats import hands_csv
from tablectl.cli import _cluster_endpoint, build_parser
from tablectl.config import ConfigError, load_config
from tablectl.hub_app import Hub
from tablectl.hub_config import HubConfigError, hub_config
from tablectl.secret_files import loose_secret
from tests.conftest import table_state

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


# ------------------------------------------------------------------ look-alike names
def test_a_look_alike_of_an_entrant_is_refused_saying_whom_it_looks_like_and_what_to_do():
    roster = Roster()
    roster.add("Alice", 1)
    roster.add("Pop", 1)
    with pytest.raises(RosterError) as refused:
        roster.add("\u0410lice", 2)  # its A Cyrillic
    said = str(refused.value)
    assert "looks like 'Alice', who has entered already" in said, said
    assert "CYRILLIC CAPITAL LETTER A" in said and "add an initial or a number" in said
    for twin in ("\u0420\u043e\u0440", "\uff21lice", "ALICE", "AL\u0406CE"):  # Рор, Ａlice
        with pytest.raises(RosterError, match="has entered already"):
            roster.add(twin, 2)
    roster.add("Ian", 3)
    with pytest.raises(RosterError, match="'lan' looks like 'Ian'"):
        roster.add("lan", 3)
    with pytest.raises(RosterError) as refused:
        roster.import_csv("name\nBob\nB\u041eb\n\u0410lice\nSerge\u0443\n", 4)
    said = str(refused.value)
    for needle in ("line 3: 'BОb' looks like 'Bob', on line 2",
                   "line 4: 'Аlice' looks like 'Alice', who has entered already",
                   "line 5: 'Sergeу' mixes Latin and Cyrillic letters ('у' is Cyrillic)"):
        assert needle in said, said
    assert [p.name for p in roster.players.values()] == ["Alice", "Pop", "Ian"]
    for told_apart in ("Alice 2", "Alice B.", "\u0421\u0435\u0440\u0433\u0435\u0439",
                       "Zo\u00eb \u00c5ngstr\u00f6m", "\u5c71\u7530 Taro"):
        roster.add(told_apart, 5)  # another player, or one alphabet (Latin with Han too)


@pytest.mark.parametrize(("twin", "place", "named"), [
    ("Alice\u034f", 6, "U+034F COMBINING GRAPHEME JOINER"),
    ("Alice\ufe0f", 6, "U+FE0F VARIATION SELECTOR-16"),
    ("Alice\u3164", 6, "U+3164 HANGUL FILLER"),
    ("\u115fAlice", 1, "U+115F HANGUL CHOSEONG FILLER"),
    ("Alice\uffa0", 6, "U+FFA0 HALFWIDTH HANGUL FILLER")])
def test_a_name_with_a_character_drawn_as_nothing_is_refused_naming_it(twin, place, named):
    """Each is 'Alice' on screen (Default_Ignorable_Code_Point: UTS #39's skeleton drops it,
    so the look-alike check saw no twin), and none is of category C."""
    roster = Roster()
    roster.add("Alice", 1)
    with pytest.raises(RosterError) as refused:
        roster.add(twin, 2)
    said = str(refused.value)
    assert f"its character {place}, {named}, does not" in said, said
    assert "type the name again without it" in said
    with pytest.raises(RosterError, match=f"line 2: .*{re.escape(named)}"):
        roster.import_csv(f"name\n{twin}\n", 3)
    assert [p.name for p in roster.players.values()] == ["Alice"]


def test_a_name_mixing_alphabets_is_refused_through_the_floor(tmp_path):
    floor = FloorService(HubSettings(venue="v", db=str(tmp_path / "hub.db")), _Link(),
                         wall=lambda: 1_800_000_000.0)
    floor.open()
    try:
        with pytest.raises(RosterError, match="mixes Latin and Cyrillic letters"):
            floor.add_player(auth.User("maria", "floor", ""), "Anna \u0418\u0432\u0430\u043d")
    finally:
        floor.close()


def test_the_skeleton_is_unicode_s():
    """UTS #39's own examples: the look-alikes of one text share its skeleton."""
    assert skeleton("\U0001d52d\U0001d4b6\u1eff\U0001d561\U0001d552\u2113") == \
        skeleton("paypal")
    assert skeleton("m") == skeleton("rn") and skeleton("corn") == skeleton("com")
    assert skeleton("\u0410") == skeleton("A") and skeleton("\u03a1") == skeleton("P")
    assert skeleton("Zo\u00eb") != skeleton("Zoe")  # an accent is seen


def test_the_display_shows_every_letter_in_ascii_and_a_placeholder_for_none():
    """'Аlice' (a name kept from before the check, or typed in one alphabet) showed as 'lice':
    a letter without an ASCII form vanished."""
    assert display_name("\u0410lice") == "Alice"
    assert display_name("\u0421\u0435\u0440\u0433\u0435\u0439") == "Sergey"
    assert display_name("Julia Wei\u00df") == "Julia Weiss"
    assert display_name("\ue000 Bo") == "? Bo"  # private use: seen, not dropped
    floor = FloorView("v")
    floor.on_state("t1", table_state(seats=[1, 2, 3, 6]), 0)
    floor.on_state("t2", table_state(seats=[1]), 0)
    floor.roster.players[1] = Player(1, "\u0410lice", 0, table="t1", seat=6)  # as stored
    floor.seating_desk.make_moves(
        Proposal("balance", ("t1", "t2"), (Move("t1", 6, "t2", 5),), "", ()),
                     "maria", 1)
    moves = floor.seating.tables["t1"].moves
    assert isinstance(parse_input({"type": "seats", "seats": [1, 2, 3], "moves": moves}),
                      SeatsChange)  # what a table takes
    model = DisplayModel(alert_lines=ALERT_LINES["lcd"])
    model.update(Seating(seats=[1, 2, 3], effective="now", moves=moves, t=0.0))
    assert model.alert is not None
    shown = " ".join(render_lcd(model.alert.screen(0.0, "status")))
    assert "Alice: seat 6" in " ".join(shown.split()), shown


# ------------------------------------------------------------------ secret files
def _secret(path, text, mode):
    path.write_text(text)
    path.chmod(mode)
    return path


def _refusal(path, mode):
    return (f"{path} holds", f"its mode {mode:04o} lets", f"run `chmod 600 {path}`")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_table_configuration_with_a_password_others_may_read_is_refused(tmp_path, mode):
    path = _secret(tmp_path / "table.toml", '[table]\nid = "t1"\n[mqtt]\nusername = "t1"\n'
                   'password = "hunter2-secret"\nport = 1883\n', mode)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    [problem] = refused.value.problems
    assert problem.startswith("mqtt.password: ") and "hunter2" not in problem
    for needle in _refusal(path, mode):
        assert needle in problem, problem
    path.chmod(0o600)
    assert load_config(path).mqtt.password == "hunter2-secret"
    path.write_text('[table]\nid = "t1"\n[mqtt]\nenabled = false\n')
    path.chmod(0o644)  # no secret in it: others may read it
    assert load_config(path).table.id == "t1"


def test_a_hub_configuration_with_a_database_password_others_may_read_is_refused(tmp_path):
    path = _secret(tmp_path / "central.toml", '[central]\ndb = "postgresql://c:pw@db/g"\n'
                   '[group]\ncluster = ["n1:4222"]\n', 0o644)
    args = build_parser().parse_args(["central", "--config", str(path)])
    with pytest.raises(HubConfigError) as refused:
        hub_config("central", args)
    [problem] = refused.value.problems
    assert problem.startswith("central.db: ") and "pw@" not in problem
    for needle in _refusal(path, 0o644):
        assert needle in problem, problem
    path.chmod(0o600)
    assert hub_config("central", args).central.db == "postgresql://c:pw@db/g"
    path.write_text('[central]\ndb = "postgresql://c@db/g"\n[group]\ncluster = ["n1:4222"]\n')
    path.chmod(0o644)  # a URL without a password: no secret
    assert hub_config("central", args).central.db == "postgresql://c@db/g"


def test_a_cluster_password_file_others_may_read_is_refused(tmp_path):
    path = _secret(tmp_path / "uplink.password", "s3cret\n", 0o644)
    args = build_parser().parse_args(["uplink", "--venue", "v", "--cluster", "n1:4222",
                                      "--password-file", str(path)])
    config = hub_config("uplink", args)
    with pytest.raises(HubConfigError) as refused:
        _cluster_endpoint(config, "uplink-v", "venue-v")
    [problem] = refused.value.problems
    assert problem.startswith("group.password_file: ")
    for needle in (*_refusal(path, 0o644), "other users read"):
        assert needle in problem, problem
    path.chmod(0o600)
    assert _cluster_endpoint(config, "uplink-v", "venue-v").password == "s3cret"


def test_a_users_file_others_may_read_stops_the_hub_before_it_starts(tmp_path):
    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    users.chmod(0o664)
    done = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--venue", "v",
                           "--users", str(users), "--db", str(tmp_path / "h.db"),
                           "--port", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr  # the caller's to mend, said before anything
    for needle in (*_refusal(users, 0o664),
                   "lets its group read and change it, and other users read it:"):
        assert needle in done.stderr, done.stderr
    users.chmod(0o600)
    hub = Hub(HubSettings(venue="v", db=str(tmp_path / "h.db"), users=str(users)))
    assert hub.sessions is not None  # built: started by .start()


@pytest.mark.parametrize(("mode", "lets"), [
    (0o642, "its group read it, and other users change it"),
    (0o660, "its group read and change it"),
    (0o644, "its group and other users read it"),
    (0o602, "other users change it"),
    (0o751, "its group read and run it, and other users run it")])
def test_the_refusal_says_exactly_what_the_group_and_other_users_may_do(tmp_path, mode, lets):
    """0642 was said to let "its group and other users read and change" the file: the group
    only reads it, the others only write it."""
    path = _secret(tmp_path / "users.toml", "", mode)
    said = loose_secret(path, "the staff's password hashes")
    assert said is not None and f"its mode {mode:04o} lets {lets}: run" in said, said
