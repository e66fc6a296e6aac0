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

if [ "$(id -u)" -ne 0 ]; then
    echo "run as root: sudo $0" >&2
    exit 1
fi
if ! grep -q 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null; then
    echo "warning: made for Raspberry Pi OS bookworm; carrying on" >&2
fi

echo "== system packages"
apt-get update -q
apt-get install -y -q python3-venv python3-dev python3-pip i2c-tools libusb-1.0-0 git

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
model=$(tr -d '\0' </proc/device-tree/model 2>/dev/null || echo unknown)
case "$model" in
    *"Raspberry Pi 5"*) extra=pi ;;          # lgpio: the only GPIO backend on a Pi 5
    *"Raspberry Pi"*) extra=pi-legacy ;;     # RPi.GPIO on older boards
    *) extra=hardware ;;
esac
mkdir -p "$prefix"
rm -rf "$prefix/src"
cp -a "$source_dir" "$prefix/src"
if [ ! -x "$prefix/venv/bin/python" ]; then
    python3 -m venv "$prefix/venv"
fi
"$prefix/venv/bin/pip" install -q --upgrade pip
"$prefix/venv/bin/pip" install -q --upgrade "$prefix/src[$extra]"

echo "== configuration"
install -d -m 0755 /etc/tablectl
if [ ! -f /etc/tablectl/table.toml ]; then
    install -m 0640 -g tablectl "$here/table.toml" /etc/tablectl/table.toml
    echo "edit /etc/tablectl/table.toml (venue, table id, certificates), then:"
    echo "  systemctl restart tablectl && tablectl doctor --config /etc/tablectl/table.toml"
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
if systemctl is-active --quiet tablectl.service; then
    systemctl restart tablectl.service
else
    systemctl start tablectl.service || true
fi
echo "installed ($extra): systemctl status tablectl; journalctl -u tablectl -f"
