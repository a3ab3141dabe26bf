// Thresholds: the pass/fail criteria of each run (k6 exits 99 when one is crossed).
// Latencies are per operation (the `name` tag set in api.js). A passcode create or reveal runs a slow KDF
// on purpose (scrypt: about half a second of CPU each), so it gets its own bound in seconds.
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
