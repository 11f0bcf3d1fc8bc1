#!/usr/bin/env bash
# Start or stop a throwaway PostgreSQL cluster on loopback, for the PostgreSQL docstore tests and benchmarks.
#
#   scripts/postgres.sh start [--pid-file FILE] [--port N] [--timeout SECONDS]
#       Creates a fresh cluster in a temporary directory (mktemp -d under ${TMPDIR:-/tmp}): initdb with
#       scram-sha-256 for local and host connections, superuser `equimind` with a random password, database
#       `equimind`; listens on 127.0.0.1 only, on a free port (or --port), with its unix socket in the temporary
#       directory. Starts it with `pg_ctl start -w`, waits until `pg_isready` answers, then prints the URL
#       (postgresql://equimind:PASSWORD@127.0.0.1:PORT/equimind) as the last line of stdout and writes FILE (the
#       postmaster's pid) and FILE.env (PID, URL, DATA_DIR, LOG, PGPORT, BINDIR, RUN_AS, TEMP_DIR, REMOVE_DIR;
#       shell-sourceable, mode 600 since the URL holds the password).
#   scripts/postgres.sh restart [--pid-file FILE] [--timeout SECONDS]
#       `pg_ctl restart -m fast` of the cluster recorded in FILE: same data, same port, same URL (printed again as
#       the last line); FILE and FILE.env get the new postmaster's pid.
#   scripts/postgres.sh stop [--pid-file FILE]
#       `pg_ctl stop -m fast` (KILL if it is still up after 30 s), then removes the temporary directory (the data)
#       and FILE and FILE.env.
#   scripts/postgres.sh url [--pid-file FILE]
#       Prints the URL of the cluster recorded in FILE.
#   scripts/postgres.sh bindir
#       Prints the directory of the PostgreSQL binaries that `start` would use (exit 3 when there are none).
#
# FILE defaults to $EQUIMIND_PG_PIDFILE or ${TMPDIR:-/tmp}/equimind-postgres.pid. The binaries are in $PG_BINDIR,
# else `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin, else beside `initdb` on PATH; when none has
# initdb the script exits with status 3 (Debian: apt-get install postgresql). initdb refuses to run as root, so as
# root the server runs as $PG_USER, else the `postgres` system user, else a system user `equimind-pg` that `start`
# creates (no home, nologin); otherwise it runs as you.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PID_FILE="${EQUIMIND_PG_PIDFILE:-${TMPDIR:-/tmp}/equimind-postgres.pid}"
PORT=""
TIMEOUT=60
DB_USER=equimind
DB_NAME=equimind
NO_BINARIES=3  # exit status when no PostgreSQL binaries are found (tests/pg_server.py skips on it)

die() { echo "postgres.sh: $*" >&2; exit 1; }

# shellcheck source=scripts/loopback.sh
source "$ROOT/scripts/loopback.sh"  # python_bin, free_port, port_free

pg_bindir() {  # print the directory holding initdb, pg_ctl, postgres and pg_isready
    local dir=""
    if [[ -n "${PG_BINDIR:-}" ]]; then
        if [[ -x "$PG_BINDIR/initdb" ]]; then echo "$PG_BINDIR"; return; fi
        echo "postgres.sh: PG_BINDIR=$PG_BINDIR has no initdb; point it at a PostgreSQL bin directory," \
             "or unset it (Debian: apt-get install postgresql)" >&2
        exit "$NO_BINARIES"
    fi
    if command -v pg_config >/dev/null 2>&1; then
        dir="$(pg_config --bindir 2>/dev/null || true)"
        if [[ -n "$dir" && -x "$dir/initdb" ]]; then echo "$dir"; return; fi
    fi
    dir="$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/initdb' 2>/dev/null | sort -V | tail -n 1)"
    if [[ -n "$dir" ]]; then dirname "$dir"; return; fi
    if command -v initdb >/dev/null 2>&1; then
        dir="$(dirname "$(readlink -f "$(command -v initdb)")")"
        if [[ -x "$dir/pg_ctl" ]]; then echo "$dir"; return; fi
    fi
    echo "postgres.sh: no PostgreSQL binaries (initdb) found: apt-get install postgresql (Debian), or set" \
         "PG_BINDIR to the directory holding initdb and pg_ctl" >&2
    exit "$NO_BINARIES"
}

run_as_user() {  # print the user the server runs as: empty when not root (run as ourselves)
    if [[ "$(id -u)" != 0 ]]; then echo ""; return; fi
    if [[ -n "${PG_USER:-}" ]]; then
        id -u "$PG_USER" >/dev/null 2>&1 || die "PG_USER=$PG_USER is not a user on this machine; create it or unset PG_USER"
        [[ "$(id -u "$PG_USER")" != 0 ]] || die "PG_USER=$PG_USER is root, and initdb refuses to run as root; pick an unprivileged user"
        echo "$PG_USER"; return
    fi
    if id -u postgres >/dev/null 2>&1; then echo postgres; return; fi
    if ! id -u equimind-pg >/dev/null 2>&1; then
        local shell=/usr/sbin/nologin
        [[ -x "$shell" ]] || shell=/sbin/nologin
        [[ -x "$shell" ]] || shell=/bin/false
        # Another start may create it at the same moment: a failed useradd is fine if the user now exists.
        useradd --system --no-create-home --home-dir /nonexistent --shell "$shell" --user-group equimind-pg \
            >/dev/null 2>&1 || id -u equimind-pg >/dev/null 2>&1 \
            || die "running as root and could not create the system user equimind-pg (useradd failed); set PG_USER to an unprivileged user"
    fi
    echo equimind-pg
}

as_user() {  # run "$@" as $RUN_AS (empty: as ourselves), from a directory that user can enter
    if [[ -z "$RUN_AS" ]]; then "$@"; return; fi
    if command -v runuser >/dev/null 2>&1; then
        (cd "$TEMP_DIR" 2>/dev/null || cd /; runuser -u "$RUN_AS" -- "$@")
    else
        (cd "$TEMP_DIR" 2>/dev/null || cd /; setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups -- "$@")
    fi
}

is_postgres() {  # $1 = pid; true if it is alive and is a postgres process (guards against a recycled pid)
    [[ -n "$1" && -r "/proc/$1/cmdline" ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep postgres >/dev/null
}

recorded() {  # print the value of key $1 from $PID_FILE.env; fails when it is not there
    [[ -f "$PID_FILE.env" ]] || return 1
    local value
    value="$(sed -n "/^$1=/{s/^$1=//;s/^'\(.*\)'\$/\1/;p;q;}" "$PID_FILE.env")"
    [[ -n "$value" ]] || return 1
    echo "$value"
}

postmaster_pid() {  # $1 = data dir; the first line of its postmaster.pid
    head -n 1 "$1/postmaster.pid" 2>/dev/null || true
}

write_env() {  # $1 = pid; record the cluster in FILE and FILE.env
    mkdir -p "$(dirname "$PID_FILE")"
    echo "$1" >"$PID_FILE"
    (
        umask 077
        printf "PID=%s\nURL='%s'\nDATA_DIR='%s'\nLOG='%s'\nPGPORT=%s\nBINDIR='%s'\nRUN_AS='%s'\nTEMP_DIR='%s'\nREMOVE_DIR=%s\n" \
            "$1" "$URL" "$DATA_DIR" "$LOG" "$PORT" "$BINDIR" "$RUN_AS" "$TEMP_DIR" 1 >"$PID_FILE.env.tmp"
        mv -f "$PID_FILE.env.tmp" "$PID_FILE.env"
    )
}

wait_ready() {  # wait until pg_isready answers on 127.0.0.1:$PORT, within the rest of $TIMEOUT
    local deadline=$((SECONDS + TIMEOUT))
    until "$BINDIR/pg_isready" -q -h 127.0.0.1 -p "$PORT" -d "$DB_NAME" -U "$DB_USER" -t 2; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

start() {
    if [[ -f "$PID_FILE" ]] && is_postgres "$(cat "$PID_FILE")"; then
        die "a server is already running (pid $(cat "$PID_FILE"), $(recorded URL | sed 's/:[^:@/]*@/:***@/')); stop it first or pass --pid-file"
    fi
    BINDIR="$(pg_bindir)"
    RUN_AS="$(run_as_user)"
    local explicit_port=0 password locale pid attempt
    [[ -n "$PORT" ]] && explicit_port=1
    [[ -n "$PORT" ]] || PORT="$(free_port)"
    port_free "$PORT" || die "port $PORT on 127.0.0.1 is in use; omit --port to pick a free one"

    TEMP_DIR="$(mktemp -d "${TMPDIR:-/tmp}/equimind-postgres.XXXXXX")"
    # The socket path must fit in sun_path (107 bytes): TEMP_DIR/.s.PGSQL.NNNNN
    ((${#TEMP_DIR} <= 88)) || { rm -rf -- "$TEMP_DIR"; die "temporary directory $TEMP_DIR is too long for a unix socket path; set TMPDIR to a shorter directory (e.g. /tmp)"; }
    DATA_DIR="$TEMP_DIR/data"
    LOG="$TEMP_DIR/server.log"
    if [[ -n "$RUN_AS" ]]; then
        chown "$RUN_AS:$(id -gn "$RUN_AS")" "$TEMP_DIR"
        as_user test -w "$TEMP_DIR" 2>/dev/null || {
            rm -rf -- "$TEMP_DIR"
            die "user $RUN_AS cannot enter $TEMP_DIR (a parent directory is closed to it); set TMPDIR to a directory every user can traverse, e.g. /tmp"
        }
    fi

    password="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    URL="postgresql://$DB_USER:$password@127.0.0.1:$PORT/$DB_NAME"
    # Recorded before initdb so that a failed start can be cleaned up by `stop`.
    write_env ""

    if locale -a 2>/dev/null | grep -iE '^c\.utf-?8$' >/dev/null; then locale=C.UTF-8; else locale=C; fi
    (umask 077; printf '%s\n' "$password" >"$TEMP_DIR/pwfile")
    [[ -z "$RUN_AS" ]] || chown "$RUN_AS" "$TEMP_DIR/pwfile"
    if ! as_user "$BINDIR/initdb" -D "$DATA_DIR" -U "$DB_USER" --pwfile="$TEMP_DIR/pwfile" --auth=scram-sha-256 \
            -E UTF8 --locale="$locale" >"$TEMP_DIR/initdb.log" 2>&1; then
        tail -n 20 "$TEMP_DIR/initdb.log" >&2 || true
        (stop) >/dev/null 2>&1 || true  # a subshell: a die in stop must not end this script first
        die "initdb failed (log above)"
    fi
    rm -f -- "$TEMP_DIR/pwfile"

    # Our settings in a file of their own, included last so they win; only the port changes between attempts.
    echo "include 'equimind.conf'" >>"$DATA_DIR/postgresql.conf"
    for attempt in 1 2 3; do
        cat >"$DATA_DIR/equimind.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$TEMP_DIR'
max_connections = 200
EOF
        [[ -z "$RUN_AS" ]] || chown "$RUN_AS" "$DATA_DIR/equimind.conf"
        URL="postgresql://$DB_USER:$password@127.0.0.1:$PORT/$DB_NAME"
        write_env ""
        if as_user "$BINDIR/pg_ctl" -D "$DATA_DIR" -l "$LOG" -w -t "$TIMEOUT" start >/dev/null 2>&1; then
            break
        fi
        # Another process may have taken the free port between free_port and the bind: pick another one.
        if ((explicit_port == 0 && attempt < 3)) && grep -q "could not bind\|Address already in use" "$LOG" 2>/dev/null; then
            PORT="$(free_port)"
            continue
        fi
        tail -n 20 "$LOG" >&2 || true
        (stop) >/dev/null 2>&1 || true  # a subshell: a die in stop must not end this script first
        die "pg_ctl start failed or timed out after ${TIMEOUT}s (log above)"
    done
    pid="$(postmaster_pid "$DATA_DIR")"
    write_env "$pid"
    if ! wait_ready; then
        tail -n 20 "$LOG" >&2 || true
        (stop) >/dev/null 2>&1 || true  # a subshell: a die in stop must not end this script first
        die "postgres did not answer pg_isready on 127.0.0.1:$PORT within ${TIMEOUT}s (log above)"
    fi
    is_postgres "$pid" || die "another process answered on 127.0.0.1:$PORT, and our postgres exited; log: $LOG"

    # The database `equimind` (initdb makes only postgres, template0 and template1), over the socket in TEMP_DIR.
    if ! PGPASSWORD="$password" PGCONNECT_TIMEOUT=10 "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$TEMP_DIR" \
            -p "$PORT" -U "$DB_USER" -d postgres -c "CREATE DATABASE $DB_NAME" >/dev/null 2>"$TEMP_DIR/createdb.log"; then
        cat "$TEMP_DIR/createdb.log" >&2 || true
        (stop) >/dev/null 2>&1 || true  # a subshell: a die in stop must not end this script first
        die "could not create the database $DB_NAME (error above)"
    fi
    rm -f -- "$TEMP_DIR/createdb.log"
    echo "$URL"
}

load_recorded() {  # read the cluster recorded in FILE.env into the globals
    [[ -f "$PID_FILE" ]] || die "no pid file $PID_FILE; nothing to $1 (start a cluster with: $0 start --pid-file $PID_FILE)"
    DATA_DIR="$(recorded DATA_DIR || true)"
    URL="$(recorded URL || true)"
    LOG="$(recorded LOG || true)"
    PORT="$(recorded PGPORT || true)"
    BINDIR="$(recorded BINDIR || true)"
    RUN_AS="$(recorded RUN_AS || true)"
    TEMP_DIR="$(recorded TEMP_DIR || true)"
}

restart() {
    load_recorded restart
    [[ -n "$DATA_DIR" && -d "$DATA_DIR" && -n "$BINDIR" ]] \
        || die "$PID_FILE.env does not name an existing data directory; stop it and start a new cluster"
    local pid
    # Starts the server even when it is down (pg_ctl says "old server process not running; starting server anyway").
    if ! as_user "$BINDIR/pg_ctl" -D "$DATA_DIR" -l "$LOG" -w -t "$TIMEOUT" -m fast restart >/dev/null 2>&1; then
        tail -n 20 "$LOG" >&2 || true
        die "pg_ctl restart failed or timed out after ${TIMEOUT}s (log above; the port $PORT may have been taken while it was down)"
    fi
    pid="$(postmaster_pid "$DATA_DIR")"
    write_env "$pid"
    wait_ready || { tail -n 20 "$LOG" >&2 || true; die "postgres did not answer pg_isready on 127.0.0.1:$PORT within ${TIMEOUT}s after the restart"; }
    echo "$URL"
}

stop() {
    load_recorded stop
    local pid remove
    pid="$(cat "$PID_FILE")"
    remove="$(recorded REMOVE_DIR || echo 0)"
    [[ -n "$pid" ]] || pid="$(postmaster_pid "$DATA_DIR")"
    if [[ -n "$BINDIR" && -n "$DATA_DIR" && -f "$DATA_DIR/postmaster.pid" ]]; then
        as_user "$BINDIR/pg_ctl" -D "$DATA_DIR" -w -t 30 -m fast stop >/dev/null 2>&1 || true
    fi
    if is_postgres "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do is_postgres "$pid" || break; sleep 0.1; done
    fi
    if [[ "$remove" == 1 && -n "$TEMP_DIR" && -d "$TEMP_DIR" ]]; then
        rm -rf -- "$TEMP_DIR" 2>/dev/null || { sleep 0.5; rm -rf -- "$TEMP_DIR"; }
    fi
    rm -f -- "$PID_FILE" "$PID_FILE.env"
    echo "stopped postgres (pid ${pid:-none})"
}

cmd="${1:-}"
[[ -n "$cmd" ]] || die "usage: $0 start|stop|restart|url|bindir [--pid-file FILE] [--port N] [--timeout S]"
shift
while [[ $# -gt 0 ]]; do
    case "$1" in
        --pid-file) [[ $# -ge 2 ]] || die "--pid-file needs a value"; PID_FILE="$2"; shift 2 ;;
        --port) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "--port needs a number"; PORT="$2"; shift 2 ;;
        --timeout) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "--timeout needs a number of seconds"; TIMEOUT="$2"; shift 2 ;;
        *) die "unknown option $1" ;;
    esac
done
BINDIR="" RUN_AS="" TEMP_DIR="" DATA_DIR="" LOG="" URL=""
case "$cmd" in
    start) start ;;
    restart) restart ;;
    stop) stop ;;
    url) recorded URL || die "no server recorded in $PID_FILE" ;;
    bindir) pg_bindir ;;
    *) die "unknown command $cmd; valid: start, restart, stop, url, bindir" ;;
esac
