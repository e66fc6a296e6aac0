"""A table on an emulated Raspberry Pi OS: ``make pi-check`` (minutes; not in ``make test``).

    sudo python3 -m tests.pi_check [--arch arm64 --arch armhf] [--json] [--keep]

For each architecture, a Debian bookworm root (what Raspberry Pi OS is made from) built with
debootstrap from Debian's packages and run under qemu-user-static (binfmt), then, on it:

- arm64 (Raspberry Pi OS 64-bit): ``deploy/install.sh`` as a technician runs it (systemd and
  udev stubbed: a root directory runs no init; the stubs log what was asked), which must leave
  the service enabled and not started while the configuration is the example; ``tablectl
  doctor --config deploy/pc.toml`` green; a simulated table dealt through the installed daemon
  (``tablectl sim``); ``tablectl bench footprint`` and every other benchmark a table has, from
  the installed package (Mosquitto installed for those that start a broker; ``venue``, a hub's,
  says it needs the hub's extras); install.sh again as an upgrade after the
  configuration was edited (the service restarted), and once more with the service failing to
  start (said, with its status, and a non-zero exit).
- armhf (Raspberry Pi OS 32-bit): install.sh refuses at once and changes nothing.

The bases are cached (``build/pi-check/bookworm-ARCH.tar``); each run starts from a fresh copy.
Every step prints what it took. Figures under emulation are not a Pi's: the CPU is emulated,
several times slower, and the RSS includes qemu's own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "pi-check"
MIRROR = "http://deb.debian.org/debian"
QEMU = {"arm64": "qemu-aarch64", "armhf": "qemu-arm"}
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PACKAGES = ("debootstrap", "qemu-user-static", "binfmt-support")

# Every `tablectl bench` a table has, at the sizes tests/test_bench.py runs them.
SMALL_BENCHES = {"replay": "--hands 20", "shoe": "--frames 500 --samples 40",
                 "display": "--frames 5 --idle-seconds 1", "latency": "--cards 30",
                 "outage": "--events 300", "contract": "--envelopes 50"}

SYSTEMCTL = """#!/bin/sh
# pi-check's systemctl: a root directory runs no init. Logs what it is asked; a verb fails
# when /etc/pi-check/fail-VERB exists.
echo "$*" >> /var/log/pi-check-systemctl.log
case "$1" in
    is-active) exit 3 ;;
    status) echo "x tablectl.service - Poker table controller (pi-check stub): failed"; exit 3 ;;
esac
[ -e "/etc/pi-check/fail-$1" ] && exit 1
exit 0
"""
UDEVADM = """#!/bin/sh
echo "$*" >> /var/log/pi-check-udevadm.log
exit 0
"""


class Unavailable(Exception):
    """pi-check cannot run here; the message says why."""


class Failed(Exception):
    """A check failed."""


def preflight(arches: list[str]) -> None:
    if os.geteuid() != 0:
        raise Unavailable("run as root (debootstrap, chroot and mounts): sudo make pi-check")
    missing = [p for p, tool in zip(PACKAGES, ("debootstrap", "qemu-aarch64-static",
                                               "update-binfmts"), strict=True)
               if shutil.which(tool) is None]
    if missing:
        print(f"installing {' '.join(missing)} with apt", flush=True)
        ok = subprocess.run(["apt-get", "install", "-y", "-q", *missing],
                            stdout=subprocess.DEVNULL).returncode == 0
        if not ok:
            raise Unavailable(f"could not install {' '.join(missing)} (Debian's packages)")
    binfmt = Path("/proc/sys/fs/binfmt_misc")
    if not (binfmt / "register").exists():
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(binfmt)],
                       stderr=subprocess.DEVNULL)
    if not (binfmt / "register").exists():
        raise Unavailable("no binfmt_misc here (it cannot be mounted): qemu-user cannot run "
                          "foreign binaries on this kernel")
    for arch in arches:
        if not (binfmt / QEMU[arch]).exists():
            subprocess.run(["update-binfmts", "--enable", QEMU[arch]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not (binfmt / QEMU[arch]).exists():
            raise Unavailable(f"binfmt has no {QEMU[arch]} (update-binfmts --enable failed)")


class Steps:
    def __init__(self) -> None:
        self.taken: list[dict[str, object]] = []

    @contextlib.contextmanager
    def step(self, arch: str, what: str) -> Iterator[None]:
        print(f"[{arch}] {what} ...", flush=True)
        start = time.monotonic()
        ok = False
        try:
            yield
            ok = True
        finally:
            seconds = round(time.monotonic() - start, 1)
            self.taken.append({"arch": arch, "step": what, "seconds": seconds, "ok": ok})
            print(f"[{arch}] {what}: {'ok' if ok else 'FAILED'} in {seconds} s", flush=True)


def base(arch: str) -> Path:
    """The cached bookworm base of ``arch``, built once with debootstrap."""
    tar = CACHE / f"bookworm-{arch}.tar"
    if tar.exists():
        return tar
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / f"bookworm-{arch}.build"
    shutil.rmtree(target, ignore_errors=True)
    run = subprocess.run(["debootstrap", f"--arch={arch}", "--variant=minbase",
                          "--include=ca-certificates", "bookworm", str(target), MIRROR],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise Failed(f"debootstrap {arch}: {run.stdout[-2000:]}{run.stderr[-2000:]}")
    subprocess.run(["tar", "-C", str(target), "-cf", str(tar), "."], check=True)
    shutil.rmtree(target)
    return tar


class Chroot:
    """A fresh copy of a base, its /proc, /sys and /dev mounted, the host's network and trust
    store (a proxy's CA where the host has one), and the stubs."""

    def __init__(self, arch: str, tar: Path) -> None:
        self.arch = arch
        self.dir = CACHE / f"{arch}-run"
        self.mounts: list[Path] = []
        self.tar = tar

    def __enter__(self) -> Chroot:
        if self.dir.exists():
            self._unmount_all()
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        subprocess.run(["tar", "-C", str(self.dir), "-xf", str(self.tar)], check=True)
        for name in ("proc", "sys", "dev", "dev/pts"):
            point = self.dir / name
            point.mkdir(exist_ok=True)
            subprocess.run(["mount", "--bind", f"/{name}", str(point)], check=True)
            self.mounts.append(point)
        shutil.copy("/etc/resolv.conf", self.dir / "etc" / "resolv.conf")
        host_ca = Path("/etc/ssl/certs/ca-certificates.crt")
        if host_ca.exists():
            shutil.copy(host_ca, self.dir / "etc" / "ssl" / "host-ca.crt")
        for name, text in (("systemctl", SYSTEMCTL), ("udevadm", UDEVADM)):
            stub = self.dir / "usr" / "local" / "sbin" / name
            stub.write_text(text)
            stub.chmod(0o755)
        (self.dir / "etc" / "pi-check").mkdir(exist_ok=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._unmount_all()

    def _unmount_all(self) -> None:
        for name in ("dev/pts", "dev", "sys", "proc"):
            subprocess.run(["umount", "-l", str(self.dir / name)], stderr=subprocess.DEVNULL)
        self.mounts.clear()

    def env(self) -> dict[str, str]:
        env = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8",
               "DEBIAN_FRONTEND": "noninteractive",
               # a Pi's board, which the emulated root cannot show in /proc/device-tree
               "TABLECTL_BOARD_MODEL": "Raspberry Pi 4 Model B Rev 1.5 (pi-check)"}
        if (self.dir / "etc" / "ssl" / "host-ca.crt").exists():
            env.update(PIP_CERT="/etc/ssl/host-ca.crt", SSL_CERT_FILE="/etc/ssl/host-ca.crt")
        return env

    def run(self, command: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["chroot", str(self.dir), "/bin/bash", "-c", command],
                              env=self.env(), capture_output=True, text=True, timeout=timeout)

    def copy_source(self) -> None:
        """This checkout as it is (its tracked and new files, not what git ignores)."""
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others",
                                "--exclude-standard", "-z"], capture_output=True,
                               check=True).stdout.decode().split("\0")
        target = self.dir / "root" / "tablectl-src"
        with tarfile.open(self.dir / "root" / "src.tar", "w") as tar:
            for name in files:
                if name and (ROOT / name).is_file():
                    tar.add(ROOT / name, arcname=name)
        target.mkdir()
        subprocess.run(["tar", "-C", str(target), "-xf", str(self.dir / "root" / "src.tar")],
                       check=True)

    def log(self, name: str) -> str:
        path = self.dir / "var" / "log" / name
        return path.read_text() if path.exists() else ""


def _expect(result: subprocess.CompletedProcess[str], code: int, *texts: str) -> str:
    out = result.stdout + result.stderr
    if result.returncode != code or any(text not in out for text in texts):
        raise Failed(f"exit {result.returncode} (expected {code}); wanted {texts!r} in:\n"
                     f"{out[-3000:]}")
    return out


def check_arm64(chroot: Chroot, steps: Steps, figures: dict[str, object]) -> None:
    arch = chroot.arch
    with steps.step(arch, "deploy/install.sh (apt, venv, pip install '.[pi]')"):
        out = _expect(chroot.run("cd /root/tablectl-src && deploy/install.sh"), 0,
                      "installed (pi), not started: the configuration is still the example")
        asked = chroot.log("pi-check-systemctl.log")
        if "enable tablectl.service" not in asked or "restart" in asked or "start " in asked:
            raise Failed(f"systemctl was asked: {asked!r}\n{out[-2000:]}")
    with steps.step(arch, "tablectl doctor --config deploy/pc.toml"):
        _expect(chroot.run("tablectl doctor --config /opt/tablectl/src/deploy/pc.toml"), 0,
                "0 part(s) failing")
    with steps.step(arch, "tablectl sim: a simulated table dealt through the daemon"):
        _expect(chroot.run("tablectl sim --tables 1 --hands 2 --seed 6 --dir /tmp/pi-sim"), 0,
                "t1: 2 hands")
    with steps.step(arch, "tablectl bench footprint (emulated: not a Pi's figures)"):
        result = chroot.run("tablectl bench footprint --hands 1 --idle-seconds 3 --json")
        _expect(result, 0)
        figures["footprint_under_emulation"] = json.loads(result.stdout.strip().splitlines()[-1])
    with steps.step(arch, "the other table benchmarks, small (Mosquitto installed for them)"):
        _expect(chroot.run("apt-get install -y -q mosquitto"), 0)
        benches = {}
        for name, options in SMALL_BENCHES.items():
            result = chroot.run(f"tablectl bench {name} {options} --json")
            _expect(result, 0)
            benches[name] = json.loads(result.stdout.strip().splitlines()[-1])
        figures["benches_under_emulation"] = benches
        _expect(chroot.run("tablectl bench venue"), 2, "needs the hub's extras")
    with steps.step(arch, "install.sh again after the configuration was edited: restarted"):
        chroot.run("sed -i 's/^venue = .*/venue = \"pi-check\"/' /etc/tablectl/table.toml")
        _expect(chroot.run("cd /root/tablectl-src && deploy/install.sh"), 0,
                "installed (pi) and running")
        if "restart tablectl.service" not in chroot.log("pi-check-systemctl.log"):
            raise Failed("the upgrade did not restart the service")
    with steps.step(arch, "install.sh with the service failing to start: said, with status"):
        (chroot.dir / "etc" / "pi-check" / "fail-restart").touch()
        _expect(chroot.run("cd /root/tablectl-src && deploy/install.sh"), 1,
                "but the service did not start", "pi-check stub): failed")


def _snapshot(directory: Path) -> set[tuple[str, float]]:
    out = set()
    for sub in ("etc", "opt", "usr/local", "var/lib/apt/lists", "var/lib/tablectl"):
        for path in (directory / sub).rglob("*"):
            with contextlib.suppress(OSError):
                out.add((str(path.relative_to(directory)), path.lstat().st_mtime))
    return out


def check_armhf(chroot: Chroot, steps: Steps, figures: dict[str, object]) -> None:
    arch = chroot.arch
    with steps.step(arch, "deploy/install.sh refuses a 32-bit system, changing nothing"):
        before = _snapshot(chroot.dir)
        _expect(chroot.run("cd /root/tablectl-src && deploy/install.sh"), 3,
                "refused: this is a armhf system", "Nothing was changed.")
        changed = before ^ _snapshot(chroot.dir)
        if changed:
            raise Failed(f"install.sh changed {sorted(changed)[:10]}")
        if chroot.log("pi-check-systemctl.log"):
            raise Failed("install.sh called systemctl")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", action="append", choices=sorted(QEMU),
                        help="the architectures (default: arm64 and armhf)")
    parser.add_argument("--json", action="store_true", help="print the steps as JSON at the end")
    parser.add_argument("--keep", action="store_true", help="keep each run's root afterwards")
    args = parser.parse_args(argv)
    arches = args.arch or ["arm64", "armhf"]
    started = time.monotonic()
    try:
        preflight(arches)
    except Unavailable as why:
        print(f"pi-check cannot run here: {why}", file=sys.stderr)
        return 2
    steps = Steps()
    figures: dict[str, object] = {}
    failed = None
    for arch in arches:
        try:
            with steps.step(arch, "the bookworm base (debootstrap, cached)"):
                tar = base(arch)
            with Chroot(arch, tar) as chroot:
                with steps.step(arch, "copy this checkout into the root"):
                    chroot.copy_source()
                (check_arm64 if arch == "arm64" else check_armhf)(chroot, steps, figures)
            if not args.keep:
                shutil.rmtree(CACHE / f"{arch}-run", ignore_errors=True)
        except (Failed, subprocess.SubprocessError, OSError) as exc:
            failed = f"{arch}: {exc}"
            print(f"pi-check FAILED: {failed}", file=sys.stderr)
            break
    total = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps({"ok": failed is None, "failed": failed, "seconds": total,
                          "steps": steps.taken, **figures}))
    else:
        for taken in steps.taken:
            print(f"  {taken['arch']:6} {taken['seconds']:7.1f} s  {taken['step']}")
        print(f"pi-check {'passed' if failed is None else 'FAILED'} in {total} s")
    return 0 if failed is None else 1


if __name__ == "__main__":
    raise SystemExit(main())
