#!/usr/bin/env bash
# The whole suite against PostgreSQL and Redis, with a real Celery worker and Debian's chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres:postgres@127.0.0.1:5432/proofdesk}"
export CELERY_BROKER_URL="${TEST_CELERY_BROKER_URL:-redis://127.0.0.1:6379/14}"
# Each run keeps to its own database, queue and files, so two runs on one machine do not collide.
run_id="$$"
export TEST_DATABASE_NAME="${TEST_DATABASE_NAME:-test_proofdesk_$run_id}"
export CELERY_TASK_DEFAULT_QUEUE="${CELERY_TASK_DEFAULT_QUEUE:-proofdesk-test-$run_id}"
export PROOFDESK_VAR_DIR="${PROOFDESK_VAR_DIR:-$PWD/var/test/$run_id}"
cleanup() {
  rm -rf "$PWD/var/test/$run_id"
  # pytest drops its database unless a straggling connection held it; never leave one behind.
  PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -qc \
    "DROP DATABASE IF EXISTS $TEST_DATABASE_NAME WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
export OMP_THREAD_LIMIT=1
unset LLM_BASE_URL LLM_MODEL LLM_API_KEY
.venv/bin/python -m pytest "$@"
