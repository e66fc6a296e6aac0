#!/usr/bin/env bash
# Make a venue's certificate authority and its certificates: the broker's, one per table
# (CN = table id), one per role (dashboard, recorder, hub; floor for `tablectl clock` at a
# terminal), and the floor dashboard's HTTPS
# certificate ("web", for the same host as the broker: the hub runs beside it; the staff's
# tablets trust ca.crt).
#
#   deploy/hub/make-certs.sh OUTDIR VENUE BROKER_HOST [TABLE...] [NODE@HOST...]
#
# The group's cluster (docs/group.md) uses the same script with a CA of the group's own: each
# NODE@HOST (n1@n1.group.example) issues NODE.crt for that host name, good for serving and for
# connecting (a node is both ends of its routes), so that only the group's nodes become routes.
#
# Keys are EC P-256, written with mode 600. An existing CA in OUTDIR is reused and existing
# certificates are kept, so tables can be added later: run again with the new table ids (the
# broker, web and role keys are not issued again). A table id is what an MQTT topic level and
# the table's configuration allow: 1 to 32 letters, digits, '-' or '_', and not a role's name.
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

# Every id is checked before anything is issued: one bad id stops the run with nothing made.
bad=0
tables=()
nodes=()
for table in "$@"; do
    if [[ "$table" == *@* ]]; then  # a cluster node: NODE@HOST
        nodes+=("$table")
        if ! [[ "${table%%@*}" =~ ^[A-Za-z0-9_-]{1,32}$ && "${table#*@}" =~ ^[A-Za-z0-9.:-]{1,253}$ ]]; then
            echo "node '$table': use NAME@HOST, NAME 1 to 32 letters, digits, '-' or '_', HOST a host name or address" >&2
            bad=1
        fi
        table=${table%%@*}
    else
        tables+=("$table")
    fi
    if ! [[ "$table" =~ ^[A-Za-z0-9_-]{1,32}$ ]]; then
        echo "table id '$table': use 1 to 32 letters, digits, '-' or '_' (it is an MQTT topic level)" >&2
        bad=1
    fi
    case "$table" in
        dashboard|recorder|hub|floor|broker|web|ca) echo "table id '$table' is a role name" >&2; bad=1 ;;
    esac
done
if ! [[ "$venue" =~ ^[A-Za-z0-9_-]{1,32}$ ]]; then
    echo "venue '$venue': use 1 to 32 letters, digits, '-' or '_'" >&2
    bad=1
fi
[ "$bad" = 0 ] || exit 2
mkdir -p "$out"
umask 077

if [ ! -f "$out/ca.key" ]; then
    openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
        -keyout "$out/ca.key" -out "$out/ca.crt" -days 3650 -subj "/CN=${venue} venue CA" \
        2>/dev/null
fi

issued=()
issue() {  # name, extended key usage, subjectAltName (optional); kept if it exists already
    local name=$1 usage=$2 san=${3:-}
    local ext
    if [ -f "$out/$name.crt" ] && [ -f "$out/$name.key" ]; then
        return 0
    fi
    issued+=("$name")
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

host_san() {  # a host name or an address, as a subjectAltName entry
    case "$1" in
        *:*) echo "IP:$1" ;;
        *[!0-9.]*) echo "DNS:$1" ;;
        *) echo "IP:$1" ;;
    esac
}

san="$(host_san "$broker"),DNS:localhost,IP:127.0.0.1"
issue broker serverAuth "$san"
issue web serverAuth "$san"
for role in dashboard recorder hub floor; do
    issue "$role" clientAuth
done
for table in ${tables[@]+"${tables[@]}"}; do
    issue "$table" clientAuth
done
for node in ${nodes[@]+"${nodes[@]}"}; do
    issue "${node%%@*}" serverAuth,clientAuth "$(host_san "${node#*@}")"
done
chmod 644 "$out"/*.crt
if [ "${#issued[@]}" -eq 0 ]; then
    echo "certificates for venue $venue in $out: all there already, none issued"
else
    echo "certificates for venue $venue in $out: issued ${issued[*]}"
fi
