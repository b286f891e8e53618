#!/usr/bin/env bash
# Make PostgreSQL, Redis and Chromium available for the test suite: use them when they answer,
# install and start them when they do not.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PGHOST=127.0.0.1; PGPORT=5432

if ! pg_isready -q -h "$PGHOST" -p "$PGPORT" 2>/dev/null; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    echo "installing PostgreSQL"; apt_install postgresql postgresql-client
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h "$PGHOST" -p "$PGPORT" && break; sleep 1; done
  pg_isready -h "$PGHOST" -p "$PGPORT"
fi
# The suite logs in as postgres/postgres; works under trust auth and under md5 alike.
if ! PGPASSWORD=postgres psql -h "$PGHOST" -U postgres -d postgres -Atqc "select 1" >/dev/null 2>&1; then
  as_root su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null || { echo "installing Redis"; apt_install redis-server redis-tools; }
  echo "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.5; done
  redis-cli -h 127.0.0.1 ping
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium for the browser tests"
  apt_install chromium
fi
# Optional engines used by some tests and benchmarks when present.
command -v pdftoppm >/dev/null || apt_install poppler-utils || true
command -v tesseract >/dev/null || apt_install tesseract-ocr || true
# The generated receipt-style tally sheets (sheetgen/forms.py) print in DejaVu Sans Mono, embedded from here.
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || apt_install fonts-dejavu-core || true
