#!/usr/bin/env bash
# Make a venue's certificate authority and its certificates: the broker's, one per table
# (CN = table id), one per role (dashboard, recorder, hub), and the floor dashboard's HTTPS
# certificate ("web", for the same host as the broker: the hub runs beside it; the staff's
# tablets trust ca.crt).
#
#   deploy/hub/make-certs.sh OUTDIR VENUE BROKER_HOST [TABLE...]
#
# Keys are EC P-256, written with mode 600. An existing CA in OUTDIR is reused, so tables can
# be added later: run again with the new table ids.
set -euo pipefail

if [ "$#" -lt 3 ]; then
    echo "usage: $0 OUTDIR VENUE BROKER_HOST [TABLE...]" >&2
    exit 2
fi
out=$1
venue=$2
broker=$3
shift 3

command -v openssl >/dev/null || { echo "openssl is needed (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$out"
umask 077

if [ ! -f "$out/ca.key" ]; then
    openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
        -keyout "$out/ca.key" -out "$out/ca.crt" -days 3650 -subj "/CN=${venue} venue CA" \
        2>/dev/null
fi

issue() {  # name, extended key usage, subjectAltName (optional)
    local name=$1 usage=$2 san=${3:-}
    local ext
    ext=$(mktemp)
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n' \
        "$usage" >"$ext"
    if [ -n "$san" ]; then
        printf 'subjectAltName=%s\n' "$san" >>"$ext"
    fi
    openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
        -keyout "$out/$name.key" -out "$out/$name.csr" -subj "/CN=$name" 2>/dev/null
    openssl x509 -req -in "$out/$name.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" \
        -CAcreateserial -out "$out/$name.crt" -days 825 -extfile "$ext" 2>/dev/null
    rm -f "$out/$name.csr" "$ext"
}

case "$broker" in
    *[!0-9.]*) san="DNS:$broker,DNS:localhost,IP:127.0.0.1" ;;
    *) san="IP:$broker,DNS:localhost,IP:127.0.0.1" ;;
esac
issue broker serverAuth "$san"
issue web serverAuth "$san"
for role in dashboard recorder hub; do
    issue "$role" clientAuth
done
for table in "$@"; do
    case "$table" in
        dashboard|recorder|hub|broker|web) echo "table id '$table' is a role name" >&2; exit 2 ;;
    esac
    issue "$table" clientAuth
done
chmod 644 "$out"/*.crt
echo "certificates for venue $venue in $out: broker, web, dashboard, recorder, hub${*:+, $*}"
