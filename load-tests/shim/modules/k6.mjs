// The shim's `k6` module: check, group, sleep, fail, randomSeed.
import { addSample, state } from './state.mjs';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * @param {unknown} value
 * @param {Record<string, (value: any) => unknown>} sets
 * @param {Record<string, string>} [tags]
 */
export function check(value, sets, tags = {}) {
  let all = true;
  for (const [name, test] of Object.entries(sets)) {
    const passed = Boolean(typeof test === 'function' ? test(value) : test); // an exception propagates, as in k6
    const key = `${state.groupPath}::${name}`;
    const counts = state.checks.get(key) ?? { passes: 0, fails: 0 };
    if (passed) counts.passes += 1;
    else counts.fails += 1;
    state.checks.set(key, counts);
    addSample('checks', passed ? 1 : 0, { check: name, ...tags });
    if (!passed) all = false;
  }
  return all;
}

/**
 * @template T
 * @param {string} name
 * @param {() => T} fn
 * @returns {T}
 */
export function group(name, fn) {
  if (name.includes('::')) throw new Error('group and check names may not contain "::"');
  const outer = state.groupPath;
  state.groupPath = `${outer}::${name}`;
  const started = performance.now();
  try {
    return fn();
  } finally {
    addSample('group_duration', performance.now() - started);
    state.groupPath = outer;
  }
}

/** @param {number} seconds */
export function sleep(seconds) {
  const ms = Math.max(0, seconds * 1000 * state.sleepScale);
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

/** @param {string} [message] */
export function fail(message = '') {
  throw new Error(message);
}

export function randomSeed() {
  // Math.random cannot be seeded in Node; accepted and ignored.
}

export default { check, group, sleep, fail, randomSeed };
