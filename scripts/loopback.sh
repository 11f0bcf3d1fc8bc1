# Shared by scripts/chroma_server.sh and scripts/postgres.sh (sourced, not run): the Python they ask for free
# loopback ports. Needs ROOT (the repository) set by the caller.

python_bin() {
    if [[ -x "$ROOT/.venv/bin/python" ]]; then echo "$ROOT/.venv/bin/python"; else echo python3; fi
}

free_port() {  # ask the kernel for an unused loopback port
    "$(python_bin)" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port_free() {  # $1 = port; true if nothing listens on it on loopback
    "$(python_bin)" -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}
