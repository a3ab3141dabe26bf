#!/usr/bin/env bash
# `npm run test:scanners`: vanish scanned with tools no one on this project wrote, as an operator or an
# auditor would before putting it on the internet (docs/security.md, "Outside scanners").
#
#   testssl.sh  against the gateway's own TLS (TLS_PROFILE=intermediate, the default), and the protocols
#               of TLS_PROFILE=modern;
#   wapiti      every module that stays on this machine (no nikto/wapp database downloads, no ssrf/xxe
#               callbacks to wapiti's public endpoint), against the pages and the API;
#   sqlmap      a short pass over create's JSON fields and the uuid of /api/view/{uuid}.php.
#
# Starts the built all-in-one (`npm run build` first) with TLS on a throwaway certificate, on loopback
# ports of its own, in a temp dir, and stops it at the end. Fails on any testssl "NOT ok" or
# "VULNERABLE" line other than the throwaway certificate's own trust chain, any wapiti vulnerability or
# anomaly, any injectable parameter, and any 5xx answer the gateway gave during the scans. Ends with
# `N passed, N failed` (scripts/test-all.sh reads it). Reports are kept in SCANNER_REPORTS (default: a temp dir).
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT="$(pwd)"
WORK="$(mktemp -d -t vanish-scanners.XXXXXX)"
REPORTS="${SCANNER_REPORTS:-$WORK/reports}"
mkdir -p "$REPORTS"

passed=0
failed=0
pids=()
ok() { passed=$((passed + 1)); printf '[scanners] ok   %s\n' "$*"; }
not_ok() { failed=$((failed + 1)); printf '[scanners] FAIL %s\n' "$*"; }
log() { printf '[scanners] %s\n' "$*"; }

cleanup() {
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  rm -rf "$WORK/data" "$WORK/tls"
}
trap cleanup EXIT

finish() {
  log "reports in $REPORTS"
  echo "$passed passed, $failed failed"
  ((failed == 0))
  exit $?
}

for tool in testssl wapiti sqlmap openssl; do
  if ! command -v "$tool" >/dev/null; then
    pkg=$tool; [[ $tool == testssl ]] && pkg=testssl.sh
    not_ok "$tool is not installed: apt-get install -y --no-install-recommends $pkg (.ci/run installs it)"
  fi
done
MAIN="$ROOT/services/all-in-one/dist/main.js"
GATEWAY_MAIN="$ROOT/services/gateway/dist/main.js"
[[ -f $MAIN && -f $GATEWAY_MAIN ]] || not_ok "the build is missing: run \`npm run build\` first (npm run test:scanners does)"
((failed == 0)) || finish

# Every port at once, distinct, and below the kernel's ephemeral range: a port taken from that range with
# listen(0) and closed again can be handed to an outgoing connection (the gateway's own calls to notes)
# before the server that was meant to bind it starts (CI once failed on STATS_ADMIN_PORT: EADDRINUSE).
free_ports() {
  node -e '
    const net = require("net");
    const fs = require("fs");
    const [ephemeralLow] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    const wanted = Number(process.argv[1]);
    const held = [];
    const tryPort = (port) => new Promise((resolve) => {
      const server = net.createServer();
      server.once("error", () => resolve(null));
      server.listen(port, "127.0.0.1", () => resolve(server));
    });
    (async () => {
      const low = 20000, high = Math.max(low + 1000, ephemeralLow) - 1;
      for (let attempt = 0; held.length < wanted && attempt < 1000; attempt++) {
        const port = low + Math.floor(Math.random() * (high - low));
        if (held.some((server) => server.address().port === port)) continue;
        const server = await tryPort(port);
        if (server) held.push(server);
      }
      if (held.length < wanted) { console.error("no " + wanted + " free ports between " + low + " and " + high); process.exit(1); }
      console.log(held.map((server) => server.address().port).join(" "));
      for (const server of held) server.close();
    })();
  ' "$1"
}

# The throwaway certificate: its chain is not trusted by anyone, which is the one finding allowed.
mkdir -p "$WORK/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=localhost' \
  -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' -keyout "$WORK/tls/key.pem" -out "$WORK/tls/cert.pem" 2>/dev/null

declare -A PORTS
PORT_NAMES=(PORT ADMIN_PORT NOTES_PORT NOTES_ADMIN_PORT STATS_PORT STATS_ADMIN_PORT MAILER_PORT MAILER_ADMIN_PORT MODERN_PORT MODERN_ADMIN_PORT)
read -r -a CHOSEN_PORTS <<<"$(free_ports ${#PORT_NAMES[@]})"
((${#CHOSEN_PORTS[@]} == ${#PORT_NAMES[@]})) || { not_ok "could not find ${#PORT_NAMES[@]} free loopback ports"; finish; }
for i in "${!PORT_NAMES[@]}"; do PORTS[${PORT_NAMES[$i]}]="${CHOSEN_PORTS[$i]}"; done
BASE="https://127.0.0.1:${PORTS[PORT]}"

# Scanners send thousands of requests from one address: the limits are raised so that every request
# reaches the code under test instead of a 429.
env -i PATH="$PATH" HOME="$WORK" NODE_ENV=development LOG_LEVEL=warn DATA_DIR="$WORK/data" HOST=127.0.0.1 \
  PORT="${PORTS[PORT]}" ADMIN_PORT="${PORTS[ADMIN_PORT]}" NOTES_PORT="${PORTS[NOTES_PORT]}" NOTES_ADMIN_PORT="${PORTS[NOTES_ADMIN_PORT]}" \
  STATS_PORT="${PORTS[STATS_PORT]}" STATS_ADMIN_PORT="${PORTS[STATS_ADMIN_PORT]}" MAILER_PORT="${PORTS[MAILER_PORT]}" \
  MAILER_ADMIN_PORT="${PORTS[MAILER_ADMIN_PORT]}" PUBLIC_BASE_URL="$BASE" REQUIRE_HTTPS=true \
  TLS_CERT_FILE="$WORK/tls/cert.pem" TLS_KEY_FILE="$WORK/tls/key.pem" \
  RATE_LIMIT_CREATE_PER_HOUR=1000000 RATE_LIMIT_VIEW_PER_HOUR=1000000 RATE_LIMIT_STATS_PER_HOUR=1000000 \
  node "$MAIN" >"$REPORTS/all-in-one.log" 2>&1 &
pids+=($!)

# TLS_PROFILE=modern on a gateway of its own in front of the same services (protocols only).
env -i PATH="$PATH" HOME="$WORK" NODE_ENV=development LOG_LEVEL=warn DATA_DIR="$WORK/data/modern" HOST=127.0.0.1 \
  PORT="${PORTS[MODERN_PORT]}" ADMIN_PORT="${PORTS[MODERN_ADMIN_PORT]}" TLS_PROFILE=modern \
  TLS_CERT_FILE="$WORK/tls/cert.pem" TLS_KEY_FILE="$WORK/tls/key.pem" \
  NOTES_URL="http://127.0.0.1:${PORTS[NOTES_PORT]}" STATS_URL="http://127.0.0.1:${PORTS[STATS_PORT]}" \
  MAILER_URL="http://127.0.0.1:${PORTS[MAILER_PORT]}" \
  node "$GATEWAY_MAIN" >"$REPORTS/gateway-modern.log" 2>&1 &
pids+=($!)

ready=false
for _ in $(seq 1 180); do
  if curl -sk -o /dev/null "$BASE/api/stats.php" && curl -sk -o /dev/null "https://127.0.0.1:${PORTS[MODERN_PORT]}/api/stats.php"; then ready=true; break; fi
  sleep 0.5
done
if [[ $ready != true ]]; then
  not_ok "the all-in-one did not answer on $BASE within 90 s"; tail -n 30 "$REPORTS/all-in-one.log" "$REPORTS/gateway-modern.log"
  finish
fi
log "all-in-one on $BASE, TLS_PROFILE=modern gateway on port ${PORTS[MODERN_PORT]}"

# A note whose uuid sqlmap and wapiti get to play with.
UUID="$(curl -sk -H 'Content-Type: application/json' -d '{"content":"scanner note","max_views":5}' "$BASE/api/create.php" \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).uuid))')"

gateway_5xx() { # sum of the gateway's answers with a 5xx status so far
  curl -s "http://127.0.0.1:${PORTS[ADMIN_PORT]}/metrics" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      let n = 0;
      for (const line of s.split("\n")) {
        if (/^gateway_http_request_duration_seconds_count\{[^}]*status="5\d\d"/.test(line)) n += Number(line.split(" ").pop());
      }
      console.log(n);
    });'
}

# --- testssl.sh -------------------------------------------------------------------------------------
start=$SECONDS
testssl --quiet --color 0 --warnings off --ip one --connect-timeout 10 --openssl-timeout 10 \
  --protocols --server-defaults --std --each-cipher --server-preference --fs --vulnerable \
  --jsonfile "$REPORTS/testssl-intermediate.json" "127.0.0.1:${PORTS[PORT]}" >"$REPORTS/testssl-intermediate.txt" 2>&1
log "testssl (intermediate) took $((SECONDS - start)) s"
# The throwaway certificate is self-signed and names no revocation service: its own trust chain is the
# one allowed finding (a real certificate from a CA has both).
findings="$(grep -E 'NOT ok|VULNERABLE' "$REPORTS/testssl-intermediate.txt" \
  | grep -vE '^ *Chain of trust +NOT ok \(self signed\)$|^ +NOT ok -- neither CRL nor OCSP URI provided$' || true)"
if [[ -n $findings ]]; then not_ok "testssl (intermediate) findings:"; echo "$findings"; else ok "testssl (intermediate): no NOT ok / VULNERABLE line but the throwaway chain"; fi
protocols="$(sed -n '/Testing protocols/,/Testing cipher categories/p' "$REPORTS/testssl-intermediate.txt")"
if grep -qE '^ *TLS 1\.2 +offered' <<<"$protocols" && grep -qE '^ *TLS 1\.3 +offered' <<<"$protocols" \
   && ! grep -qE '^ *(SSLv2|SSLv3|TLS 1|TLS 1\.1) +offered' <<<"$protocols"; then
  ok "testssl (intermediate): TLS 1.2 and 1.3 offered, nothing older"
else
  not_ok "testssl (intermediate): protocols:"; echo "$protocols"
fi
if grep -qiE 'CBC|TLS_RSA_|AES(128|256)-SHA|DES|RC4|NULL|EXP' <<<"$(grep -E '^ *x[0-9a-f]{2,4} ' "$REPORTS/testssl-intermediate.txt")"; then
  not_ok "testssl (intermediate): a static-RSA, CBC or weaker suite is offered:"; grep -E '^ *x[0-9a-f]{2,4} ' "$REPORTS/testssl-intermediate.txt"
else
  ok "testssl (intermediate): every offered suite is ECDHE or TLS 1.3 with AEAD ($(grep -cE '^ *x[0-9a-f]{2,4} ' "$REPORTS/testssl-intermediate.txt") suites listed)"
fi

start=$SECONDS
testssl --quiet --color 0 --warnings off --ip one --connect-timeout 10 --openssl-timeout 10 --protocols \
  "127.0.0.1:${PORTS[MODERN_PORT]}" >"$REPORTS/testssl-modern.txt" 2>&1
log "testssl (modern, protocols) took $((SECONDS - start)) s"
if grep -qE '^ *TLS 1\.3 +offered' "$REPORTS/testssl-modern.txt" && ! grep -qE '^ *(SSLv2|SSLv3|TLS 1|TLS 1\.1|TLS 1\.2) +offered' "$REPORTS/testssl-modern.txt"; then
  ok "testssl (modern): TLS 1.3 only"
else
  not_ok "testssl (modern): protocols:"; sed -n '/Testing protocols/,$p' "$REPORTS/testssl-modern.txt"
fi

alive() { # the all-in-one still answers (a scanner must not take it down)
  if curl -sk -o /dev/null --max-time 10 "$BASE/api/stats.php"; then ok "the all-in-one still answers after $1"; else not_ok "the all-in-one no longer answers after $1"; tail -n 20 "$REPORTS/all-in-one.log"; finish; fi
}
alive testssl

# --- wapiti -----------------------------------------------------------------------------------------
# Local modules only: nikto and wapp download their databases, ssrf and xxe make the target call
# wapiti's public endpoint (pointed at a closed loopback port all the same). blindsql (time-based, a
# sleep per payload) and buster (a path word list) are local too but take tens of minutes here: add
# them with WAPITI_MODULES for a long run. Each module is bounded by WAPITI_MAX_ATTACK_SECONDS.
WAPITI_MODULES="${WAPITI_MODULES:-backup,cookieflags,crlf,csp,csrf,exec,file,htaccess,http_headers,methods,permanentxss,redirect,shellshock,sql,xss}"
# wapiti builds every module at start, and nikto's and wapp's download their databases when none is
# in the config dir: empty ones keep them off the network (and the session stays in the temp dir).
mkdir -p "$WORK/wapiti-config" "$WORK/wapiti-session"
echo '{}' >"$WORK/wapiti-config/apps.json"
: >"$WORK/wapiti-config/nikto_db"
start=$SECONDS
HOME="$WORK" wapiti -u "$BASE/" --scope folder -m "$WAPITI_MODULES" --flush-session --verify-ssl 0 \
  --store-config "$WORK/wapiti-config" --store-session "$WORK/wapiti-session" \
  --external-endpoint http://127.0.0.1:9/ \
  --max-scan-time "${WAPITI_MAX_SCAN_SECONDS:-900}" --max-attack-time "${WAPITI_MAX_ATTACK_SECONDS:-60}" --max-links-per-page 50 \
  -s "$BASE/api/view/$UUID.php" -s "$BASE/api/stats.php" -s "$BASE/$UUID" \
  -f json -o "$REPORTS/wapiti.json" >"$REPORTS/wapiti.txt" 2>&1
status=$?
log "wapiti took $((SECONDS - start)) s (exit $status)"
grep -E 'requests were skipped|Launching module' "$REPORTS/wapiti.txt" | tr '\n' ' '; echo
# Two findings are expected and reported as such, never failed:
# - wapiti 3.0.4's http_headers module wants X-XSS-Protection to contain "1"; vanish sends 0 on purpose
#   (OWASP: the legacy auditor is itself a leak);
# - its csrf module knows anti-CSRF fields only by a list of names (csrf_token, _token, ...), and vanish's
#   single-use token is called form_token, so it reports "Lack of anti CSRF token" on the create, reveal
#   and receipt ("End this note now") forms without testing them. The checks wapiti would have made are
#   made below instead.
node -e '
  const report = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const problems = [];
  let expected = 0;
  for (const kind of ["vulnerabilities", "anomalies"]) {
    for (const [category, items] of Object.entries(report[kind] ?? {})) {
      for (const item of items) {
        if (kind === "vulnerabilities" && item.info === "X-XSS-Protection is not set") { expected += 1; continue; }
        if (kind === "vulnerabilities" && item.info === "Lack of anti CSRF token" && item.method === "POST"
            && /^\/([0-9a-f-]{36}|r\/[A-Za-z0-9_-]{43})?\s*$/.test(item.path)) { expected += 1; continue; }
        problems.push(`${kind}: ${category}: ${item.info} (${item.method} ${item.path} ${item.parameter ?? ""})`);
      }
    }
  }
  console.log(JSON.stringify({ expectedNotes: expected, problems }));
  process.exit(problems.length === 0 ? 0 : 1);
' "$REPORTS/wapiti.json" >"$REPORTS/wapiti-summary.json" 2>&1
status=$?
if grep -qiE 'downloading from the web|error downloading' "$REPORTS/wapiti.txt"; then
  status=1; echo '"wapiti tried to download a database (an outside call)"' >>"$REPORTS/wapiti-summary.json"
fi
found="$(grep -oE 'found [0-9]+ URLs and forms' "$REPORTS/wapiti.txt" | head -1)"
if [[ $status -eq 0 ]]; then ok "wapiti ($found): no vulnerability, no anomaly ($(cat "$REPORTS/wapiti-summary.json"))"; else not_ok "wapiti: $(cat "$REPORTS/wapiti-summary.json")"; fi

# The forms' CSRF defence, as wapiti's csrf module would have tested it had it known the field's name:
# no token, a forged token and a cross-site request are refused (403); the page's own token is accepted once.
form_token() { curl -sk "$BASE/$1" | grep -oE 'name="form_token" value="[^"]+"' | head -1 | sed -E 's/.*value="([^"]+)"/\1/'; }
post_form() { curl -sk -o /dev/null -w '%{http_code}' -H "Origin: $BASE" "$@"; }
token="$(form_token '')"
codes="$(post_form -d 'content=x&expiry_type=view&max_views=1' "$BASE/") $(post_form -d 'content=x&expiry_type=view&max_views=1&form_token=forged' "$BASE/")"
codes="$codes $(curl -sk -o /dev/null -w '%{http_code}' -H 'Origin: https://evil.example' -H 'Sec-Fetch-Site: cross-site' --data-urlencode "form_token=$token" -d 'content=x&expiry_type=view&max_views=1' "$BASE/")"
fresh="$(form_token '')"
codes="$codes $(post_form --data-urlencode "form_token=$fresh" -d 'content=x&expiry_type=view&max_views=1' "$BASE/") $(post_form --data-urlencode "form_token=$fresh" -d 'content=x&expiry_type=view&max_views=1' "$BASE/")"
if [[ $codes == "403 403 403 200 403" ]]; then
  ok "create form: no token, a forged token and a cross-site post are 403; its own token works once (403 on reuse)"
else
  not_ok "create form CSRF defence: expected 403 403 403 200 403, got $codes"
fi

# The receipt's "End this note now" form (DECISIONS 12, on its confirmation page since DECISIONS 16), likewise: 403 without a token, with a forged one and
# cross-site; the page's own token ends the note once (303 back to the receipt), then 403 on reuse.
receipt="$(curl -sk -H 'Content-Type: application/json' -d '{"content":"scanner receipt"}' "$BASE/api/create.php" | grep -oE '/r/[A-Za-z0-9_-]{43}' | head -1)"
# The token is on the confirmation page (DECISIONS 16: ending always asks first; the receipt itself carries none).
end_token="$(form_token "${receipt#/}?end=confirm")"
codes="$(post_form -d 'no_token=1' "$BASE$receipt") $(post_form -d 'form_token=forged' "$BASE$receipt")"
codes="$codes $(curl -sk -o /dev/null -w '%{http_code}' -H 'Origin: https://evil.example' -H 'Sec-Fetch-Site: cross-site' --data-urlencode "form_token=$end_token" "$BASE$receipt")"
codes="$codes $(post_form --data-urlencode "form_token=$end_token" "$BASE$receipt") $(post_form --data-urlencode "form_token=$end_token" "$BASE$receipt")"
if [[ -n $receipt && $codes == "403 403 403 303 403" ]]; then
  ok "receipt form: no token, a forged token and a cross-site post are 403; its own token ends the note once (403 on reuse)"
else
  not_ok "receipt form CSRF defence: expected 403 403 403 303 403 for ${receipt:-no receipt link}, got $codes"
fi

alive wapiti

# --- sqlmap -----------------------------------------------------------------------------------------
SQLMAP=(sqlmap --batch --flush-session --disable-coloring --output-dir "$WORK/sqlmap" --level "${SQLMAP_LEVEL:-1}" --risk "${SQLMAP_RISK:-1}"
  --threads 2 --timeout 15 --retries 1 --skip-waf)
start=$SECONDS
"${SQLMAP[@]}" -u "$BASE/api/create.php" --method POST -H 'Content-Type: application/json' \
  --data '{"content":"hello","expiry_type":"view","max_views":1,"passcode":"pass1234"}' >"$REPORTS/sqlmap-create.txt" 2>&1
"${SQLMAP[@]}" -u "$BASE/api/view/${UUID}*.php" >"$REPORTS/sqlmap-view.txt" 2>&1
log "sqlmap took $((SECONDS - start)) s"
for report in sqlmap-create sqlmap-view; do
  if grep -qiE 'is vulnerable|appears to be .*injectable|identified the following injection point' "$REPORTS/$report.txt"; then
    not_ok "$report: injectable:"; grep -iE 'vulnerable|injectable|injection point' "$REPORTS/$report.txt"
  elif grep -qE 'do not appear to be injectable|does not seem to be injectable' "$REPORTS/$report.txt"; then
    ok "$report: nothing injectable ($(grep -cE 'testing ' "$REPORTS/$report.txt") tests)"
  else
    not_ok "$report: sqlmap did not finish its tests:"; tail -n 20 "$REPORTS/$report.txt"
  fi
done

alive sqlmap

# --- 5xx --------------------------------------------------------------------------------------------
errors="$(gateway_5xx)"
total="$(curl -s "http://127.0.0.1:${PORTS[ADMIN_PORT]}/metrics" | grep -E '^gateway_http_request_duration_seconds_count\{' | awk '{s += $NF} END {print s}')"
if [[ $errors == 0 ]]; then ok "no 5xx in $total answers of the gateway during the scans"; else not_ok "$errors answers of $total were 5xx"; fi

log "versions: testssl.sh $(dpkg-query -W -f='${Version}' testssl.sh 2>/dev/null); wapiti $(wapiti --version 2>&1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1); sqlmap $(sqlmap --version 2>/dev/null | head -1); $(openssl version)"
finish
