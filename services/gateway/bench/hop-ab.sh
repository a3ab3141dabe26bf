#!/usr/bin/env bash
# An interleaved A/B of the gateway hop between builds (issue 35): each variant is a built worktree's
# gateway (services/gateway/dist/main.js, Redis limit) in front of one trivial upstream, all running at
# once; wrk -t1 (or autocannon at a fixed RATE) loads them one after the other, the order rotated every
# round, and the CPU (user+system from /proc) of each gateway process per request is printed, with the
# medians. FLOOR=1 adds the relay floor of scripts/bench.ts (node:http + undici, nothing else).
# Usage: services/gateway/bench/hop-ab.sh ROUNDS 'name|worktree|ENV=value ...' ...
#   e.g. hop-ab.sh 4 "A|/path/to/main|X=1" "B|$PWD|X=1" "Bmem|$PWD|-u REDIS_URL"   (the ENV part goes to env(1))
#   DUR=8 WARM=2 CONN=50 FLOOR=1 RATE=500 (autocannon -R) PROF=dir (--cpu-prof per variant) HOP_PATH=/api/...
#   TOGETHER=1 (with RATE): every variant loaded at the same time, each by its own autocannon at RATE, so that
#   all see the same machine load (each round then gives one figure per variant, measured side by side)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/vanish-hop-ab-XXXX")

ROUNDS=$1; shift
DUR=${DUR:-8}; WARM=${WARM:-2}; CONN=${CONN:-50}
P=${HOP_PATH:-/api/view/00000000-0000-4000-8000-000000000000.php}
port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
ucpu() { awk '{print $14}' "/proc/$1/stat"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done; done; }
trap cleanup EXIT
UP=$(port)
AC="$ROOT/node_modules/.bin/autocannon"
cd "$ROOT"
PORT=$UP node -e "
const express = require('express');
const { listen } = require('@vanish/common');
const app = express();
const note = { success: true, note: { uuid: '00000000-0000-4000-8000-000000000000', has_passcode: false, expiry_type: 'time',
  expires_at: '2030-01-01 00:00:00', max_views: 100, current_views: 0, is_destroyed: false, created_at: '2029-12-31 00:00:00' } };
app.use((req, res) => { res.set('API-Version', '1.2.0'); res.json(note); });
listen(app, Number(process.env.PORT), '127.0.0.1');
" & pids+=($!)
names=(); declare -A VPORT VPID VADM
for spec in "$@"; do
  IFS='|' read -r name dir envs <<<"$spec"
  names+=("$name")
  gp=$(port); ga=$(port)
  prof=()
  if [ -n "${PROF:-}" ]; then mkdir -p "$PROF/$name"; prof=(--cpu-prof --cpu-prof-dir="$PROF/$name"); fi
  (cd "$dir" && export PORT=$gp ADMIN_PORT=$ga HOST=127.0.0.1 LOG_LEVEL=warn LIMITER_KEY=$(head -c32 /dev/urandom | base64) \
    NODE_OPTIONS=--max-semi-space-size=8 \
    NOTES_URL=http://127.0.0.1:$UP STATS_URL=http://127.0.0.1:$UP MAILER_URL=http://127.0.0.1:$UP \
    REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379} RATE_LIMIT_KEY_PREFIX=vanish-hopab-$name-$RANDOM RATE_LIMIT_VIEW_PER_HOUR=1000000 RATE_LIMIT_CREATE_PER_HOUR=1000000 RATE_LIMIT_STATS_PER_HOUR=1000000 && \
    exec env $envs node "${prof[@]}" --heap-growing-percent=50 services/gateway/dist/main.js >"$LOGS/gw-$name.log" 2>&1) & VPID[$name]=$!; pids+=(${VPID[$name]})
  VPORT[$name]=$gp; VADM[$name]=$ga
done
if [ "${FLOOR:-0}" = 1 ]; then
  FP=$(port)
  PORT=$FP UPSTREAM_URL=http://127.0.0.1:$UP node "$(dirname "$0")/../../../scripts/relay-floor.js" & FPID=$!; pids+=($FPID); names+=(FLOOR); VPID[FLOOR]=$FPID; VPORT[FLOOR]=$FP
fi
for name in "${names[@]}"; do
  [ "$name" = FLOOR ] && { sleep 1; continue; }
  for i in $(seq 1 150); do curl -sf http://127.0.0.1:${VADM[$name]}/readyz >/dev/null && break; sleep 0.2; done
done
sleep 1
for name in "${names[@]}"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${VPORT[$name]}$P"); echo "# $name answers $code"
done
measure() { # name
  local port=${VPORT[$1]} pid=${VPID[$1]}
  local l0 c0 c1 out n bad u0 u1
  if [ -n "${RATE:-}" ]; then
    $AC -c $CONN -R $RATE -d $WARM "http://127.0.0.1:$port$P" >/dev/null 2>&1
    l0=$(cut -d' ' -f1 /proc/loadavg); c0=$(cpu $pid)
    out=$($AC -j -c $CONN -R $RATE -d $DUR "http://127.0.0.1:$port$P" 2>/dev/null)
    c1=$(cpu $pid)
    n=$(echo "$out" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);console.log(r.requests.total)})")
    bad=$(echo "$out" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);console.log(r.non2xx+r.errors)})")
  else
  wrk -t1 -c$CONN -d${WARM}s "http://127.0.0.1:$port$P" >/dev/null
  l0=$(cut -d' ' -f1 /proc/loadavg)
  c0=$(cpu $pid); u0=$(ucpu $pid)
  out=$(wrk -t1 -c$CONN -d${DUR}s "http://127.0.0.1:$port$P")
  c1=$(cpu $pid); u1=$(ucpu $pid)
  n=$(echo "$out" | awk '/requests in/{print $1}')
  bad=$(echo "$out" | awk '/Non-2xx/{print $NF}')
  fi
  local us; us=$(awk -v a=$c0 -v b=$c1 -v n=$n 'BEGIN{printf "%.1f",(b-a)*10000/n}')
  local uu; uu=$(awk -v a=${u0:-0} -v b=${u1:-0} -v n=$n 'BEGIN{printf "%.1f",(b-a)*10000/n}')
  echo "$1 round=$r load=$l0 rps=$((n/DUR)) us=$us user=$uu non2xx=${bad:-0}"
  echo "$1 $us" >> "$LOGS/results"
}
measure_together() { # every variant at once, each by its own autocannon at RATE: the machine's load is the same for all
  local name; declare -A c0 out
  local acs=()
  for name in "${names[@]}"; do $AC -c $CONN -R $RATE -d $WARM "http://127.0.0.1:${VPORT[$name]}$P" >/dev/null 2>&1 & acs+=($!); done; wait "${acs[@]}"
  local l0; l0=$(cut -d' ' -f1 /proc/loadavg)
  for name in "${names[@]}"; do c0[$name]=$(cpu ${VPID[$name]}); done
  acs=()
  for name in "${names[@]}"; do $AC -j -c $CONN -R $RATE -d $DUR "http://127.0.0.1:${VPORT[$name]}$P" >"$LOGS/ac-$name.json" 2>/dev/null & acs+=($!); done; wait "${acs[@]}"
  for name in "${names[@]}"; do
    local c1 n bad us; c1=$(cpu ${VPID[$name]})
    n=$(node -e "const r=require('$LOGS/ac-$name.json');console.log(r.requests.total)")
    bad=$(node -e "const r=require('$LOGS/ac-$name.json');console.log(r.non2xx+r.errors)")
    us=$(awk -v a=${c0[$name]} -v b=$c1 -v n=$n 'BEGIN{printf "%.1f",(b-a)*10000/n}')
    echo "$name round=$r load=$l0 rps=$((n/DUR)) us=$us non2xx=${bad:-0}"
    echo "$name $us" >> "$LOGS/results"
  done
}
n=${#names[@]}
for r in $(seq 1 "$ROUNDS"); do
  if [ "${TOGETHER:-0}" = 1 ]; then measure_together; continue; fi
  for k in $(seq 0 $((n-1))); do
    i=$(( (k + r - 1) % n ))
    if [ $((r % 2)) = 0 ]; then i=$(( n - 1 - i )); fi
    measure "${names[$i]}"
  done
done
echo "--- summary (µs/request of the gateway process; median, then each round)"
awk '{v[$1]=v[$1]" "$2} END{for(k in v) print k": "v[k]}' "$LOGS/results" | while read -r name vals; do
  med=$(echo $vals | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  echo "$name median=$med all=[$vals]"
done
rm -f "$LOGS/results"
