#!/usr/bin/env bash
# Start or stop a local Chroma server (`chroma run`) on loopback, for server-mode tests and benchmarks.
#
#   scripts/chroma_server.sh start [--pid-file FILE] [--port N] [--path DIR] [--timeout SECONDS]
#       Starts `chroma run --host 127.0.0.1` on a free port (or --port) with a fresh temporary --path (or --path),
#       waits until GET /api/v2/heartbeat answers, then prints the URL (http://127.0.0.1:PORT) on stdout and
#       writes FILE (the server's pid) and FILE.env (PID, URL, DATA_DIR, LOG, REMOVE_DIR; shell-sourceable).
#   scripts/chroma_server.sh stop [--pid-file FILE]
#       Stops the server recorded in FILE (TERM, then KILL after 15 s) and removes the temporary directory that
#       `start` created (never a --path you passed).
#   scripts/chroma_server.sh url [--pid-file FILE]
#       Prints the URL of the running server recorded in FILE.
#
# FILE defaults to $EQUIMIND_CHROMA_PIDFILE or ${TMPDIR:-/tmp}/equimind-chroma.pid. The chroma executable is
# $CHROMA_BIN, else .venv/bin/chroma beside this script's repository, else `chroma` on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PID_FILE="${EQUIMIND_CHROMA_PIDFILE:-${TMPDIR:-/tmp}/equimind-chroma.pid}"
PORT=""
DATA_DIR=""
TIMEOUT=60

die() { echo "chroma_server.sh: $*" >&2; exit 1; }

chroma_bin() {
    if [[ -n "${CHROMA_BIN:-}" ]]; then echo "$CHROMA_BIN"
    elif [[ -x "$ROOT/.venv/bin/chroma" ]]; then echo "$ROOT/.venv/bin/chroma"
    elif command -v chroma >/dev/null 2>&1; then command -v chroma
    else die "no chroma executable: install chromadb (make install) or set CHROMA_BIN"
    fi
}

# shellcheck source=scripts/loopback.sh
source "$ROOT/scripts/loopback.sh"  # python_bin, free_port, port_free

heartbeat() {  # $1 = URL; succeeds when the server answers its v2 heartbeat
    "$(python_bin)" - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/api/v2/heartbeat", timeout=2) as r:
    sys.exit(0 if r.status == 200 and b"heartbeat" in r.read() else 1)
PY
}

is_chroma() {  # $1 = pid; true if it is alive and is a chroma process (guards against a recycled pid)
    [[ -r "/proc/$1/cmdline" ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q "chroma"
}

recorded() {  # print the value of key $1 from $PID_FILE.env
    [[ -f "$PID_FILE.env" ]] || return 1
    sed -n "s/^$1=//p" "$PID_FILE.env" | head -n 1 | sed "s/^'\(.*\)'$/\1/"
}

start() {
    if [[ -f "$PID_FILE" ]] && is_chroma "$(cat "$PID_FILE")"; then
        die "a server is already running (pid $(cat "$PID_FILE"), $(recorded URL)); stop it first or pass --pid-file"
    fi
    local bin remove=0 log pid url
    bin="$(chroma_bin)"
    [[ -n "$PORT" ]] || PORT="$(free_port)"
    port_free "$PORT" || die "port $PORT on 127.0.0.1 is in use; omit --port to pick a free one"
    if [[ -z "$DATA_DIR" ]]; then
        DATA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/equimind-chroma.XXXXXX")"
        remove=1
    fi
    mkdir -p "$DATA_DIR"
    log="$DATA_DIR/server.log"
    url="http://127.0.0.1:$PORT"
    # Detached from our stdout/stderr so `URL=$(scripts/chroma_server.sh start)` returns once it is up.
    ANONYMIZED_TELEMETRY=False nohup "$bin" run --path "$DATA_DIR/db" --host 127.0.0.1 --port "$PORT" \
        </dev/null >"$log" 2>&1 &
    pid=$!
    mkdir -p "$(dirname "$PID_FILE")"
    echo "$pid" >"$PID_FILE"
    printf "PID=%s\nURL='%s'\nDATA_DIR='%s'\nLOG='%s'\nREMOVE_DIR=%s\n" "$pid" "$url" "$DATA_DIR" "$log" "$remove" \
        >"$PID_FILE.env"
    local deadline=$((SECONDS + TIMEOUT))
    until heartbeat "$url"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$log" >&2 || true
            stop >/dev/null 2>&1 || true
            die "chroma exited during start-up (port $PORT taken?); log above"
        fi
        if ((SECONDS >= deadline)); then
            tail -n 20 "$log" >&2 || true
            stop >/dev/null 2>&1 || true
            die "chroma did not answer $url/api/v2/heartbeat within ${TIMEOUT}s"
        fi
        sleep 0.2
    done
    kill -0 "$pid" 2>/dev/null || die "another process answered on $url, and our chroma exited; log: $log"
    echo "$url"
}

stop() {
    [[ -f "$PID_FILE" ]] || die "no pid file $PID_FILE; nothing to stop"
    local pid data remove
    pid="$(cat "$PID_FILE")"
    data="$(recorded DATA_DIR || true)"
    remove="$(recorded REMOVE_DIR || echo 0)"
    if is_chroma "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 75); do is_chroma "$pid" || break; sleep 0.2; done
        if is_chroma "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    if [[ "$remove" == 1 && -n "$data" && -d "$data" ]]; then rm -rf -- "$data"; fi
    rm -f -- "$PID_FILE" "$PID_FILE.env"
    echo "stopped chroma (pid $pid)"
}

cmd="${1:-}"
[[ -n "$cmd" ]] || die "usage: $0 start|stop|url [--pid-file FILE] [--port N] [--path DIR] [--timeout S]"
shift
while [[ $# -gt 0 ]]; do
    case "$1" in
        --pid-file) PID_FILE="$2"; shift 2 ;;
        --port) PORT="$2"; shift 2 ;;
        --path) DATA_DIR="$2"; shift 2 ;;
        --timeout) TIMEOUT="$2"; shift 2 ;;
        *) die "unknown option $1" ;;
    esac
done
case "$cmd" in
    start) start ;;
    stop) stop ;;
    url) recorded URL || die "no server recorded in $PID_FILE" ;;
    *) die "unknown command $cmd; valid: start, stop, url" ;;
esac
