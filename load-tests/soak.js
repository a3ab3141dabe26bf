// Soak: the average load held for hours, to find leaks (memory, connections, outbox or queue growth) and
// latency that creeps up. Watch RSS and the services' /metrics while it runs.
//   k6 run --no-usage-report -e BASE_URL=... -e VUS=20 -e DURATION=2h load-tests/soak.js   (limits raised: see README)
import { numberFrom } from './lib/config.js';
import { userMix } from './lib/journeys.js';
import { loadThresholds } from './lib/thresholds.js';

/** @type {import('k6/options').Options} */
export const options = {
  stages: [
    { duration: '2m', target: numberFrom(__ENV.VUS, 20) },
    { duration: __ENV.DURATION || '2h', target: numberFrom(__ENV.VUS, 20) },
    { duration: '2m', target: 0 },
  ],
  thresholds: loadThresholds({ p95: 100, p99: 250, errorRate: 0.01 }),
};

// No setup(): each VU makes its own seed notes (lib/journeys.js, seedNotes), so no uuid reaches k6's summary.
export default function () {
  userMix();
}
