#!/usr/bin/env bash
# Install or upgrade the table daemon on Raspberry Pi OS (bookworm), from this source tree.
#
#   sudo deploy/install.sh
#
# Idempotent: run it again to upgrade. The configuration (/etc/tablectl/table.toml) and the
# outbox and journal (/var/lib/tablectl) are kept: events not yet acknowledged by the hub are
# sent after the upgrade.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(dirname "$here")
prefix=/opt/tablectl

# 64-bit only, checked before anything changes: on 32-bit Raspberry Pi OS (armhf: armv7l and
# armv6l) PyPI has no wheels for jsonschema-rs (the contract's validator, Rust) nor Pillow (the
# display's images, C), so pip would build them from source with toolchains the OS lacks.
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
case "$arch" in
    arm64 | aarch64 | amd64 | x86_64) ;;
    *)
        cat >&2 <<EOT
refused: this is a $arch system, and the table runs on 64-bit Raspberry Pi OS only.
  Pi 3, 3+, 4, 400, 5, Zero 2 W, CM3, CM4, CM5: install Raspberry Pi OS Lite (64-bit), bookworm,
  with Raspberry Pi Imager, then run this again.
  Pi 1, Zero and Zero W (ARMv6) cannot run a 64-bit system: they are not supported.
Nothing was changed.
EOT
        exit 3
        ;;
esac

if [ "$(id -u)" -ne 0 ]; then
    echo "run as root: sudo $0" >&2
    exit 1
fi
if ! grep -q 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null; then
    echo "warning: made for Raspberry Pi OS bookworm; carrying on" >&2
fi

echo "== system packages"
apt-get update -q
apt-get install -y -q python3-venv python3-pip i2c-tools libusb-1.0-0

echo "== I2C on, serial console off, UART on"
if command -v raspi-config >/dev/null; then
    raspi-config nonint do_i2c 0
    raspi-config nonint do_serial_cons 1
    raspi-config nonint do_serial_hw 0
fi

echo "== the service user"
for group in gpio i2c dialout; do
    getent group "$group" >/dev/null || groupadd --system "$group"
done
if ! id tablectl >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/tablectl --shell /usr/sbin/nologin tablectl
fi
usermod -a -G gpio,i2c,dialout tablectl

echo "== the program"
# The board, from the device tree; TABLECTL_BOARD_MODEL names it where that cannot be read (an
# image built in a chroot, make pi-check's emulated root).
model=${TABLECTL_BOARD_MODEL:-$(tr -d '\0' </proc/device-tree/model 2>/dev/null || echo unknown)}
case "$model" in
    # lgpio drives every Pi on bookworm (gpiozero's default there; the only backend on a Pi 5),
    # from a wheel: RPi.GPIO has only a source package on PyPI, and no compiler is installed
    *"Raspberry Pi"*) extra=pi ;;
    *) extra=hardware ;;
esac
mkdir -p "$prefix"
rm -rf "$prefix/src"
mkdir -p "$prefix/src"
# The source as it is kept, without what a checkout gathers: a stale build/ would put modules
# that moved or were removed back into the wheel (pip builds in the tree), and a developer's
# .venv or node_modules are hundreds of megabytes for an SD card.
tar -C "$source_dir" --exclude=./.git --exclude=./.venv --exclude=./build \
    --exclude='./*.egg-info' --exclude=./tests/micropython/node_modules --exclude=./.demo \
    --exclude='./.*_cache' --exclude=./.hypothesis \
    -cf - . | tar -C "$prefix/src" -xf -
if [ ! -x "$prefix/venv/bin/python" ]; then
    python3 -m venv "$prefix/venv"
fi
"$prefix/venv/bin/pip" install -q --upgrade pip
"$prefix/venv/bin/pip" install -q --upgrade "$prefix/src[$extra]"

echo "== configuration"
install -d -m 0755 /etc/tablectl
# It may hold the broker's password (mqtt.password): readable by the service's user alone, as
# the daemon refuses a file holding a secret that others may read (as ssh does a private key).
if [ ! -f /etc/tablectl/table.toml ]; then
    install -m 0600 -o tablectl -g tablectl "$here/table.toml" /etc/tablectl/table.toml
elif [ -n "$(find /etc/tablectl/table.toml -perm /077)" ]; then
    # an install before this one made it 0640, root's, its group the service's
    chown tablectl:tablectl /etc/tablectl/table.toml
    chmod 0600 /etc/tablectl/table.toml
    echo "/etc/tablectl/table.toml: now readable by the service's user alone (mode 600)"
fi
install -d -m 0750 -o tablectl -g tablectl /var/lib/tablectl

echo "== udev rules and the service"
install -m 0644 "$here/99-tablectl.rules" /etc/udev/rules.d/99-tablectl.rules
if udevadm control --reload-rules; then
    udevadm trigger
fi
install -m 0644 "$here/tablectl.service" /etc/systemd/system/tablectl.service
ln -sf "$prefix/venv/bin/tablectl" /usr/local/bin/tablectl
systemctl daemon-reload
systemctl enable tablectl.service
if cmp -s "$here/table.toml" /etc/tablectl/table.toml; then
    # The example as shipped names no venue of yours: started with it, the daemon would fail.
    echo "installed ($extra), not started: the configuration is still the example."
    echo "edit /etc/tablectl/table.toml (venue, table id, broker, certificates), then:"
    echo "  tablectl doctor --config /etc/tablectl/table.toml && systemctl start tablectl"
    exit 0
fi
if ! systemctl restart tablectl.service; then
    echo "installed ($extra), but the service did not start:" >&2
    systemctl status --no-pager --lines 20 tablectl.service >&2 || true
    echo "see: journalctl -u tablectl; tablectl doctor --config /etc/tablectl/table.toml" >&2
    exit 1
fi
echo "installed ($extra) and running: systemctl status tablectl; journalctl -u tablectl -f"
