"""The table's configuration file, declared once (tablectl/config.py, tablectl/sections.py)."""

from __future__ import annotations

import datetime

import pytest

from tablectl.config import ConfigError, config_from_data


def test_a_table_refuses_what_toml_holds_and_no_key_takes_naming_each_key():
    with pytest.raises(ConfigError) as info:
        config_from_data({"table": {"deal_gap": float("nan"), "seats": [1, float("inf")],
                                    "profile": datetime.date(2026, 1, 1)},
                          "mqtt": {"enabled": False}}, "t.toml")
    assert info.value.problems == [
        "table.deal_gap: must be a number of seconds > 0, not nan",
        "table.seats: must be a list of at least two different seat numbers 1 to 10, "
        "not [1, inf]",
        "table.profile: must be a string, not a date (2026-01-01)"]


def test_a_table_given_some_gestures_keeps_the_others_actions():
    config = config_from_data({"button": {"actions": {"tap": "ignore"}},
                               "mqtt": {"enabled": False}}, "t.toml")
    assert config.button.actions == {"tap": "ignore", "double_tap": "end_hand",
                                     "hold": "shot_clock", "long_hold": "call_floor"}
