# Shared by scripts/dev/test, scripts/dev/up and .ci/run: make sure what the service needs is installed and
# running on this machine. Sourced, not run.

project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# node_modules matching package-lock.json (npm ci when missing or older than the lock file).
ensure_node_modules() {
  if [ ! -d "$project_dir/node_modules" ] || [ "$project_dir/package-lock.json" -nt "$project_dir/node_modules/.package-lock.json" ]; then
    echo "installing dependencies (npm ci)" >&2
    (cd "$project_dir" && npm ci --no-audit --no-fund >&2)
    # npm ci may have linked node_modules/.bin/node (scripts/dev/choose-node): look commands up afresh.
    hash -r
  fi
  if [ ! -f "$project_dir/dist/loader/cli.js" ] || [ -n "$(find "$project_dir/src" "$project_dir/loader" -newer "$project_dir/dist/loader/cli.js" -name '*.ts' -print -quit)" ]; then
    echo "building (tsc)" >&2
    (cd "$project_dir" && npm run --silent build >&2)
  fi
}

# PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379, started with this machine's commands if down.
ensure_postgres_and_redis() {
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    echo "starting PostgreSQL" >&2
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start >&2
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    echo "starting Redis" >&2
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log >&2
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
  fi
}

# Debian's Chromium, which the docs page's test drives headless (test/docs.test.ts).
ensure_chromium() {
  if ! command -v chromium >/dev/null; then
    echo "installing Chromium (apt-get)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2
  fi
}

# Debian's HAProxy, which the rolling-restart test puts in front of two API instances (test/rolling-restart.test.ts).
ensure_haproxy() {
  if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
    echo "installing HAProxy (apt-get)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >&2
  fi
}
