#!/usr/bin/env bash
# Make sure a PostgreSQL server answers on 127.0.0.1:5432 (user postgres,
# trust auth on loopback) with a database named test, and print the DSN to
# use on stdout; everything else goes to stderr. Non-interactive and safe
# to run many times.
#
#   EASYJOB_TEST_DSN=$(bash .ci/postgres.sh) go test ./...
#
# Order: already answering -> start the Debian cluster -> install Debian's
# postgresql package and start its cluster. Needs root for the last two.
set -euo pipefail

host=127.0.0.1
port=5432
dsn="postgres://postgres@${host}:${port}/postgres?sslmode=disable"

log() { echo "postgres.sh: $*" >&2; }
answering() { command -v pg_isready >/dev/null && pg_isready -q -h "$host" -p "$port" 2>/dev/null; }
psql_q() { psql -X -q -h "$host" -p "$port" -U postgres -d postgres "$@"; }

# The newest Debian cluster (postgresql-common puts its config here).
cluster_version() { ls /etc/postgresql 2>/dev/null | sort -V | tail -1; }

# Let the Debian cluster listen on $port and trust loopback connections.
configure() {
  local conf=/etc/postgresql/$1/main
  if ! grep -Eq '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$conf/pg_hba.conf"; then
    log "trust auth on loopback in $conf/pg_hba.conf"
    # Local and host lines (peer / md5 / scram) become trust, and loopback
    # is trusted first of all.
    sed -i -E 's/^((local|host)\s.*\s)(peer|md5|scram-sha-256)\s*$/\1trust/' "$conf/pg_hba.conf"
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$conf/pg_hba.conf"
  fi
  if ! grep -Eq "^port\s*=\s*$port\b" "$conf/postgresql.conf"; then
    sed -i -E "s/^#?port\s*=\s*[0-9]+/port = $port/" "$conf/postgresql.conf"
  fi
}

start() {
  local ver=$1
  configure "$ver"
  # A running cluster that does not answer yet (starting up, or busy) is
  # waited for, never restarted: other runs may be using it.
  if ! pg_ctlcluster "$ver" main status >/dev/null 2>&1; then
    log "starting cluster $ver/main"
    # --skip-systemctl-redirect: there is no systemd in a container or CI.
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start >&2 || true
  fi
  for _ in $(seq 1 60); do
    answering && return 0
    sleep 0.5
  done
  return 1
}

if ! answering; then
  ver=$(cluster_version)
  if [ -z "$ver" ] || ! [ -d "/etc/postgresql/$ver/main" ]; then
    log "installing PostgreSQL from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
    ver=$(cluster_version)
  fi
  if [ -z "$ver" ] || ! start "$ver"; then
    log "PostgreSQL did not come up on $host:$port"
    exit 1
  fi
fi

# The database named test, for tools and tests that want one.
if ! psql_q -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -qx 1; then
  log "creating database test"
  psql_q -c 'CREATE DATABASE test' >&2 || true # a parallel run may have made it
fi

echo "$dsn"
