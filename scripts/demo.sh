#!/usr/bin/env bash
# One machine, nothing to configure: SQLite, a filesystem broker, the local OCR engine, sample actas.
set -euo pipefail
cd "$(dirname "$0")/.."
export PROOFDESK_VAR_DIR="${PROOFDESK_VAR_DIR:-$PWD/var/demo}"
export OMP_THREAD_LIMIT=1
HOST="${DEMO_HOST:-127.0.0.1}"
PORT="${DEMO_PORT:-8000}"
PY=.venv/bin/python

$PY manage.py migrate --noinput -v0
$PY manage.py demo_setup

pids=()
cleanup() { trap - INT TERM EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; echo "Proofdesk demo stopped."; exit 0; }
trap cleanup INT TERM EXIT

# The worker also runs the beat schedule (the reaper of stuck documents) in this one-machine setup.
.venv/bin/celery -A reviewer worker -B --concurrency 1 --loglevel WARNING \
  --schedule "$PROOFDESK_VAR_DIR/celerybeat-schedule" &
pids+=($!)
$PY manage.py runserver "$HOST:$PORT" --noreload &
pids+=($!)

sleep 2
echo
echo "Proofdesk is running at http://$HOST:$PORT/  (Ctrl-C stops the web server and the worker)"
echo
wait -n "${pids[@]}"
