// The shim's `k6/execution` module: one VU, one iteration per scenario.
import { state } from './state.mjs';

export class AbortTest extends Error {
  /** @param {string} reason */
  constructor(reason) {
    super(`test aborted: ${reason}`);
    this.name = 'AbortTest';
  }
}

export const vu = {
  get idInTest() { return state.vu; },
  get idInInstance() { return state.vu; },
  get iterationInInstance() { return state.iteration; },
  get iterationInScenario() { return state.iteration; },
  tags: {},
  metrics: { tags: {}, metadata: {} },
};

export const scenario = {
  get name() { return state.scenario; },
  executor: 'shared-iterations',
  get startTime() { return state.startedAt; },
  progress: 0,
  get iterationInInstance() { return state.iteration; },
  get iterationInTest() { return state.iteration; },
};

export const instance = {
  iterationsInterrupted: 0,
  get iterationsCompleted() { return state.iteration; },
  vusActive: 1,
  vusInitialized: 1,
  get currentTestRunDuration() { return Date.now() - state.startedAt; },
};

export const test = {
  /** @param {string} [reason] */
  abort(reason = '') { throw new AbortTest(reason); },
  options: {},
};

export default { vu, scenario, instance, test };
