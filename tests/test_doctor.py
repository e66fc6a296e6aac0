"""`tablectl doctor` on a simulated table: what works says ok, what does not says what to do."""

from __future__ import annotations

import subprocess
import sys

from simulators.shoe import SimulatedShoe


def _doctor(config_path):
    return subprocess.run([sys.executable, "-m", "tablectl.cli", "doctor", "--config",
                           str(config_path)], capture_output=True, text=True, timeout=60)


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
    assert "[  ok] shoe: shoe-under-test: shoe-fw 1.1.0 (simulated), protocol 1" in result.stdout
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
    assert "[FAIL] broker: cannot reach 127.0.0.1:1" in out
    assert "3 part(s) failing: display, shoe, broker" in out


def test_doctor_reports_a_bad_configuration(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[table]\nseats = "all"\n')
    result = _doctor(config)
    assert result.returncode == 1 and "table.seats" in result.stdout
