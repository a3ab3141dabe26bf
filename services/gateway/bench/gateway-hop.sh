#!/usr/bin/env bash
# The gateway hop against a bare express hello-world, measured in the same run (issue 3).
# Usage: npm run build && services/gateway/bench/gateway-hop.sh   (DURATION=10 CONNECTIONS=50 REDIS_URL=...)
# Prints requests/s, latency and CPU µs per request (user+system of the processes under test, read
# from /proc: it depends far less than requests/s on what else the machine runs).
set -euo pipefail
cd "$(dirname "$0")/../../.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-50}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
PREFIX="vanish:bench:gateway:$RANDOM$RANDOM"
port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
UP=$(port); YP=$(port); PP=$(port); GP=$(port); GA=$(port)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  redis-cli -u "$REDIS_URL" --scan --pattern "$PREFIX:*" | xargs -r redis-cli -u "$REDIS_URL" del >/dev/null || true
}
trap cleanup EXIT
node -e "require('http').createServer((q,s)=>{s.setHeader('Content-Type','application/json');s.end('{\"ok\":true}')}).listen($UP,'127.0.0.1')" & UPID=$!; pids+=($UPID)
node -e "const e=require('express');const a=e();a.get('/',(q,s)=>s.send('hello'));a.listen($YP,'127.0.0.1')" & YPID=$!; pids+=($YPID)
# The relay floor: node:http's server and client with a keep-alive agent, relaying and nothing else (no
# limit, headers, logs or metrics). It stands where http-proxy-middleware stood until the gateway dropped it
# (docs/gateway.md, "The relay: undici").
node -e "const h=require('http');const ag=new h.Agent({keepAlive:true});h.createServer((q,s)=>{const u=h.request({host:'127.0.0.1',port:$UP,path:q.url,method:q.method,headers:q.headers,agent:ag},(r)=>{s.writeHead(r.statusCode,r.headers);r.pipe(s)});u.on('error',()=>{s.statusCode=502;s.end()});q.pipe(u)}).listen($PP,'127.0.0.1')" & PPID2=$!; pids+=($PPID2)
PORT=$GP ADMIN_PORT=$GA HOST=127.0.0.1 LOG_LEVEL=warn LIMITER_KEY=$(head -c32 /dev/urandom | base64) \
  NOTES_URL=http://127.0.0.1:$UP STATS_URL=http://127.0.0.1:$UP MAILER_URL=http://127.0.0.1:$UP \
  REDIS_URL=$REDIS_URL RATE_LIMIT_KEY_PREFIX=$PREFIX RATE_LIMIT_VIEW_PER_HOUR=1000000 \
  node services/gateway/dist/main.js >/dev/null 2>&1 & GPID=$!; pids+=($GPID)
sleep 2
run() {
  local name=$1 url=$2; shift 2
  npx autocannon -c "$CONNECTIONS" -d 3 "$url" >/dev/null 2>&1
  local c0=0 c1=0 p
  for p in "$@"; do c0=$((c0 + $(cpu "$p"))); done
  local out; out=$(npx autocannon -j -c "$CONNECTIONS" -d "$DURATION" "$url" 2>/dev/null)
  for p in "$@"; do c1=$((c1 + $(cpu "$p"))); done
  echo "$out" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);console.log('| $name | '+Math.round(r.requests.average)+' | '+r.latency.p50+' | '+r.latency.p99+' | '+(r.non2xx+r.errors)+' | '+Math.round(($c1-$c0)*10000/r.requests.total)+' |')})"
}
echo "load average at start: $(cut -d' ' -f1 /proc/loadavg)"
echo "| scenario | requests/s | p50 ms | p99 ms | non-2xx+errors | CPU µs/request |"
echo "|---|---:|---:|---:|---:|---:|"
run "yardstick: bare express hello-world (start)" "http://127.0.0.1:$YP/" "$YPID"
run "relay floor: node:http + keep-alive agent, no limit" "http://127.0.0.1:$PP/api/view/x.php" "$PPID2" "$UPID"
run "gateway: not-limited route (/api/openapi.json)" "http://127.0.0.1:$GP/api/openapi.json" "$GPID" "$UPID"
run "gateway hop: Redis limit + proxy (/api/view/{uuid}.php)" "http://127.0.0.1:$GP/api/view/00000000-0000-4000-8000-000000000000.php" "$GPID" "$UPID"
run "yardstick: bare express hello-world (end)" "http://127.0.0.1:$YP/" "$YPID"
echo "load average at end: $(cut -d' ' -f1 /proc/loadavg)"
