#!/usr/bin/env bash
# The relay's client, A/B: the same minimal relay (node:http server in front, nothing else: no limit, headers,
# ids, logs or metrics) with node:http's client on a keep-alive agent, and with undici's dispatcher (an Agent,
# `stream()` writing the upstream's body into our answer, as the gateway's UpstreamRelay does with its own
# dispatch handler). Both relay to the same trivial upstream; autocannon bursts alternate between them, and
# the relay process's CPU µs per request is read from /proc (user + system), which depends far less than
# requests/s on what else the machine runs. The decision it informs: docs/gateway.md, "The relay: undici".
# Usage: services/gateway/bench/relay-client.sh   (ROUNDS=3 DURATION=5 CONNECTIONS=50)
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-50}
port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
UP=$(port); HP=$(port); UDP=$(port)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
node -e "require('http').createServer((q,s)=>{s.setHeader('Content-Type','application/json');s.end('{\"ok\":true}')}).listen($UP,'127.0.0.1')" & UPID=$!; pids+=($UPID)
node -e "
const h=require('http');const ag=new h.Agent({keepAlive:true});
h.createServer((q,s)=>{const u=h.request({host:'127.0.0.1',port:$UP,path:q.url,method:q.method,headers:{accept:q.headers.accept||'*/*'},agent:ag},(r)=>{s.writeHead(r.statusCode,r.headers);r.pipe(s)});u.on('error',()=>{s.statusCode=502;s.end()});q.pipe(u)}).listen($HP,'127.0.0.1')" & HPID=$!; pids+=($HPID)
node -e "
const h=require('http');const {Agent}=require('undici');const ag=new Agent({keepAliveTimeout:4000});
h.createServer((q,s)=>{ag.stream({origin:'http://127.0.0.1:$UP',path:q.url,method:q.method,headers:{accept:q.headers.accept||'*/*'}},({statusCode,headers})=>{s.writeHead(statusCode,headers);return s},(err)=>{if(err&&!s.headersSent){s.statusCode=502;s.end()}})}).listen($UDP,'127.0.0.1')" & UDPID=$!; pids+=($UDPID)
sleep 1
run() {
  local name=$1 port=$2 pid=$3
  local c0; c0=$(cpu "$pid")
  local out; out=$(npx autocannon -j -c "$CONNECTIONS" -d "$DURATION" "http://127.0.0.1:$port/api/view/x.php" 2>/dev/null)
  local c1; c1=$(cpu "$pid")
  echo "$out" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);console.log('| $name | '+Math.round(r.requests.average)+' | '+(r.non2xx+r.errors)+' | '+Math.round(($c1-$c0)*10000/r.requests.total)+' |')})"
}
npx autocannon -c "$CONNECTIONS" -d 2 "http://127.0.0.1:$HP/" >/dev/null 2>&1
npx autocannon -c "$CONNECTIONS" -d 2 "http://127.0.0.1:$UDP/" >/dev/null 2>&1
echo "load average at start: $(cut -d' ' -f1 /proc/loadavg)"
echo "| relay's client (round) | requests/s | non-2xx+errors | relay CPU µs/request |"
echo "|---|---:|---:|---:|"
for i in $(seq 1 "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then run "node:http ($i)" "$HP" "$HPID"; run "undici ($i)" "$UDP" "$UDPID"
  else run "undici ($i)" "$UDP" "$UDPID"; run "node:http ($i)" "$HP" "$HPID"; fi
done
echo "load average at end: $(cut -d' ' -f1 /proc/loadavg)"
