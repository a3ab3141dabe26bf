// The file `--summary-export FILE` writes, in k6's own layout, so that what the shim's export holds is what
// k6's would hold. k6 (internal/js/summary.go and summary-wrapper.js, "oldJSONSummary") writes the summary
// data minus `options` and `state`: `root_group` (groups and checks, each check with its passes and fails),
// `metrics` (each metric's values, in the old format: a rate's `value`, thresholds as name → failed) and
// `setup_data`, the JSON of whatever setup() returned. That last one is why the scripts return nothing
// secret from setup(). The shim adds one key of its own, `shim` (script, exit code, problems).
import { createHash } from 'node:crypto';
import { aggregateOf, parseThresholdKey } from './thresholds.mjs';

/** k6's default summaryTrendStats. */
const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'];

/** @param {string} path */
const idOf = (path) => createHash('md5').update(path).digest('hex');

/**
 * The group tree with its checks, from the shim's `group path::check name` → counts map.
 * @param {Map<string, { passes: number, fails: number }>} checks
 */
function rootGroup(checks) {
  /** @typedef {{ name: string, path: string, id: string, groups: Record<string, any>, checks: Record<string, any> }} Group */
  /** @type {Group} */
  const root = { name: '', path: '', id: idOf(''), groups: {}, checks: {} };
  for (const [key, counts] of checks) {
    const cut = key.lastIndexOf('::');
    const groupPath = key.slice(0, cut);
    const name = key.slice(cut + 2);
    let group = root;
    let path = '';
    for (const part of groupPath.split('::').slice(1)) {
      path = `${path}::${part}`;
      group.groups[part] ??= { name: part, path, id: idOf(path), groups: {}, checks: {} };
      group = group.groups[part];
    }
    group.checks[name] = { name, path: key, id: idOf(key), passes: counts.passes, fails: counts.fails };
  }
  return root;
}

/**
 * @param {'counter'|'gauge'|'rate'|'trend'} type
 * @param {number[]} values
 * @param {number} elapsedSeconds
 */
function valuesOf(type, values, elapsedSeconds) {
  /** @type {Record<string, number>} */
  const out = {};
  if (type === 'trend') {
    for (const stat of TREND_STATS) out[stat] = aggregateOf(type, values, stat, elapsedSeconds);
  } else if (type === 'counter') {
    out.count = aggregateOf(type, values, 'count', elapsedSeconds);
    out.rate = aggregateOf(type, values, 'rate', elapsedSeconds);
  } else if (type === 'rate') {
    out.passes = values.filter((v) => v !== 0).length;
    out.fails = values.length - out.passes;
    out.value = aggregateOf(type, values, 'rate', elapsedSeconds);
  } else {
    out.value = aggregateOf(type, values, 'value', elapsedSeconds);
    out.min = aggregateOf(type, values, 'min', elapsedSeconds);
    out.max = aggregateOf(type, values, 'max', elapsedSeconds);
  }
  return out;
}

/**
 * @param {{
 *   metrics: Map<string, { type: 'counter'|'gauge'|'rate'|'trend', samples: { value: number, tags: Record<string, string> }[] }>,
 *   checks: Map<string, { passes: number, fails: number }>,
 *   thresholdResults: { key: string, expression: string, passed: boolean }[],
 *   setupData: string | undefined,
 *   elapsedSeconds: number,
 *   shim: Record<string, unknown>,
 * }} run
 * @returns {string}
 */
export function summaryExport(run) {
  /** @type {Record<string, Record<string, any>>} */
  const metrics = {};
  // k6 lists the metrics that received samples, and each sub-metric a threshold names (`name{tag:value}`).
  for (const [name, metric] of run.metrics) {
    if (metric.samples.length > 0) metrics[name] = valuesOf(metric.type, metric.samples.map((s) => s.value), run.elapsedSeconds);
  }
  for (const result of run.thresholdResults) {
    const { metric: name, tags } = parseThresholdKey(result.key);
    const metric = run.metrics.get(name);
    if (!metric) continue;
    const values = metric.samples
      .filter((s) => Object.entries(tags).every(([tag, value]) => s.tags[tag] === value))
      .map((s) => s.value);
    metrics[result.key] ??= valuesOf(metric.type, values, run.elapsedSeconds);
    metrics[result.key].thresholds ??= {};
    metrics[result.key].thresholds[result.expression] = !result.passed;
  }
  /** @type {Record<string, unknown>} */
  const summary = { root_group: rootGroup(run.checks), metrics };
  // k6 passes setup()'s JSON through as it is; with no setup() (or one that returns nothing) the key is absent.
  if (run.setupData !== undefined && run.setupData !== 'SETUP_FAILED') summary.setup_data = JSON.parse(run.setupData);
  summary.shim = run.shim;
  return JSON.stringify(summary, null, 4);
}
