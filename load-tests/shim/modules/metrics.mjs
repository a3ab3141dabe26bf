// The shim's `k6/metrics` module: custom metrics whose samples feed the thresholds and the summary.
import { addSample, defineMetric } from './state.mjs';

class Metric {
  /**
   * @param {string} name
   * @param {'counter'|'gauge'|'rate'|'trend'} type
   * @param {boolean} [isTime]
   */
  constructor(name, type, isTime = false) {
    this.name = name;
    defineMetric(name, type, isTime);
  }

  /**
   * @param {number | boolean} value
   * @param {Record<string, string>} [tags]
   */
  add(value, tags) {
    addSample(this.name, Number(value), tags);
  }
}

export class Counter extends Metric {
  /** @param {string} name */
  constructor(name) { super(name, 'counter'); }
}
export class Gauge extends Metric {
  /** @param {string} name @param {boolean} [isTime] */
  constructor(name, isTime) { super(name, 'gauge', isTime); }
}
export class Rate extends Metric {
  /** @param {string} name */
  constructor(name) { super(name, 'rate'); }
}
export class Trend extends Metric {
  /** @param {string} name @param {boolean} [isTime] */
  constructor(name, isTime) { super(name, 'trend', isTime); }
}

export default { Counter, Gauge, Rate, Trend };
