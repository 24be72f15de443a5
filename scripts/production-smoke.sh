#!/usr/bin/env bash
# The production smoke pass. It runs the Dockerfile's commands outside a container (this machine
# cannot pull base images): a fresh copy of the tracked files, `npm ci` and `npm run build` as the
# build stage does, then a runtime directory holding what the runtime stage copies, `npm ci
# --omit=dev` there, and `node --import ./dist/telemetry.js dist/main.js` with NODE_ENV=production
# as an unprivileged user.
# Against PostgreSQL (its own database) and Redis it checks /healthz, mints a payment request,
# charges a client, and stops the server with SIGTERM, which must exit 0 within 10 s.
#
# Needs: Node 22.12+ first on the PATH (.ci/run puts the `node` package's Node 24 there),
# PostgreSQL at 127.0.0.1:5432 (trust auth) and Redis at 127.0.0.1:6379.
# SMOKE_DATABASE names the database it drops and creates (default tollbook_smoke).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
database="${SMOKE_DATABASE:-tollbook_smoke}"
work="$(mktemp -d)"
server_pid=""
# Keeps the pass's own exit status: a leftover file that will not delete does not decide it.
cleanup() {
  local status=$?
  set +e
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  rm -rf "$work" || echo "smoke: could not remove $work" >&2
  exit "$status"
}
trap cleanup EXIT
say() { echo "smoke: $*"; }
node --version | grep -Eq '^v(2[2-9]|[3-9][0-9])\.' || { say "needs Node 22 or newer first on the PATH"; exit 1; }

say "a fresh copy of the tracked files in $work/build"
mkdir -p "$work/build"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null) |
  tar -xf - -C "$work/build"

# Build stage (Dockerfile: `npm ci`, `npm run build`).
say "build stage: npm ci, npm run build"
(cd "$work/build" && npm ci --no-audit --no-fund && npm run build --silent)

# Runtime stage (Dockerfile: the same files, `npm ci --omit=dev`).
say "runtime stage: production dependencies only"
runtime="$work/runtime"
mkdir -p "$runtime/contracts"
cp -R "$work/build/package.json" "$work/build/package-lock.json" "$work/build/packages" \
  "$work/build/bin" "$work/build/dist" "$work/build/migrations" "$runtime/"
cp -R "$work/build/contracts/build" "$runtime/contracts/build"
(cd "$runtime" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
# (typescript may be present: viem names it as an optional peer, and npm installs the peer the
# lockfile holds; nothing at run time loads it.)
for absent in tsx vitest @foundry-rs/anvil node; do
  if [ -e "$runtime/node_modules/$absent" ]; then say "$absent is installed in the runtime stage"; exit 1; fi
done

psql -h 127.0.0.1 -U postgres -d postgres -q -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" \
  -c "CREATE DATABASE $database"
port="$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
export NODE_ENV=production HOST=127.0.0.1 PORT="$port" LOG_LEVEL=warn
export PUBLIC_URL="https://tollbook.example" MASTER_KEY="$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')"
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$database" REDIS_URL="redis://127.0.0.1:6379"

# Dockerfile: `USER node`; here an unprivileged user when this runs as root.
as_user=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod -R a+rX "$work"
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi

say "tollbook migrate (the compose file's one-shot service), from dist/ without tsx"
(cd "$runtime" && "${as_user[@]}" node bin/tollbook.mjs migrate)
created="$(cd "$runtime" && "${as_user[@]}" node bin/tollbook.mjs spaces create --name Smoke --owner-email smoke@example.com)"
space_id="$(node -e 'const t=process.argv[1];console.log(JSON.parse(t.slice(t.indexOf("{"))).id)' "$created")"
issued="$(cd "$runtime" && "${as_user[@]}" node bin/tollbook.mjs keys issue --space "$space_id" \
  --owner-email smoke@example.com --name smoke --scopes payments,accounts)"
key="$(node -e 'const t=process.argv[1];console.log(JSON.parse(t.slice(t.indexOf("{"),t.lastIndexOf("}")+1)).key)' "$issued")"

say "node --import ./dist/telemetry.js dist/main.js (NODE_ENV=production) on 127.0.0.1:$port"
started="$(date +%s%N)"
(cd "$runtime" && exec "${as_user[@]}" node --import ./dist/telemetry.js dist/main.js) &
server_pid=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { say "the server exited during start-up"; exit 1; }
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null
say "/healthz answers after $(( ($(date +%s%N) - started) / 1000000 )) ms"

api() {
  curl -sS -f -X "$1" -H "authorization: Bearer $key" -H 'content-type: application/json' \
    ${3:+-d "$3"} "http://127.0.0.1:$port$2"
}
field() { node -e 'const v=JSON.parse(process.argv[1]);console.log(process.argv[2].split(".").reduce((o,k)=>o?.[k],v))' "$1" "$2"; }

account="$(api POST /integration/accounts '{"kind":"bank","name":"Smoke bank","currency":"USD"}')"
account_id="$(field "$account" id)"
request="$(api POST /integration/payment-requests "{\"account_id\":\"$account_id\",\"amount\":\"12.50\",\"memo\":\"smoke\"}")"
[ "$(field "$request" status)" = active ] || { say "minted request: $request"; exit 1; }
say "minted payment request $(field "$request" token)"
# No rail pays in production without a payer, so the client's balance is empty: the charge answers
# unpaid, with the top-up request it needs (service interface, POST /integration/charges, 2).
charged="$(api POST /integration/charges "{\"client_ref\":\"smoke-client\",\"account_id\":\"$account_id\",\"amount\":\"0.25\"}")"
[ "$(field "$charged" paid)" = false ] && [ -n "$(field "$charged" top_up.token)" ] ||
  { say "charge: $charged"; exit 1; }
say "charge answered with its top-up request $(field "$charged" top_up.token)"

say "SIGTERM"
stop_started="$(date +%s)"
kill -TERM "$server_pid"
set +e
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then say "still running 10 s after SIGTERM"; exit 1; fi
wait "$server_pid"
code=$?
set -e
server_pid=""
[ "$code" = 0 ] || { say "exit code $code after SIGTERM"; exit 1; }
say "stopped with exit 0 in $(( $(date +%s) - stop_started )) s; the production smoke pass passed"
