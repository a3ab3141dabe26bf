// Threshold evaluation as k6 does it: `metric{tag:value,...}` selects samples, an expression such as
// `p(95)<500`, `rate<0.01`, `count>0`, `avg<=200`, `value==1` compares one aggregate.

/**
 * @param {string} key e.g. `http_req_duration{name:create,method:POST}`
 * @returns {{ metric: string, tags: Record<string, string> }}
 */
export function parseThresholdKey(key) {
  const match = /^([^{]+)(?:\{(.*)\})?$/.exec(key.trim());
  if (!match) throw new Error(`invalid threshold key: ${key}`);
  /** @type {Record<string, string>} */
  const tags = {};
  for (const pair of (match[2] ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const colon = pair.indexOf(':');
    if (colon < 0) throw new Error(`invalid tag filter "${pair}" in threshold ${key}`);
    tags[pair.slice(0, colon).trim()] = pair.slice(colon + 1).trim().replace(/^["']|["']$/g, '');
  }
  return { metric: match[1].trim(), tags };
}

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

/**
 * @param {'counter'|'gauge'|'rate'|'trend'} type
 * @param {number[]} values
 * @param {string} aggregate
 * @param {number} elapsedSeconds
 */
export function aggregateOf(type, values, aggregate, elapsedSeconds) {
  const sum = values.reduce((a, b) => a + b, 0);
  const sorted = [...values].sort((a, b) => a - b);
  const p = /^p\((\d+(?:\.\d+)?)\)$/.exec(aggregate);
  if (type === 'trend') {
    if (p) return percentile(sorted, Number(p[1]));
    switch (aggregate) {
      case 'avg': return values.length ? sum / values.length : 0;
      case 'min': return sorted[0] ?? 0;
      case 'max': return sorted[sorted.length - 1] ?? 0;
      case 'med': return percentile(sorted, 50);
      case 'count': return values.length;
      default: break;
    }
  } else if (type === 'rate' && aggregate === 'rate') {
    return values.length ? values.filter((v) => v !== 0).length / values.length : 0;
  } else if (type === 'counter') {
    if (aggregate === 'count') return sum;
    if (aggregate === 'rate') return elapsedSeconds > 0 ? sum / elapsedSeconds : 0;
  } else if (type === 'gauge') {
    if (aggregate === 'value') return values[values.length - 1] ?? 0;
    if (aggregate === 'min') return sorted[0] ?? 0;
    if (aggregate === 'max') return sorted[sorted.length - 1] ?? 0;
  }
  throw new Error(`aggregation "${aggregate}" does not apply to a ${type} metric`);
}

/**
 * @param {string} expression e.g. `p(95)<500`
 */
export function parseExpression(expression) {
  const match = /^\s*(avg|min|max|med|count|rate|value|p\(\d+(?:\.\d+)?\))\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(expression);
  if (!match) throw new Error(`invalid threshold expression: ${expression}`);
  return { aggregate: match[1], operator: match[2], bound: Number(match[3]) };
}

/** @param {number} actual @param {string} operator @param {number} bound */
function compare(actual, operator, bound) {
  switch (operator) {
    case '<': return actual < bound;
    case '<=': return actual <= bound;
    case '>': return actual > bound;
    case '>=': return actual >= bound;
    case '==': case '===': return actual === bound;
    case '!=': return actual !== bound;
    default: throw new Error(`unknown operator ${operator}`);
  }
}

/**
 * @param {Record<string, Array<string | { threshold: string }>>} thresholds
 * @param {Map<string, { type: any, samples: { value: number, tags: Record<string, string> }[] }>} metrics
 * @param {number} elapsedSeconds
 * @returns {{ key: string, expression: string, actual: number, passed: boolean }[]}
 */
export function evaluateThresholds(thresholds, metrics, elapsedSeconds) {
  const results = [];
  for (const [key, list] of Object.entries(thresholds ?? {})) {
    const { metric: name, tags } = parseThresholdKey(key);
    const metric = metrics.get(name);
    if (!metric) throw new Error(`threshold on unknown metric "${name}"`);
    const values = metric.samples
      .filter((s) => Object.entries(tags).every(([tag, value]) => s.tags[tag] === value))
      .map((s) => s.value);
    for (const entry of list) {
      const expression = typeof entry === 'string' ? entry : entry.threshold;
      const { aggregate, operator, bound } = parseExpression(expression);
      const actual = aggregateOf(metric.type, values, aggregate, elapsedSeconds);
      results.push({ key, expression, actual, passed: compare(actual, operator, bound) });
    }
  }
  return results;
}
