#!/usr/bin/env bash
# The whole suite against PostgreSQL and Redis, with real Celery workers and Debian's chromium, on every core
# (pytest-xdist; PYTEST_WORKERS=1 runs it in one process). Its arguments go to pytest:
# `bash scripts/test.sh tests/reviewer/desk`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres:postgres@127.0.0.1:5432/proofdesk}"
export CELERY_BROKER_URL="${TEST_CELERY_BROKER_URL:-redis://127.0.0.1:6379/14}"
# Each run keeps to its own databases, queues and files, so two runs on one machine do not collide; under
# xdist each worker adds its name to them (tests/support/xdist_env.py, and pytest-django for the database).
run_id="$$"
export TEST_DATABASE_NAME="${TEST_DATABASE_NAME:-test_proofdesk_$run_id}"
export CELERY_TASK_DEFAULT_QUEUE="${CELERY_TASK_DEFAULT_QUEUE:-proofdesk-test-$run_id}"
export PROOFDESK_VAR_DIR="${PROOFDESK_VAR_DIR:-$PWD/var/test/$run_id}"
cleanup() {
  rm -rf "$PWD/var/test/$run_id"
  # pytest drops its databases unless a straggling connection held one; never leave one behind.
  for name in $(PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -Atc \
      "SELECT datname FROM pg_database WHERE datname = '$TEST_DATABASE_NAME' OR datname LIKE '${TEST_DATABASE_NAME}\_gw%'" \
      2>/dev/null); do
    PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" \
      >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT
export OMP_THREAD_LIMIT=1
unset LLM_BASE_URL LLM_MODEL LLM_API_KEY
# One worker a core (nproc asked without OMP_THREAD_LIMIT, which it honours: 1). Two a core finished sooner on a
# quiet machine, but under that load the fault tests that bound real time (a 3 s lease, a 3 s broker timeout)
# failed (docs/BENCHMARKS.md#the-test-suite).
workers="${PYTEST_WORKERS:-$(env -u OMP_THREAD_LIMIT -u OMP_NUM_THREADS nproc)}"
if [ "$workers" = 1 ]; then
  .venv/bin/python -m pytest "$@"
else
  # worksteal: a worker that runs out takes tests queued for another, so one long file does not set the pace; each
  # worker still runs its tests in pytest-django's order (database tests, transactional ones, then the rest).
  .venv/bin/python -m pytest -n "$workers" --dist worksteal "$@"
fi
