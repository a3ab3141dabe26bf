// The shim's shared state: metric samples, check results, the current group and scenario.
// One module instance for the whole run (every shim module imports this one).

export const state = {
  /** @type {Map<string, { type: 'counter'|'gauge'|'rate'|'trend', isTime: boolean, samples: { value: number, tags: Record<string,string> }[] }>} */
  metrics: new Map(),
  /** @type {Map<string, { passes: number, fails: number }>} name (with group path) → counts */
  checks: new Map(),
  groupPath: '',
  scenario: 'default',
  vu: 0,
  iteration: 0,
  startedAt: Date.now(),
  /** @type {(response: any) => boolean} */
  responseCallback: (response) => response.status >= 200 && response.status < 400,
  sleepScale: Number(process.env.K6_SHIM_SLEEP_SCALE ?? 1),
};

/**
 * @param {string} name
 * @param {'counter'|'gauge'|'rate'|'trend'} type
 * @param {boolean} [isTime]
 */
export function defineMetric(name, type, isTime = false) {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/.test(name)) throw new Error(`invalid metric name: ${name}`);
  const existing = state.metrics.get(name);
  if (existing) {
    if (existing.type !== type) throw new Error(`metric ${name} already defined as a ${existing.type}`);
    return existing;
  }
  const metric = { type, isTime, samples: [] };
  state.metrics.set(name, metric);
  return metric;
}

/** Tags every sample carries, as in k6. */
export function systemTags() {
  /** @type {Record<string, string>} */
  const tags = { scenario: state.scenario };
  if (state.groupPath) tags.group = state.groupPath;
  return tags;
}

/**
 * @param {string} name
 * @param {number} value
 * @param {Record<string, string>} [tags]
 */
export function addSample(name, value, tags = {}) {
  const metric = state.metrics.get(name);
  if (!metric) throw new Error(`unknown metric ${name}`);
  metric.samples.push({ value, tags: { ...systemTags(), ...tags } });
}

defineMetric('http_reqs', 'counter');
defineMetric('http_req_duration', 'trend', true);
defineMetric('http_req_waiting', 'trend', true);
defineMetric('http_req_sending', 'trend', true);
defineMetric('http_req_receiving', 'trend', true);
defineMetric('http_req_connecting', 'trend', true);
defineMetric('http_req_blocked', 'trend', true);
defineMetric('http_req_tls_handshaking', 'trend', true);
defineMetric('http_req_failed', 'rate');
defineMetric('checks', 'rate');
defineMetric('iterations', 'counter');
defineMetric('iteration_duration', 'trend', true);
defineMetric('group_duration', 'trend', true);
defineMetric('data_received', 'counter');
defineMetric('data_sent', 'counter');
defineMetric('vus', 'gauge');
defineMetric('vus_max', 'gauge');
