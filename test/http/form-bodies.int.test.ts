import { randomUUID } from 'node:crypto';
import { rawRequest, startTopology, type Door, type RawAnswer, type Topology } from './support/topology';

// Issue 32 (outside review, Medium): a form the body parser refuses (too many fields, a charset it does not
// read, a compressed body, a receipt form over 4 KB) is the client's mistake. On every page that takes a
// form (POST /, POST /{uuid}, POST /r/{id}), directly and through the gateway, it answers the pages' own
// error page (HTML, DECISIONS 8 headers) with 400, or 413 where it is a size, never a 5xx; nothing is
// logged at error level and no 5xx is counted in any service's metrics.

jest.setTimeout(120_000);

const FORM = 'application/x-www-form-urlencoded';

interface Refusal {
  name: string;
  path: () => string;
  headers: Record<string, string>;
  body: string;
  status: number;
}

const fields = (count: number) => Array.from({ length: count }, (_, i) => `f${i}=x`).join('&');

const REFUSALS: Refusal[] = [
  { name: 'too many fields on the create form', path: () => '/', headers: { 'Content-Type': FORM }, body: fields(40), status: 413 },
  { name: 'too many fields on the reveal form', path: () => `/${randomUUID()}`, headers: { 'Content-Type': FORM }, body: fields(40), status: 413 },
  { name: 'too many fields on the end-now form', path: () => `/r/${'a'.repeat(43)}`, headers: { 'Content-Type': FORM }, body: fields(8), status: 413 },
  { name: 'an unsupported charset on the create form', path: () => '/', headers: { 'Content-Type': `${FORM}; charset=utf-16` }, body: 'content=x', status: 400 },
  { name: 'an unsupported charset on the reveal form', path: () => `/${randomUUID()}`, headers: { 'Content-Type': `${FORM}; charset=koi8-r` }, body: 'x=1', status: 400 },
  { name: 'an unsupported charset on the end-now form', path: () => `/r/${'a'.repeat(43)}`, headers: { 'Content-Type': `${FORM}; charset=shift_jis` }, body: 'x=1', status: 400 },
  { name: 'an end-now form over 4 KB', path: () => `/r/${'a'.repeat(43)}`, headers: { 'Content-Type': FORM }, body: `form_token=${'x'.repeat(5000)}`, status: 413 },
  { name: 'a create form over 128 KB', path: () => '/', headers: { 'Content-Type': FORM }, body: `content=${'x'.repeat(129 * 1024)}`, status: 413 },
];

function expectPageHeaders(answer: RawAnswer): void {
  expect(answer.headers['content-type']).toMatch(/^text\/html/);
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['referrer-policy']).toBe('no-referrer');
  expect(answer.headers['x-frame-options']).toBe('DENY');
  expect(answer.headers['content-security-policy']).toMatch(/default-src 'none'/);
  expect(answer.headers['permissions-policy']).toMatch(/camera=\(\)/);
}

describe('form bodies the body parser refuses, on the real HTTP servers', () => {
  let topology: Topology;

  beforeAll(async () => {
    topology = await startTopology();
  });
  afterAll(async () => {
    await topology?.stop();
  });

  async function serverErrorsCounted(door: Door): Promise<string[]> {
    const metrics = await rawRequest(topology.adminPorts[door], 'GET', '/metrics');
    return metrics.text.split('\n').filter((line) => /_http_request_duration_seconds_count\{.*status="5\d\d"/.test(line));
  }

  describe.each([['notes'], ['gateway']] as const)('sent to %s', (door) => {
    it.each(REFUSALS.map((refusal) => [refusal.name, refusal] as const))('when %s is posted, then the pages\' error page with a 4xx, no error logged, no 5xx counted', async (_name, refusal) => {
      const from = topology.lines.length;
      const answer = await rawRequest(topology.ports[door], 'POST', refusal.path(), { Accept: 'text/html', ...refusal.headers }, refusal.body);
      expect({ status: answer.status, text: answer.status >= 500 ? answer.text.slice(0, 200) : '' }).toEqual({ status: refusal.status, text: '' });
      expectPageHeaders(answer);
      expect(answer.text).toMatch(/<!doctype html>/i);
      expect(answer.text).not.toMatch(/too many parameters|unsupported charset|request entity too large|PayloadTooLargeError|node_modules/i);
      const written = topology.lines.slice(from);
      expect(written.filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
      expect(await serverErrorsCounted('notes')).toEqual([]);
      expect(await serverErrorsCounted('gateway')).toEqual([]);
    });
  });

  it('when the notes service refuses a compressed form, then 400 with the error page (the gateway refuses it before)', async () => {
    for (const door of ['notes', 'gateway'] as const) {
      const answer = await rawRequest(topology.ports[door], 'POST', `/${randomUUID()}`, { Accept: 'text/html', 'Content-Type': FORM, 'Content-Encoding': 'gzip' }, 'x=1');
      expect({ door, status: answer.status }).toEqual({ door, status: 400 });
      expectPageHeaders(answer);
    }
    expect(topology.lines.filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
  });
});
