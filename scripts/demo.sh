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

workers=()
web=""
alive() {
  for group in "${workers[@]}"; do kill -0 -- "-$group" 2>/dev/null && return 0; done
  [ -n "$web" ] && kill -0 "$web" 2>/dev/null
}
stop() {
  # Ctrl-C, TERM or the terminal closing (HUP): the web server stops at once; the workers get a few seconds to
  # finish their task, then they and their pools are killed (a document being read goes back to the queue when
  # its lease runs out; a delivery being sent is sent again by the sweep).
  trap - INT TERM HUP EXIT
  kill -TERM "$web" 2>/dev/null || true
  for group in "${workers[@]}"; do kill -TERM -- "-$group" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    alive || break
    sleep 0.1
  done
  # Whatever did not stop by now is killed, the web server too, so that the wait below cannot hang.
  for group in "${workers[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
  [ -n "$web" ] && kill -KILL "$web" 2>/dev/null || true
  wait 2>/dev/null || true
  echo "Proofdesk demo stopped."
  exit 0
}
trap stop INT TERM HUP EXIT

# Each worker runs in its own process group (setsid), so that it and its pool can be stopped together.
# Documents and webhook deliveries have a worker each (settings.WEBHOOK_QUEUE): a receiver that hangs holds
# only a delivery, never a document. Both run the reaper (extraction/pipeline/reaper.py): documents of a killed run
# come back by themselves.
documents_queue="${CELERY_TASK_DEFAULT_QUEUE:-celery}"
webhooks_queue="${WEBHOOK_QUEUE:-$documents_queue-webhooks}"
setsid .venv/bin/celery -A reviewer worker -Q "$documents_queue" -n "documents@%h" --concurrency 1 \
  --loglevel WARNING &
workers+=($!)
setsid .venv/bin/celery -A reviewer worker -Q "$webhooks_queue" -n "webhooks@%h" --concurrency 1 \
  --loglevel WARNING &
workers+=($!)
$PY manage.py runserver "$HOST:$PORT" --noreload &
web=$!

sleep 2
echo
echo "Proofdesk is running at http://$HOST:$PORT/  (Ctrl-C stops the web server and the workers)"
echo
wait -n "${workers[@]}" "$web"
