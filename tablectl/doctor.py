"""``tablectl doctor``: checks each part of a table on the machine it runs on, and says what to
do about each failure."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablectl.config import Config

if TYPE_CHECKING:
    from gpiozero.pins import Factory

OK, WARN, FAIL, SKIP = "ok", "warn", "FAIL", "skip"


@dataclass
class Check:
    part: str
    result: str
    detail: str
    advice: str = ""

    def line(self) -> str:
        text = f"[{self.result:>4}] {self.part}: {self.detail}"
        return text + (f"\n         -> {self.advice}" if self.advice else "")


def check_display(config: Config, bus_factory: Any = None) -> Check:
    if config.display.backend in ("none", "terminal"):
        return Check("display", SKIP, f"backend {config.display.backend}")
    address = config.display.address
    try:
        if bus_factory is None:
            import smbus2

            bus = smbus2.SMBus(config.display.i2c_port)
        else:
            bus = bus_factory(config.display.i2c_port)
        bus.read_byte(address)
    except FileNotFoundError:
        return Check("display", FAIL, f"no I2C bus /dev/i2c-{config.display.i2c_port}",
                     "enable I2C: sudo raspi-config nonint do_i2c 0, then reboot")
    except OSError as exc:
        return Check("display", FAIL,
                     f"nothing answers at 0x{address:02X} on I2C bus {config.display.i2c_port} "
                     f"({exc.strerror or exc})",
                     f"check the wiring (SDA, SCL, 3.3 V, GND) and the address with "
                     f"i2cdetect -y {config.display.i2c_port}; set display.address")
    return Check("display", OK, f"{config.display.backend} answers at 0x{address:02X}")


def check_shoe(config: Config, timeout: float = 3.0) -> Check:
    if config.shoe.backend == "none":
        return Check("shoe", SKIP, "backend none")
    if config.shoe.backend == "nfc":
        return check_nfc(config)
    if config.shoe.backend == "simulated":
        import tempfile

        from simulators.shoe import SimulatedShoe

        # The daemon runs the same firmware on a pty of its own; this one is the doctor's,
        # in a folder removed afterwards.
        with tempfile.TemporaryDirectory(prefix="tablectl-doctor-") as folder:
            try:
                shoe = SimulatedShoe(Path(folder) / "shoe",
                                     shoe_id=f"sim-{config.table.id}").start()
            except OSError as exc:
                return Check("shoe", FAIL, f"simulated: cannot open a pty ({exc})",
                             "this machine gives no pseudo-terminals: mount devpts on "
                             "/dev/pts (a chroot or container needs it)")
            try:
                check = _handshake(str(shoe.port), timeout)
            finally:
                shoe.stop()
        check.detail = f"simulated (the firmware on a pty): {check.detail}"
        return check
    return _handshake(config.shoe.port, timeout)


def _handshake(port_name: str, timeout: float) -> Check:
    """Open the shoe's serial port and ask for its HELLO."""
    from firmware_bridge import messages as m
    from firmware_bridge.host import NEED_DATA, HostLink

    try:
        import serial

        port = serial.serial_for_url(port_name, baudrate=115200, timeout=0.05)
    except Exception as exc:
        return Check("shoe", FAIL, f"cannot open {port_name}: {exc}",
                     "plug the shoe in; check `ls -l /dev/shoe` and the udev rules "
                     "(deploy/99-tablectl.rules); the user must be in group dialout")
    link = HostLink()
    link.request_hello()
    try:
        port.write(link.data_to_send())
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            link.receive_data(port.read(256))
            while (event := link.next_event()) is not NEED_DATA:
                if isinstance(event, m.Hello):
                    if event.proto != 1:
                        return Check("shoe", FAIL,
                                     f"firmware {event.firmware} speaks protocol {event.proto}",
                                     "flash the shoe with the firmware of this release "
                                     "(firmware_bridge/firmware)")
                    caps = [name for bit, name in ((1, "exit sensor"), (2, "stack sensor"),
                                                   (4, "NDEF"), (8, "deck check"))
                            if event.caps & bit]
                    return Check("shoe", OK, f"{event.shoe_id}: {event.firmware}, protocol 1, "
                                 f"{', '.join(caps) or 'no sensors'}")
    finally:
        port.close()
    noise = sum(link.stats.noise.values())
    return Check("shoe", FAIL, f"no HELLO from {port_name} in {timeout:g} s"
                 + (f" ({noise} garbled frames)" if noise else ""),
                 "is it the shoe's port? power-cycle the shoe; check the firmware is flashed")


def uart_of(nfc: str, dev: str = "/dev") -> tuple[str, str | None]:
    """Which UART a ``tty:`` reader path is on, said as the floor's technician reads it, and
    why it is wrong if it is (None: it is not): on a Pi 3, 4 or Zero 2 W ``ttyAMA0`` is the
    Bluetooth chip's (Raspberry Pi OS's ``serial1``), the GPIO pins' is ``serial0``."""
    import os

    parts = nfc.split(":")
    if len(parts) < 2 or parts[0] != "tty":
        return "", None
    name = parts[1]
    node = next((os.path.join(dev, n) for n in (name, f"tty{name}")
                 if os.path.exists(os.path.join(dev, n))), None)
    if node is None:
        return f"/dev/{name} does not exist", None
    real = os.path.basename(os.path.realpath(node))
    kind = {"ttyS0": "the mini UART", "ttyAMA0": "the PL011 UART"}.get(real, real)
    said = f"/dev/{os.path.basename(node)}" + (f" -> {real}" if real != os.path.basename(node)
                                               else "") + f" ({kind})"
    bluetooth = os.path.join(dev, "serial1")
    if os.path.exists(bluetooth) and os.path.basename(os.path.realpath(bluetooth)) == real:
        return said, (f"{real} is this Pi's Bluetooth UART (serial1), not the GPIO pins': "
                      'set [shoe] nfc = "tty:serial0:pn532"')
    return said, None


def check_nfc(config: Config) -> Check:
    uart, wrong = uart_of(config.shoe.nfc)
    where = f" on {uart}" if uart else ""
    if wrong is not None:
        return Check("nfc reader", FAIL, f"the reader is set{where}", wrong)
    try:
        from hardware.nfc_reader import open_frontend

        frontend = open_frontend(config.shoe.nfc)
    except Exception as exc:
        return Check("nfc reader", FAIL, f"no reader at {config.shoe.nfc}{where}: {exc}",
                     "check the wiring and the UART (raspi-config nonint do_serial_hw 0), or "
                     "for USB readers blacklist pn533 and stop pcscd")
    name = str(frontend.device)
    frontend.close()
    return Check("nfc reader", OK, name + where)


def check_button(config: Config) -> Check:
    if config.button.backend == "none":
        return Check("button", SKIP, "backend none")
    import warnings

    try:
        from gpiozero import Button
        from gpiozero.exc import BadPinFactory

        factory: Factory | None = None
        if config.button.backend == "mock" or config.button.pin_factory == "mock":
            from gpiozero.pins.mock import MockFactory

            factory = MockFactory()
        elif config.button.pin_factory != "auto":
            factory = _pin_factory(config.button.pin_factory)
        # gpiozero warns once per GPIO library it could not load before it gives up: the
        # doctor says that in one line, with the cause.
        with warnings.catch_warnings(record=True) as fallbacks:
            warnings.simplefilter("always")
            try:
                button = Button(config.button.pin, pull_up=True, pin_factory=factory)
            except BadPinFactory:
                tried = "; ".join(str(w.message).removeprefix("Falling back from ")
                                  for w in fallbacks)
                return Check("button", FAIL, "no GPIO library works on this machine"
                             + (f" ({tried})" if tried else ""),
                             "on a Raspberry Pi install the Pi extra (pip install '.[pi]': "
                             "lgpio, for every Pi); on a PC set button.backend = "
                             '"mock" (deploy/pc.toml)')
        pressed = button.is_pressed
        button.close()
    except Exception as exc:
        return Check("button", FAIL, f"cannot read GPIO {config.button.pin}: {exc}",
                     "the user must be in group gpio; install lgpio "
                     "(pip install '.[pi]'); set button.pin_factory")
    if pressed:
        return Check("button", WARN, f"GPIO {config.button.pin} reads pressed",
                     "stuck button, or the pin is wired to ground: check the switch")
    return Check("button", OK, f"GPIO {config.button.pin} reads released")


def _pin_factory(name: str) -> Factory:
    if name == "lgpio":
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    from gpiozero.pins.rpigpio import RPiGPIOFactory

    return RPiGPIOFactory()


def _tls_files(config: Config) -> Check | None:
    """Every TLS file the configuration names that this user cannot read, in one check."""
    import os

    bad = []
    for key, path in (("mqtt.ca", config.mqtt.ca), ("mqtt.cert", config.mqtt.cert),
                      ("mqtt.key", config.mqtt.key)):
        if path is None:
            continue
        if not os.path.exists(path):
            bad.append(f"{key} {path} does not exist")
        elif not os.access(path, os.R_OK):
            bad.append(f"{key} {path} is not readable by this user")
    if not bad:
        return None
    return Check("broker", FAIL, "; ".join(bad),
                 "copy the venue's ca.crt and this table's certificate and key (made on the hub "
                 "by deploy/hub/make-certs.sh) to those paths, readable by the service user "
                 "(key mode 600), or fix the paths in [mqtt]")


def _connect_failure(where: str, host: str, exc: Exception) -> Check:
    """What a failed connection means, from the exception the socket or TLS layer raised."""
    import socket
    import ssl

    if isinstance(exc, socket.gaierror):
        return Check("broker", FAIL, f"{host} does not resolve ({exc.strerror})",
                     "check mqtt.host: the hub's name on this network (mDNS needs "
                     "avahi-daemon on both machines), or its address")
    if isinstance(exc, ssl.SSLCertVerificationError):
        return Check("broker", FAIL, f"{where}: the broker's certificate is not trusted "
                     f"({exc.verify_message})",
                     "mqtt.ca must be the venue CA that signed the broker's certificate, and "
                     "that certificate must name mqtt.host (make-certs.sh BROKER_HOST)")
    if isinstance(exc, ssl.SSLError):
        return Check("broker", FAIL, f"{where}: TLS failed ({exc.reason or exc})",
                     "mqtt.cert and mqtt.key must be this table's pair from make-certs.sh, and "
                     "the port the broker's TLS listener (8883)")
    if isinstance(exc, ConnectionRefusedError):
        return Check("broker", FAIL, f"nothing listens on {where} (connection refused)",
                     "is Mosquitto running on the hub (systemctl status mosquitto), and is "
                     "mqtt.port its listener?")
    if isinstance(exc, TimeoutError):
        return Check("broker", FAIL, f"{where} does not answer (timed out)",
                     "check the network between the table and the hub, and the hub's firewall")
    return Check("broker", FAIL, f"cannot reach {where}: {exc}",
                 "check mqtt.host and mqtt.port and the network")


def check_broker(config: Config, timeout: float = 5.0) -> Check:
    if not config.mqtt.enabled:
        return Check("broker", SKIP, "mqtt disabled: events stay in the local outbox")
    import threading

    from contract.mqtt import mqtt_client, tls_settings

    result: dict[str, Any] = {}
    done = threading.Event()

    def on_connect(client: Any, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        result["reason"] = reason
        done.set()

    where = f"{config.mqtt.host}:{config.mqtt.port}"
    if (unreadable := _tls_files(config)) is not None:
        return unreadable
    try:
        client = mqtt_client(f"doctor-{config.table.id}",
                             tls=tls_settings(config.mqtt.ca, config.mqtt.cert, config.mqtt.key),
                             username=config.mqtt.username, password=config.mqtt.password)
    except Exception as exc:  # the files exist: they are not what they should be
        return Check("broker", FAIL, f"the TLS files cannot be used: {exc}",
                     "mqtt.ca must be a PEM certificate, mqtt.cert and mqtt.key this table's "
                     "matching pair (deploy/hub/make-certs.sh)")
    client.on_connect = on_connect
    try:
        client.connect(config.mqtt.host, config.mqtt.port, keepalive=10)
    except Exception as exc:
        return _connect_failure(where, config.mqtt.host, exc)
    client.loop_start()
    done.wait(timeout)
    # Disconnected first: the network thread sends DISCONNECT and ends at once (stopped
    # first, it waits out its socket's one-second select).
    client.disconnect()
    client.loop_stop()
    reason = result.get("reason")
    if reason is None:
        return Check("broker", FAIL, f"no answer from {where} in {timeout:g} s",
                     "is Mosquitto running on the hub, and this port open?")
    if reason.is_failure:
        return Check("broker", FAIL, f"{where} refused: {reason}",
                     "the certificate's CN must be the table id (table.id) and the ACL must "
                     "list it; see deploy/hub")
    return Check("broker", OK, f"connected to {where}"
                 + (" with the table's certificate" if config.mqtt.cert else ""))


def check_clock_source(config: Config) -> Check:
    timedatectl = shutil.which("timedatectl")
    seen = "no timedatectl (systemd) on this machine to ask"
    if timedatectl is not None:
        try:
            out = subprocess.run([timedatectl, "show", "-p", "NTPSynchronized", "--value"],
                                 capture_output=True, text=True, timeout=5)
            answer = out.stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            answer = f"timedatectl failed: {exc}"
        if answer == "yes":
            return Check("clock source", OK, "NTP synchronized")
        seen = "NTPSynchronized=no" if answer == "no" else (answer or "timedatectl said nothing")
    if config.clock.mode == "venue":
        advice = ("the blind clock follows the hub's venue clock, so it is not affected; events' "
                  "times come from this clock: enable NTP (timedatectl set-ntp true), the hub "
                  "as the server")
    else:
        advice = ("the blind clock runs on monotonic time, so it is not affected; events' "
                  "times come from this clock (a Pi has no real-time clock): enable NTP "
                  "(timedatectl set-ntp true)")
    return Check("clock source", WARN, f"no NTP synchronisation seen ({seen})", advice)


def check_disk(config: Config, minimum_mb: int = 100) -> Check:
    """The outbox's folder is writable (or can be made by the daemon): the doctor creates
    nothing."""
    import os

    data = Path(config.storage.data_dir)
    existing = data
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    fix = ("storage.data_dir must be writable by the service user, on a persistent partition "
           "(not a tmpfs, not a read-only root); deploy/install.sh makes /var/lib/tablectl")
    if not existing.is_dir():
        return Check("disk", FAIL, f"{existing} is not a folder", fix)
    if not os.access(existing, os.W_OK | os.X_OK):
        what = data if existing == data else f"{data} (missing) in {existing}"
        return Check("disk", FAIL, f"this user cannot write {what}", fix)
    free_mb = shutil.disk_usage(existing).free // (1024 * 1024)
    if free_mb < minimum_mb:
        return Check("disk", FAIL, f"{free_mb} MB free in {existing}",
                     "free space: the outbox holds every event the hub has not acknowledged")
    later = "" if existing == data else " (the daemon creates it at its first start)"
    return Check("disk", OK, f"{free_mb} MB free for {data}{later}")


def check_journal(config: Config) -> Check:
    """Journal lines the daemon could not replay at a start and set aside (quarantined), and
    snapshots of the table it could not restore."""
    import sqlite3

    path = Path(config.storage.data_dir) / f"{config.table.id}.db"
    if not path.is_file():
        return Check("journal", SKIP, f"no outbox yet at {path}")
    rows: list[tuple[int, str]] = []
    snapshots: list[tuple[int, str]] = []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            tables = {str(r[0]) for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "quarantine" in tables:
                rows = db.execute("SELECT id, reason FROM quarantine ORDER BY id").fetchall()
            if "snapshot_quarantine" in tables:
                snapshots = db.execute("SELECT id, reason FROM snapshot_quarantine "
                                       "ORDER BY id DESC").fetchall()
        finally:
            db.close()
    except sqlite3.OperationalError as exc:
        return Check("journal", FAIL, f"cannot read {path}: {exc}",
                     "the outbox must be readable by the service user")
    if not rows and not snapshots:
        return Check("journal", OK, "no line was ever quarantined")
    said = []
    if rows:
        first_id, first_reason = rows[0]
        said.append(f"{len(rows)} journal line(s) could not be replayed and were set aside "
                    f"(first: line {first_id}, {first_reason})")
    if snapshots:
        newest_id, newest_reason = snapshots[0]
        said.append(f"{len(snapshots)} snapshot(s) of the table could not be restored and "
                    f"were set aside (newest: snapshot {newest_id}, {newest_reason})")
    return Check("journal", WARN, "; ".join(said),
                 f"the table carried on without them; keep {path} (its quarantine and "
                 "snapshot_quarantine tables) for whoever investigates, and report the reason")


def check_rules(config: Config) -> Check:
    """The house's profile and, in standalone mode, the blind structure the table starts:
    the daemon loads both at its start, and would stop (and systemd start it again) on
    either."""
    from controller.datafiles import ProblemsError
    from houses.loaders import house_structure, load_profile

    try:
        profile = load_profile(config.table.profile)
        structure = config.clock.structure
        if config.clock.mode == "standalone" and structure:
            house_structure(structure, config.clock.structures)
    except (ProblemsError, OSError) as exc:
        return Check("config", FAIL, " ".join(str(exc).split())[:300],
                     "name a profile `tablectl profiles` lists, or a profile file that loads; "
                     "and a structure that exists")
    return Check("config", OK, f"table {config.table.id} of venue {config.table.venue}, "
                               f"profile {profile.name}")


def run_checks(config: Config) -> list[Check]:
    return [check_rules(config),
            check_display(config), check_shoe(config), check_button(config),
            check_broker(config), check_clock_source(config), check_disk(config),
            check_journal(config)]
