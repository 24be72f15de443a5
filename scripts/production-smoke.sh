#!/usr/bin/env bash
# The production smoke pass. It runs the Dockerfile's commands outside a container (this machine
# cannot pull base images): a fresh copy of the tracked files, `npm ci` and `npm run build` as the
# build stage does, then a runtime directory holding what the runtime stage copies, `npm ci
# --omit=dev` there, and `node <flags> --import ./dist/telemetry.js dist/main.js` with NODE_ENV=production
# as an unprivileged user.
# Against PostgreSQL (its own database) and Redis it checks /healthz, mints a payment request,
# charges a client, receives the signed invoice.paid webhook of a mirrored invoice on a loopback
# receiver (admitted by WEBHOOK_ALLOW_ADDRESSES, the operator's explicit allowance; both signature
# schemes are checked), and stops the server with SIGTERM, which must exit 0 within 10 s.
#
# Needs: Node 22.12+ first on the PATH (.ci/run puts the `node` package's Node 24 there),
# PostgreSQL at 127.0.0.1:5432 (trust auth) and Redis at 127.0.0.1:6379.
# SMOKE_DATABASE names the database it drops and creates (default tollbook_smoke).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
database="${SMOKE_DATABASE:-tollbook_smoke}"
work="$(mktemp -d)"
server_pid=""
receiver_pid=""
# Keeps the pass's own exit status: a leftover file that will not delete does not decide it.
cleanup() {
  local status=$?
  set +e
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  if [ -n "$receiver_pid" ] && kill -0 "$receiver_pid" 2>/dev/null; then kill -KILL "$receiver_pid"; fi
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
free_port() { node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port="$(free_port)"
export NODE_ENV=production HOST=127.0.0.1 PORT="$port" LOG_LEVEL=warn
export PUBLIC_URL="https://tollbook.example" MASTER_KEY="$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')"
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$database" REDIS_URL="redis://127.0.0.1:6379"
# The receiver below is on loopback: production refuses it unless the operator lists it.
export WEBHOOK_ALLOW_ADDRESSES="127.0.0.1/32"

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

# The key's webhook goes to a receiver on loopback. It runs from the build stage's copy, where
# the standardwebhooks package is (the runtime stage has production dependencies only).
receiver_port="$(free_port)"
received="$work/webhook.json"
issued="$(cd "$runtime" && "${as_user[@]}" node bin/tollbook.mjs keys issue --space "$space_id" \
  --owner-email smoke@example.com --name smoke --scopes payments,accounts,invoices \
  --webhook-url "http://127.0.0.1:$receiver_port/hook")"
issued_field() { node -e 'const t=process.argv[1];console.log(JSON.parse(t.slice(t.indexOf("{"),t.lastIndexOf("}")+1))[process.argv[2]])' "$issued" "$1"; }
key="$(issued_field key)"
say "a webhook receiver on 127.0.0.1:$receiver_port"
(cd "$work/build" && exec node scripts/smoke-webhook-receiver.mjs "$receiver_port" "$(issued_field webhook_secret)" "$received") &
receiver_pid=$!
for _ in $(seq 1 100); do [ -e "$received.listening" ] && break; sleep 0.1; done
[ -e "$received.listening" ] || { say "the webhook receiver did not start"; exit 1; }

say "node $(cd "$runtime" && node bin/node-flags.mjs) --import ./dist/telemetry.js dist/main.js (NODE_ENV=production) on 127.0.0.1:$port"
started="$(date +%s%N)"
# The server's node flags as package.json's start script gives them (bin/node-flags.mjs), as the
# container's command reads them.
(cd "$runtime" && exec "${as_user[@]}" node $(node bin/node-flags.mjs) --import ./dist/telemetry.js dist/main.js) &
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

# A mirrored invoice paid in full fires invoice.paid to the key's webhook (spec 6.1).
invoice="$(api POST /integration/invoices "{\"account_id\":\"$account_id\",\"client_name\":\"Smoke client\",\"due_on\":\"2030-01-31\",\"line_items\":[{\"description\":\"Smoke\",\"unit_price\":\"40\",\"quantity\":\"1\",\"tax_kind\":\"standard\",\"tax_rate\":\"0\"}]}")"
invoice_id="$(field "$invoice" id)"
api POST "/integration/invoices/$invoice_id/send" '{"via":"none"}' >/dev/null
api POST "/integration/invoices/$invoice_id/payments" '{"amount":"40"}' >/dev/null
for _ in $(seq 1 300); do [ -s "$received" ] || [ -s "$received.refused" ] && break; sleep 0.1; done
[ -s "$received.refused" ] && { say "the receiver refused a delivery: $(cat "$received.refused")"; exit 1; }
[ -s "$received" ] || { say "no webhook within 30 s of the invoice's payment"; exit 1; }
[ "$(field "$(cat "$received")" event)" = invoice.paid ] &&
  [ "$(field "$(cat "$received")" body.data.invoice_id)" = "$invoice_id" ] ||
  { say "the receiver got: $(cat "$received")"; exit 1; }
say "received invoice.paid for $invoice_id, both signatures verified"
kill -TERM "$receiver_pid" && wait "$receiver_pid" || true
receiver_pid=""

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
