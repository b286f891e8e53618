#!/usr/bin/env bash
# One machine, nothing to configure: SQLite, a filesystem broker, the local OCR engine, sample actas.
set -euo pipefail
cd "$(dirname "$0")/.."
export PROOFDESK_VAR_DIR="${PROOFDESK_VAR_DIR:-$PWD/var/demo}"
export OMP_THREAD_LIMIT=1
# Not DEBUG: its error pages list every URL and setting to whoever asks for a page that is not there.
export DJANGO_DEBUG="${DJANGO_DEBUG:-0}"
HOST="${DEMO_HOST:-127.0.0.1}"
PORT="${DEMO_PORT:-8000}"
PY=.venv/bin/python

$PY manage.py migrate --noinput -v0
$PY manage.py demo_setup

worker=""
web=""
stop() {
  # Ctrl-C, TERM or the terminal closing (HUP): the web server stops at once; the worker gets a few seconds to finish its document, then it
  # and its pool are killed (a document it was reading goes back to the queue when its lease runs out).
  trap - INT TERM HUP EXIT
  kill -TERM "$web" 2>/dev/null || true
  [ -n "$worker" ] && kill -TERM -- "-$worker" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 -- "-$worker" 2>/dev/null || kill -0 "$web" 2>/dev/null || break
    sleep 0.1
  done
  # Whatever did not stop by now is killed, the web server too, so that the wait below cannot hang.
  [ -n "$worker" ] && kill -KILL -- "-$worker" 2>/dev/null || true
  [ -n "$web" ] && kill -KILL "$web" 2>/dev/null || true
  wait 2>/dev/null || true
  echo "Proofdesk demo stopped."
  exit 0
}
trap stop INT TERM HUP EXIT

# The worker runs in its own process group (setsid), so that it and its pool can be stopped together.
# It also runs the reaper (extraction/reaper.py): documents of a killed run come back by themselves.
setsid .venv/bin/celery -A reviewer worker --concurrency 1 --loglevel WARNING &
worker=$!
$PY manage.py runserver "$HOST:$PORT" --noreload &
web=$!

sleep 2
echo
echo "Proofdesk is running at http://$HOST:$PORT/  (Ctrl-C stops the web server and the worker)"
echo
wait -n "$worker" "$web"
