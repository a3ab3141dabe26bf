// Thresholds: the pass/fail criteria of each run (k6 exits 99 when one is crossed).
// Latencies are per operation (the `name` tag set in api.js). A passcode create or reveal runs a slow KDF
// on purpose, so it gets its own bound in seconds: one scrypt derivation with the notes service's
// parameters (N = 2^15, r = 8, p = 1: 32 MiB), about 0.15 to 0.25 s of CPU per create or reveal (median
// 202 ms per derivation on the project's 2-core machine, `node load-tests/scrypt-cost.mjs 31`; real k6
// measured a median of 145 ms per whole request; README, "What a passcode costs"). Derivations run on Node's thread
// pool, so passcode requests arriving together queue there: the bound is looser than the cost of one.
// LATENCY_SCALE multiplies every latency bound (e.g. 10 on a shared CI machine, where one-iteration runs
// only need to catch hangs, never to measure speed).
import { numberFrom } from './config.js';

const SCALE = numberFrom(__ENV.LATENCY_SCALE, 1);

/** @typedef {Record<string, string[]>} Thresholds */

/** Smoke: one user, everything must work. @returns {Thresholds} */
export function smokeThresholds() {
  return {
    checks: ['rate==1'],
    http_req_failed: ['rate==0'],
    http_req_duration: [`p(99)<${2000 * SCALE}`],
  };
}

/**
 * Load runs (average, stress, spike, soak).
 * @param {{ p95: number, p99: number, errorRate: number }} bounds latency bounds in ms for the fast operations
 * @returns {Thresholds}
 */
export function loadThresholds(bounds) {
  const fast = [`p(95)<${bounds.p95 * SCALE}`, `p(99)<${bounds.p99 * SCALE}`];
  const slow = [`p(95)<${2000 * SCALE}`, `p(99)<${4000 * SCALE}`];
  return {
    checks: [`rate>${1 - bounds.errorRate}`],
    http_req_failed: [`rate<${bounds.errorRate}`],
    'http_req_duration{name:create}': fast,
    'http_req_duration{name:metadata}': fast,
    'http_req_duration{name:stats}': fast,
    'http_req_duration{name:page}': fast,
    'http_req_duration{name:reveal}': fast,
    'http_req_duration{name:create_passcode}': slow,
    'http_req_duration{name:reveal_passcode}': slow,
  };
}
