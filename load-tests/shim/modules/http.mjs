// The shim's `k6/http` module: request, get, post, put, patch, del, head, options, batch,
// expectedStatuses, setResponseCallback; Response with status, body, headers (names canonicalised as
// k6/Go do), timings, json(). Requests really go out (synchronously, through bridge.mjs).
import { sendSync } from './bridge.mjs';
import { addSample, state } from './state.mjs';

const DEFAULT_TIMEOUT_MS = 60_000;

/** Go's http.CanonicalHeaderKey, which k6 applies to response header names. @param {string} name */
function canonical(name) {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash, letter) => dash + letter.toUpperCase());
}

/** @param {string | number | undefined} timeout */
function timeoutMs(timeout) {
  if (timeout === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof timeout === 'number') return timeout;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(timeout.trim());
  if (!match) throw new Error(`invalid timeout: ${timeout}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 'ms'];
  return Number(match[1]) * unit;
}

/**
 * Callback that marks a response as expected (not failed), as k6's http.expectedStatuses.
 * @param  {...(number | { min: number, max: number })} statuses
 */
export function expectedStatuses(...statuses) {
  const accepts = (/** @type {number} */ status) => statuses.some((s) =>
    typeof s === 'number' ? s === status : status >= s.min && status <= s.max);
  return Object.assign((/** @type {any} */ response) => accepts(response.status), { __k6ExpectedStatuses: true });
}

/** @param {(response: any) => boolean} callback */
export function setResponseCallback(callback) {
  state.responseCallback = callback;
}

class Response {
  /** @param {any} raw @param {any} request @param {string} responseType */
  constructor(raw, request, responseType) {
    /** @type {Record<string, string>} */
    const headers = {};
    for (let i = 0; i < raw.headers.length; i += 2) {
      const name = canonical(raw.headers[i]);
      headers[name] = headers[name] === undefined ? raw.headers[i + 1] : `${headers[name]}, ${raw.headers[i + 1]}`;
    }
    this.status = raw.status;
    this.status_text = raw.status ? `${raw.status} ${raw.statusText}` : '';
    this.proto = raw.proto;
    this.url = raw.url;
    this.headers = headers;
    this.body = responseType === 'none' || raw.body === null ? null : raw.body;
    this.timings = raw.timings;
    this.error = raw.error;
    this.error_code = raw.errorCode;
    this.cookies = {};
    this.remote_ip = '';
    this.remote_port = 0;
    this.request = request;
  }

  /** @param {string} [selector] a dotted path (a subset of k6's gjson selectors) */
  json(selector) {
    if (typeof this.body !== 'string') throw new Error('the response has no body');
    let value = JSON.parse(this.body);
    if (selector) for (const part of selector.split('.')) value = value == null ? undefined : value[part];
    return value;
  }

  html() {
    throw new Error('Response.html() is not provided by the k6 shim; parse the body text instead');
  }

  submitForm() {
    throw new Error('Response.submitForm() is not provided by the k6 shim');
  }

  clickLink() {
    throw new Error('Response.clickLink() is not provided by the k6 shim');
  }
}

/** Normalises one request the way k6 does (form bodies, default headers, tags). */
function prepare(method, url, body, params = {}) {
  const headers = { 'User-Agent': 'k6-shim (vanish load-tests)', ...(params.headers ?? {}) };
  const hasHeader = (/** @type {string} */ name) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  let payload = body;
  if (payload !== null && payload !== undefined && typeof payload === 'object' && !(payload instanceof ArrayBuffer)) {
    payload = new URLSearchParams(Object.entries(payload).map(([k, v]) => /** @type {[string, string]} */ ([k, String(v)]))).toString();
    if (!hasHeader('content-type')) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  } else if (payload instanceof ArrayBuffer) {
    payload = Buffer.from(payload).toString('latin1');
  }
  const urlText = String(url);
  return {
    wire: {
      method: method.toUpperCase(), url: urlText, headers, body: payload ?? null,
      timeoutMs: timeoutMs(params.timeout), maxRedirects: params.redirects ?? 10, binary: params.responseType === 'binary',
    },
    tags: { name: urlText, ...(params.tags ?? {}) },
    responseCallback: params.responseCallback === undefined ? state.responseCallback : params.responseCallback,
    responseType: params.responseType ?? 'text',
  };
}

function record(prepared, raw) {
  const response = new Response(raw, { method: prepared.wire.method, url: prepared.wire.url, headers: prepared.wire.headers, body: prepared.wire.body ?? '' }, prepared.responseType);
  const expected = prepared.responseCallback === null ? true : Boolean(prepared.responseCallback(response));
  const tags = {
    ...prepared.tags, method: prepared.wire.method, status: String(raw.status), url: prepared.wire.url,
    expected_response: String(expected),
  };
  if (raw.error) tags.error = raw.error;
  addSample('http_reqs', 1, tags);
  // responseCallback null: k6 emits no http_req_failed sample for the request
  if (prepared.responseCallback !== null) addSample('http_req_failed', expected ? 0 : 1, tags);
  // k6 records the timings of every answer; expected_response tells them apart
  addSample('http_req_duration', raw.timings.duration, tags);
  addSample('http_req_waiting', raw.timings.waiting, tags);
  addSample('http_req_sending', raw.timings.sending, tags);
  addSample('http_req_receiving', raw.timings.receiving, tags);
  addSample('http_req_connecting', raw.timings.connecting, tags);
  addSample('http_req_blocked', raw.timings.blocked, tags);
  addSample('data_received', raw.body ? Buffer.byteLength(raw.body) : 0, tags);
  addSample('data_sent', prepared.wire.body ? Buffer.byteLength(prepared.wire.body) : 0, tags);
  if (raw.error && process.env.K6_SHIM_VERBOSE) console.warn(`request ${prepared.wire.method} failed: ${raw.error}`);
  return response;
}

export function request(method, url, body, params) {
  const prepared = prepare(method, url, body, params ?? undefined);
  const [raw] = sendSync([prepared.wire]);
  return record(prepared, raw);
}

export const get = (url, params) => request('GET', url, null, params);
export const head = (url, params) => request('HEAD', url, null, params);
export const post = (url, body, params) => request('POST', url, body, params);
export const put = (url, body, params) => request('PUT', url, body, params);
export const patch = (url, body, params) => request('PATCH', url, body, params);
export const del = (url, body, params) => request('DELETE', url, body, params);
export const options = (url, body, params) => request('OPTIONS', url, body, params);

/** @param {any} item */
function fromBatchItem(item) {
  if (typeof item === 'string') return prepare('GET', item, null, undefined);
  if (Array.isArray(item)) return prepare(item[0], item[1], item[2] ?? null, item[3] ?? undefined);
  return prepare(item.method ?? 'GET', item.url, item.body ?? null, item.params ?? undefined);
}

/** @param {any[] | Record<string, any>} requests */
export function batch(requests) {
  const keys = Array.isArray(requests) ? requests.map((_r, i) => i) : Object.keys(requests);
  const prepared = keys.map((key) => fromBatchItem(/** @type {any} */ (requests)[key]));
  const raws = sendSync(prepared.map((p) => p.wire));
  const responses = prepared.map((p, i) => record(p, raws[i]));
  if (Array.isArray(requests)) return responses;
  return Object.fromEntries(keys.map((key, i) => [key, responses[i]]));
}

export const TLS_1_2 = 'tls1.2';
export const TLS_1_3 = 'tls1.3';
export const OCSP_STATUS_GOOD = 'good';

export default {
  request, get, head, post, put, patch, del, options, batch, expectedStatuses, setResponseCallback,
  TLS_1_2, TLS_1_3, OCSP_STATUS_GOOD,
};
