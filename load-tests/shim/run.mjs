#!/usr/bin/env node
// A small stand-in for `k6 run` where the k6 binary cannot be installed: it loads a k6 script (an ES
// module) with the k6 modules mapped onto this shim, then runs setup(), ONE iteration of the default
// function (or of each scenario's exec function), and teardown(), sending the requests for real. It then
// evaluates the script's thresholds and prints the checks.
//
//   node load-tests/shim/run.mjs [-e NAME=value]... [--summary-export FILE] [--no-usage-report] [--verbose] SCRIPT.js
//
// Exit codes: 0 all good; 1 a check failed (stricter than k6, which only fails on thresholds);
// 99 a threshold was crossed (as k6); 107 the script threw (as k6's script exception); 108 the script
// called exec.test.abort() (as k6).
// The shim never sends anything anywhere but BASE_URL; it accepts k6's --no-usage-report so that a k6
// command line can be run through it unchanged.
// Checks are counted as k6 counts them: every evaluation of a check is one pass or one fail (k6's
// `checks` rate and its summary's "N out of M"); the number of distinct checks is printed beside it.
// --summary-export writes k6's layout (summary.mjs), setup()'s return value included as `setup_data`.
// Stages, VUs and durations are ignored: this runs the scripts' logic and checks, it does not generate load.
import { readFileSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

register('./hooks.mjs', import.meta.url);

const { state } = await import('./modules/state.mjs');
const { closeBridge } = await import('./modules/bridge.mjs');
const { evaluateThresholds, aggregateOf } = await import('./thresholds.mjs');
const { summaryExport: summaryExportJson } = await import('./summary.mjs');
const { AbortTest } = await import('./modules/execution.mjs');

/** @param {string} message @returns {never} */
function usage(message) {
  console.error(`${message}\nusage: node load-tests/shim/run.mjs [-e NAME=value]... [--summary-export FILE] [--no-usage-report] [--verbose] SCRIPT.js`);
  process.exit(2);
}

/** @type {Record<string, string>} */
const cliEnv = {};
let script;
let summaryExport;
let verbose = false;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 1) {
  const arg = args[i];
  if (arg === '-e' || arg === '--env') {
    const pair = args[++i] ?? usage('-e needs NAME=value');
    const eq = pair.indexOf('=');
    if (eq < 1) usage(`bad -e ${pair}`);
    cliEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
  } else if (arg === '--verbose' || arg === '-v') {
    verbose = true;
  } else if (arg === '--no-usage-report') {
    // k6's switch; the shim has no usage report to turn off.
  } else if (arg === '--summary-export') {
    summaryExport = args[++i] ?? usage('--summary-export needs a file');
  } else if (arg.startsWith('-')) {
    usage(`unknown option ${arg}`);
  } else if (script === undefined) {
    script = arg;
  } else {
    usage(`one script only (got ${script} and ${arg})`);
  }
}
if (!script) usage('no script given');
const scriptPath = resolve(script);

// k6's globals (k6 run includes the system environment in __ENV by default).
const baseEnv = { ...Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)), ...cliEnv };
globalThis.__ENV = { ...baseEnv };
globalThis.__VU = 0;
globalThis.__ITER = 0;
globalThis.open = (path, mode) => {
  const file = resolve(dirname(scriptPath), path);
  return mode === 'b' ? readFileSync(file) : readFileSync(file, 'utf8');
};

/** @param {string} name */
function metric(name) {
  const found = state.metrics.get(name);
  if (!found) throw new Error(`built-in metric ${name} missing`);
  return found;
}

/** @type {string[]} */
const problems = [];
let exitCode = 0;

/** Runs fn in a named phase; an exception is reported and marks the run as failed. */
function phase(name, fn) {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    problems.push(`${name}: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    exitCode = exitCode || (error instanceof AbortTest ? 108 : 107);
    return { ok: false };
  }
}

let mod;
try {
  mod = await import(pathToFileURL(scriptPath).href);
} catch (error) {
  console.error(`the script failed to load: ${error instanceof Error ? error.stack : error}`);
  await closeBridge();
  process.exit(107);
}

const options = mod.options ?? {};
const scenarios = options.scenarios && Object.keys(options.scenarios).length > 0
  ? Object.entries(options.scenarios).map(([name, s]) => ({ name, exec: s.exec ?? 'default', env: s.env ?? {} }))
  : [{ name: 'default', exec: 'default', env: {} }];
const started = Date.now();

let data;
if (typeof mod.setup === 'function') {
  state.groupPath = '::setup';
  const result = phase('setup', () => mod.setup());
  state.groupPath = '';
  data = result.ok && result.value !== undefined ? JSON.stringify(result.value) : undefined;
  if (!result.ok) data = 'SETUP_FAILED';
}

if (data !== 'SETUP_FAILED') {
  for (const scenario of scenarios) {
    const fn = mod[scenario.exec];
    if (typeof fn !== 'function') {
      problems.push(`scenario ${scenario.name}: the script exports no function "${scenario.exec}"`);
      exitCode = exitCode || 107;
      continue;
    }
    state.scenario = scenario.name;
    state.vu = 1;
    state.iteration = 0;
    globalThis.__VU = 1;
    globalThis.__ITER = 0;
    globalThis.__ENV = { ...baseEnv, ...scenario.env };
    const t0 = performance.now();
    const result = phase(`scenario ${scenario.name} (${scenario.exec})`, () => fn(data === undefined ? undefined : JSON.parse(data)));
    if (result.ok) {
      metric('iterations').samples.push({ value: 1, tags: { scenario: scenario.name } });
      metric('iteration_duration').samples.push({ value: performance.now() - t0, tags: { scenario: scenario.name } });
    }
  }
  globalThis.__ENV = { ...baseEnv };
  if (typeof mod.teardown === 'function') {
    state.scenario = 'default';
    state.groupPath = '::teardown';
    phase('teardown', () => mod.teardown(data === undefined ? undefined : JSON.parse(data)));
    state.groupPath = '';
  }
}
await closeBridge();
const elapsedSeconds = (Date.now() - started) / 1000;

// Checks: k6 counts evaluations (a check run three times is three passes); failed ones are listed by name.
const checkLines = [];
let failedChecks = 0;
let passedEvaluations = 0;
let failedEvaluations = 0;
for (const [key, counts] of state.checks) {
  const ok = counts.fails === 0;
  if (!ok) failedChecks += 1;
  passedEvaluations += counts.passes;
  failedEvaluations += counts.fails;
  const [group, name] = [key.slice(0, key.lastIndexOf('::')), key.slice(key.lastIndexOf('::') + 2)];
  if (ok && !verbose) continue;
  checkLines.push(`  ${ok ? '✓' : '✗'} ${name}${group ? `  [${group.replace(/^::/, '').replace(/::/g, ' › ')}]` : ''}` +
    `${ok ? '' : `  (${counts.fails} of ${counts.passes + counts.fails} failed)`}`);
}
if (failedChecks > 0) exitCode = exitCode || 1;

// Thresholds
let thresholdResults = [];
try {
  thresholdResults = evaluateThresholds(options.thresholds ?? {}, state.metrics, elapsedSeconds);
} catch (error) {
  problems.push(`thresholds: ${error instanceof Error ? error.message : String(error)}`);
  exitCode = exitCode || 107;
}
if (thresholdResults.some((t) => !t.passed) && (exitCode === 0 || exitCode === 1)) exitCode = 99;

// Per-operation latency
const byName = new Map();
for (const sample of metric('http_req_duration').samples) {
  const list = byName.get(sample.tags.name) ?? [];
  list.push(sample.value);
  byName.set(sample.tags.name, list);
}
const statuses = new Map();
for (const sample of metric('http_reqs').samples) {
  const key = `${sample.tags.name} ${sample.tags.status}`;
  statuses.set(key, (statuses.get(key) ?? 0) + 1);
}

const out = [];
out.push(`k6 shim: ${script} (setup, one iteration per scenario, teardown) in ${elapsedSeconds.toFixed(1)} s`);
out.push(`checks: ${passedEvaluations} of ${passedEvaluations + failedEvaluations} passed (as k6 counts: every evaluation; ` +
  `${state.checks.size - failedChecks} of ${state.checks.size} distinct checks without a failure${verbose ? '' : '; failed ones listed, --verbose lists all'})`);
out.push(...checkLines);
out.push(`thresholds:`);
for (const t of thresholdResults) out.push(`  ${t.passed ? '✓' : '✗'} ${t.key} ${t.expression} (actual ${Number(t.actual.toFixed(3))})`);
out.push('requests (name status: count):');
for (const [key, count] of [...statuses].sort()) out.push(`  ${key}: ${count}`);
out.push('http_req_duration by name (ms): count avg p95 max');
for (const [name, values] of [...byName].sort()) {
  const f = (agg) => aggregateOf('trend', values, agg, elapsedSeconds).toFixed(1);
  out.push(`  ${name}: ${values.length} ${f('avg')} ${f('p(95)')} ${f('max')}`);
}
for (const [name, metric] of state.metrics) {
  if (metric.type === 'counter' && !name.startsWith('http_') && !name.startsWith('data_') && name !== 'iterations') {
    out.push(`${name}: ${aggregateOf('counter', metric.samples.map((s) => s.value), 'count', elapsedSeconds)}`);
  }
}
if (problems.length) out.push('errors:', ...problems.map((p) => `  ${p}`));
out.push(`exit code ${exitCode}`);
console.log(out.join('\n'));

if (summaryExport) {
  writeFileSync(summaryExport, summaryExportJson({
    metrics: state.metrics,
    checks: state.checks,
    thresholdResults,
    setupData: data,
    elapsedSeconds,
    shim: { script, exitCode, problems },
  }));
}
process.exit(exitCode);
