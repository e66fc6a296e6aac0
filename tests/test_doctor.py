"""`tablectl doctor` on a simulated table: what works says ok, what does not says what to do,
with the real cause, no library's noise, and nothing created."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from simulators.shoe import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]


def _doctor(config_path, home=None):
    env = dict(os.environ, HOME=str(home)) if home is not None else None
    return subprocess.run([sys.executable, "-m", "tablectl.cli", "doctor", "--config",
                           str(config_path)], capture_output=True, text=True, timeout=60,
                          env=env)


def _everything_under(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


def test_doctor_passes_a_working_simulated_table(tmp_path, broker):
    shoe = SimulatedShoe(tmp_path / "shoe", shoe_id="shoe-under-test").start()
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nid = "t1"\n[shoe]\nport = "{tmp_path / "shoe"}"\n'
                      '[button]\nbackend = "mock"\n[display]\nbackend = "terminal"\n'
                      f'[mqtt]\nport = {broker.port}\n[storage]\ndata_dir = "{tmp_path}"\n')
    try:
        result = _doctor(config)
    finally:
        shoe.stop()
    assert result.returncode == 0, result.stdout
    assert "[  ok] shoe: shoe-under-test: shoe-fw 1.2.0 (simulated), protocol 1" in result.stdout
    assert "[  ok] broker: connected" in result.stdout
    assert "[  ok] button: GPIO 17 reads released" in result.stdout
    assert "[  ok] disk:" in result.stdout


def test_doctor_says_what_to_do_for_each_failure(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "t1"\n[shoe]\nport = "/dev/no-such-shoe"\n'
                      '[button]\nbackend = "mock"\n[display]\nbackend = "ssd1306"\n'
                      'i2c_port = 77\n[mqtt]\nport = 1\nhost = "127.0.0.1"\n'
                      f'[storage]\ndata_dir = "{tmp_path}"\n')
    result = _doctor(config)
    assert result.returncode == 1
    out = result.stdout
    assert "[FAIL] display: no I2C bus /dev/i2c-77" in out and "raspi-config" in out
    assert "[FAIL] shoe: cannot open /dev/no-such-shoe" in out and "udev rules" in out
    assert "[FAIL] broker: nothing listens on 127.0.0.1:1 (connection refused)" in out
    assert "3 part(s) failing: display, shoe, broker" in out


def test_doctor_reports_a_bad_configuration(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[table]\nseats = "all"\n')
    result = _doctor(config)
    assert result.returncode == 1 and "table.seats" in result.stdout


def test_doctor_loads_the_profile_and_structure_the_daemon_would_stop_on(tmp_path):
    """A well-formed file naming a profile or a structure that does not exist: the daemon
    would stop at its start (and systemd start it again, and again); the doctor says so."""
    from tablectl.config import config_from_data
    from tablectl.doctor import FAIL, OK, check_rules

    base = {"mqtt": {"enabled": False}, "storage": {"data_dir": str(tmp_path)}}
    assert check_rules(config_from_data(base, "t")).result == OK
    for wrong, named in (({"table": {"profile": "tda-2099"}}, "no profile named 'tda-2099'"),
                         ({"clock": {"structure": "nightly-99"}}, "nightly-99")):
        check = check_rules(config_from_data({**base, **wrong}, "t"))
        assert check.result == FAIL and named in check.detail, check


def test_the_shipped_pc_configuration_is_green_quiet_and_creates_nothing(tmp_path):
    """deploy/pc.toml: a whole table simulated on a PC; its data folder is under ~."""
    home = tmp_path / "home"
    home.mkdir()
    result = _doctor(ROOT / "deploy" / "pc.toml", home=home)
    assert result.returncode == 0, result.stdout
    assert result.stderr == ""  # no library's warnings
    assert "[FAIL]" not in result.stdout
    assert re.search(r"\[  ok\] shoe: simulated \(the firmware on a pty\): sim-pc1: shoe-fw "
                     r"[^,]+, protocol 1", result.stdout), result.stdout
    assert "[  ok] button: GPIO 17 reads released" in result.stdout
    assert (f"free for {home}/.local/state/tablectl-pc (the daemon creates it at its first "
            "start)") in result.stdout
    assert _everything_under(home) == []


def test_the_reference_configuration_on_a_pc_names_each_real_cause(tmp_path):
    """deploy/table.toml where there is no Pi, no shoe and no certificate: one line per part
    with its cause; gpiozero's fallback warnings folded into the button's line."""
    reference = (ROOT / "deploy" / "table.toml").read_text()
    data = tmp_path / "not" / "yet"
    config = tmp_path / "table.toml"
    config.write_text(reference.replace('data_dir = "/var/lib/tablectl"',
                                        f'data_dir = "{data}"'))
    result = _doctor(config)
    out = result.stdout
    assert result.returncode == 1
    assert result.stderr == ""
    button = next(line for line in out.splitlines() if line.startswith("[FAIL] button:"))
    assert button.startswith("[FAIL] button: no GPIO library works on this machine (lgpio: ")
    assert 'button.backend = "mock"' in out
    assert ("[FAIL] broker: mqtt.ca /etc/tablectl/ca.crt does not exist; mqtt.cert "
            "/etc/tablectl/table.crt does not exist; mqtt.key /etc/tablectl/table.key does not "
            "exist") in out
    assert "make-certs.sh" in out
    assert "No such file or directory" not in out.split("[FAIL] broker:")[1].split("\n")[0]
    assert not (tmp_path / "not").exists()


def test_the_broker_check_tells_an_unknown_host_from_a_closed_port(tmp_path):
    config = tmp_path / "table.toml"
    base = ('[table]\nid = "t1"\n[shoe]\nbackend = "none"\n[button]\nbackend = "none"\n'
            f'[display]\nbackend = "none"\n[storage]\ndata_dir = "{tmp_path}"\n')
    config.write_text(base + '[mqtt]\nhost = "no-such-hub.invalid"\nport = 1883\n')
    out = _doctor(config).stdout
    assert "[FAIL] broker: no-such-hub.invalid does not resolve" in out and "mqtt.host" in out
    config.write_text(base + '[mqtt]\nhost = "127.0.0.1"\nport = 1\n')
    out = _doctor(config).stdout
    assert "[FAIL] broker: nothing listens on 127.0.0.1:1 (connection refused)" in out


def test_a_data_folder_that_is_a_file_fails_the_disk_check(tmp_path):
    occupied = tmp_path / "data"
    occupied.write_text("not a folder")
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "t1"\n[shoe]\nbackend = "none"\n[button]\nbackend = '
                      '"none"\n[display]\nbackend = "none"\n[mqtt]\nenabled = false\n'
                      f'[storage]\ndata_dir = "{occupied / "tablectl"}"\n')
    out = _doctor(config).stdout
    assert f"[FAIL] disk: {occupied} is not a folder" in out


def test_a_machine_without_pseudo_terminals_fails_the_shoe_check_with_the_cause(monkeypatch):
    """A chroot without /dev/pts (seen in make pi-check's emulated root before it mounted one):
    the check says what to mount, and no traceback escapes the doctor."""
    from tablectl.config import load_config
    from tablectl.doctor import FAIL, check_shoe

    def no_pty():
        raise OSError(19, "No such device")

    monkeypatch.setattr(os, "openpty", no_pty)
    check = check_shoe(load_config(ROOT / "deploy" / "pc.toml"))
    assert check.result == FAIL and "cannot open a pty" in check.detail
    assert "/dev/pts" in check.advice


def test_the_doctor_says_which_uart_the_reader_is_on_and_refuses_bluetooths(tmp_path):
    """A Pi 3, 4 or Zero 2 W: Raspberry Pi OS's serial0 is the GPIO pins' UART (the mini UART
    ttyS0, Bluetooth on), serial1 the Bluetooth chip's (ttyAMA0); a Pi without Bluetooth:
    serial0 is ttyAMA0. The rules once named ttyAMA0 the reader's on every model."""
    from tablectl.doctor import uart_of

    pi4 = tmp_path / "pi4"
    pi4.mkdir()
    for node in ("ttyS0", "ttyAMA0"):
        (pi4 / node).write_text("")
    (pi4 / "serial0").symlink_to("ttyS0")
    (pi4 / "serial1").symlink_to("ttyAMA0")
    assert uart_of("tty:serial0:pn532", str(pi4)) == (
        "/dev/serial0 -> ttyS0 (the mini UART)", None)
    said, wrong = uart_of("tty:AMA0:pn532", str(pi4))
    assert said == "/dev/ttyAMA0 (the PL011 UART)"
    assert wrong is not None and "Bluetooth UART" in wrong and "tty:serial0:pn532" in wrong
    zero = tmp_path / "zero"
    zero.mkdir()
    (zero / "ttyAMA0").write_text("")
    (zero / "serial0").symlink_to("ttyAMA0")
    assert uart_of("tty:serial0:pn532", str(zero)) == (
        "/dev/serial0 -> ttyAMA0 (the PL011 UART)", None)
    assert uart_of("usb", str(zero)) == ("", None)
    assert uart_of("tty:serial0:pn532", str(tmp_path))[0] == "/dev/serial0 does not exist"
    rules = (Path(__file__).resolve().parents[1] / "deploy" / "99-tablectl.rules").read_text()
    assert 'KERNEL=="ttyAMA0"' not in rules  # no rule naming Bluetooth's UART the reader
