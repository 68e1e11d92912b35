#!/usr/bin/env bash
# Runs the portal the way production does: gunicorn (gthread), the django-q2 worker and the
# audit-sink streamer, plus the bundled demo MCP server, after seeding the demo data.
# Ctrl-C stops them all.
set -euo pipefail
PORT="${1:-8000}"
MCP_PORT="${2:-8765}"
BIN=.venv/bin
export FLUIDBOX_PUBLIC_URL="${FLUIDBOX_PUBLIC_URL:-http://127.0.0.1:$PORT}"
# A port already taken (another `make run`, anything else) would fail only the process that
# needs it, after the others started: the demo seeded against whatever answers there, and
# everything stopped right after printing the logins.
for port in "$PORT" "$MCP_PORT"; do
  if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then
    echo "make run: port $port is taken; serve on others: make run PORT=8080 MCP_PORT=8766" \
      "(and make demo PORT=8080)" >&2
    exit 1
  fi
done
pids=()
# Each service runs in a process group of its own (`setsid`), which this script stops as a
# whole: politely, then, after 15 s, for good. Signalled one by one, or by a terminal's Ctrl-C
# reaching every process at once, the worker's parent waited forever for children that had
# gone, or went first and left its workers running, holding the database.
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  # 15 s by the clock (a loop of checks counted instead took minutes on a busy machine);
  # `kill -0 -- -GROUP` is a builtin's check that any process of the group is left.
  local until=$((SECONDS + 15))
  while [ "$SECONDS" -lt "$until" ]; do
    alive=()
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive+=("$pid"); done
    [ ${#alive[@]} -eq 0 ] && return
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

setsid $BIN/python -m demo_mcp --host 127.0.0.1 --port "$MCP_PORT" &
pids+=($!)
for _ in $(seq 1 300); do  # up to 30 s: a busy machine starts Python slowly
  (exec 3<>/dev/tcp/127.0.0.1/"$MCP_PORT") 2>/dev/null && break
  sleep 0.1
done
$BIN/python manage.py seed_demo --mcp-url "http://127.0.0.1:$MCP_PORT/mcp"
echo ""
echo "  fluidbox: http://127.0.0.1:$PORT/admin/"
$BIN/python manage.py seed_demo --print-login
echo ""
setsid $BIN/python manage.py qcluster &
pids+=($!)
setsid $BIN/python manage.py ledger stream &
pids+=($!)
setsid $BIN/gunicorn fluidbox.wsgi:application --config fluidbox/gunicorn_conf.py \
  --bind "127.0.0.1:$PORT" &
pids+=($!)
wait -n "${pids[@]}"
