#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL cluster on loopback for the ledger's PostgreSQL tests
# (PostgresLedgerStore, package trait PostgreSQLLedger): Debian's `postgresql` server binaries,
# a new data directory in DIR owned by the `postgres` user, trust authentication for one
# database user on 127.0.0.1 only, no Unix socket outside DIR.
#
#   scripts/interop/postgres.sh start DIR   # initdb, start, create the database; prints the URL
#   scripts/interop/postgres.sh stop DIR    # stop it (fast shutdown)
#
# The URL (postgres://servertrust@127.0.0.1:PORT/servertrust) is written to DIR/postgres.url;
# the tests read SERVERTRUST_TEST_POSTGRES_URL. Port: SERVERTRUST_POSTGRES_PORT (default: the
# first free one from 54329). Needs root (it runs the server as `postgres`) or the postgres user.
set -euo pipefail
action=${1:?usage: postgres.sh start|stop DIR}
dir=$(mkdir -p "${2:?usage: postgres.sh start|stop DIR}" && cd "$2" && pwd)
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "postgres.sh: no PostgreSQL server binaries in /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }
as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }
data=$dir/data

case "$action" in
start)
    port=${SERVERTRUST_POSTGRES_PORT:-}
    if [ -z "$port" ]; then
        for candidate in $(seq 54329 54399); do
            (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null || { port=$candidate; break; }
        done
    fi
    [ -n "$port" ] || { echo "postgres.sh: no free port from 54329" >&2; exit 1; }
    chown postgres "$dir" 2>/dev/null || true
    as_postgres "$bin/initdb" -D "$data" -U servertrust -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    as_postgres "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=on" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
    as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U servertrust servertrust
    url="postgres://servertrust@127.0.0.1:$port/servertrust"
    echo "$url" >"$dir/postgres.url"
    echo "$url"
    ;;
stop)
    [ -d "$data" ] && as_postgres "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: postgres.sh start|stop DIR" >&2
    exit 2
    ;;
esac
