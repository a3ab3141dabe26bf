import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { rawRequest, startTopology, type Door, type RawAnswer, type Topology } from './support/topology';

// Issue 19, items 1, 7 and 12: whatever a client puts in a path, every port of every service (and the
// gateway in front of them) answers below 500, in the shape of what was asked for (an HTML page for
// pages, the SPEC 7 body for /api and the other JSON ports), with the DECISIONS 8 headers, without a
// trace of its internals, and without writing the path (a note uuid, an unsubscribe token) to a log.

jest.setTimeout(300_000);

const DOORS: readonly Door[] = ['gateway', 'notes', 'stats', 'mailer'];
type Target = { door: Door; admin: boolean };

/** Printable ASCII: what Node's HTTP parser lets through to the app (anything else it answers 400 itself). */
const PRINTABLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => c !== '#');
const MALFORMED_ESCAPES = ['%', '%e', '%E0', '%ff%fe', '%c0%af', '%ed%a0%80', '%e0%a4', '%f0%9f%98', '%80', '%zz', '%%', '%2', '%u00e9', '%00', '%2e%2e', '%2f', '%5c'];

const segment = fc.oneof(
  fc.constantFrom(...MALFORMED_ESCAPES),
  fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, '0')}`),
  fc.stringOf(fc.constantFrom(...PRINTABLE), { maxLength: 12 }),
  fc.uuid().map((uuid) => uuid.toLowerCase()),
  fc.tuple(fc.uuid(), fc.constantFrom(...MALFORMED_ESCAPES)).map(([uuid, bad]) => `${uuid.toLowerCase()}${bad}`),
  fc.constantFrom('', '.', '..', 'api', 'view', 'unsubscribe', 'assets', 'app.css', 'create.php', 'stats.php', 'openapi.json', 'metrics', 'healthz', 'readyz', 'u1.x.y'),
);
const target = fc
  .tuple(
    fc.constantFrom('', '/api', '/api/view', '/unsubscribe', '/assets', '/', '//'),
    fc.array(segment, { minLength: 0, maxLength: 4 }),
    fc.constantFrom('', '/', '.php', '?x=%ff', '?a=1&b', '.php?uuid=%E0'),
  )
  .map(([prefix, segments, suffix]) => `${prefix}/${segments.join('/')}${suffix}`.replace(/^([^/])/, '/$1'));
/** Also the request-target forms that are not a path: absolute-form (as to a proxy) and asterisk-form. */
const anyTarget = fc.oneof(
  { weight: 8, arbitrary: target },
  { weight: 1, arbitrary: target.map((path) => `http://vanish.test${path}`) },
  { weight: 1, arbitrary: fc.constant('*') },
);
const method = fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE');

const STACK_OR_FILES = /URIError|Failed to decode|node_modules|\/work\/|\/tmp\/|\bat \S+ \(|Error:|Cannot (GET|POST|HEAD|DELETE)/;

function pathnameOf(requestTarget: string): string {
  return requestTarget.replace(/^http:\/\/[^/]+/, '').split('?')[0]!;
}

/** What the answer to an error must be: an HTML page for pages, the SPEC 7 body otherwise. */
function expectedShape(at: Target, requestTarget: string): 'html' | 'json' {
  if (at.admin || at.door === 'stats') return 'json';
  const path = pathnameOf(requestTarget);
  if (at.door === 'mailer') return /^\/unsubscribe\/[^/]+\/?$/.test(path) ? 'html' : 'json';
  return path === '/api' || path.startsWith('/api/') ? 'json' : 'html';
}

function expectSecurityHeaders(answer: RawAnswer): void {
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['referrer-policy']).toBe('no-referrer');
  expect(answer.headers['cross-origin-opener-policy']).toBe('same-origin');
  expect(answer.headers['cross-origin-resource-policy']).toBe('same-origin');
  expect(answer.headers['x-xss-protection']).toBe('0');
  expect(answer.headers['permissions-policy']).toMatch(/camera=\(\)/);
}

function expectWellFormed(at: Target, verb: string, requestTarget: string, answer: RawAnswer): void {
  const where = `${verb} ${requestTarget} on ${at.door}${at.admin ? ' admin' : ''}`;
  if (answer.status >= 500) throw new Error(`${where} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  expectSecurityHeaders(answer);
  if (STACK_OR_FILES.test(answer.text)) throw new Error(`${where} showed internals: ${answer.text.slice(0, 300)}`);
  if (answer.status < 400 || verb === 'HEAD') return;
  const contentType = answer.headers['content-type'] ?? '';
  if (expectedShape(at, requestTarget) === 'html') {
    if (!contentType.startsWith('text/html')) throw new Error(`${where} answered ${answer.status} as ${contentType}, not HTML`);
    return;
  }
  if (!contentType.startsWith('application/json')) throw new Error(`${where} answered ${answer.status} as ${contentType}, not JSON`);
  expect(JSON.parse(answer.text)).toEqual({ error: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/), details: { parameter: null, message: expect.any(String) } });
}

describe('odd and malformed paths on every port of every service, direct and through the gateway', () => {
  let topology: Topology;

  beforeAll(async () => {
    topology = await startTopology();
  });
  afterAll(async () => {
    await topology?.stop();
  });

  const portOf = (at: Target) => (at.admin ? topology.adminPorts : topology.ports)[at.door];
  const ask = (at: Target, verb: string, requestTarget: string) =>
    rawRequest(portOf(at), verb, requestTarget, { Accept: 'text/html,application/json;q=0.9', ...(verb === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) });

  it.each([
    ['gateway', '/%ff%fe'],
    ['notes', '/%ff%fe'],
    ['gateway', '/%E0%A4'],
    ['notes', '/%c0%af'],
    ['gateway', '/unsubscribe/%E0'],
    ['mailer', '/unsubscribe/%E0'],
  ] as const)('when %s is asked for the page %s, then 404 as an HTML page', async (door, path) => {
    for (const verb of ['GET', 'POST']) {
      const answer = await ask({ door, admin: false }, verb, path);
      expect({ verb, status: answer.status }).toEqual({ verb, status: 404 });
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expectWellFormed({ door, admin: false }, verb, path, answer);
    }
  });

  it.each([['gateway'], ['notes']] as const)('when %s is asked for /api/view/%%E0%%A4.php, then 404 NOTE_NOT_FOUND in the SPEC 7 body', async (door) => {
    const answer = await ask({ door, admin: false }, 'GET', '/api/view/%E0%A4.php');
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'NOTE_NOT_FOUND' });
  });

  it('when a note uuid or an unsubscribe token is followed by a bad escape, then 404, and neither reaches any log line', async () => {
    const uuid = randomUUID();
    const token = topology.unsubscribeToken();
    const from = topology.lines.length;
    // Every character escaped: still a uuid to whoever reads the log.
    const escapedUuid = [...uuid].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const requests: Array<[Door, string]> = [];
    for (const door of ['gateway', 'notes'] as const) {
      requests.push(
        [door, `/${uuid}%E0`], [door, `/${uuid}%E0?x=1`], [door, `/api/view/${uuid}%E0.php`], [door, `/api/view/${uuid}%ff%fe.php`],
        [door, `/${uuid}%E0/`], [door, `/${uuid}%E0/x`], [door, `/x/${uuid}%E0`], [door, `/x/${escapedUuid}%E0`], [door, `/${escapedUuid}/%E0`],
      );
    }
    for (const door of ['gateway', 'mailer'] as const) {
      requests.push([door, `/unsubscribe/${token}%E0`], [door, `/unsubscribe/%E0${token}`], [door, `/unsubscribe/${token}%E0/x`], [door, `/unsubscribe/${token}%E0//`]);
    }
    const answers: Array<{ door: Door; verb: string; path: string; status: number }> = [];
    for (const [door, path] of requests) {
      for (const verb of path.startsWith('/api/') ? ['GET', 'HEAD'] : ['GET', 'POST', 'HEAD']) {
        answers.push({ door, verb, path, status: (await ask({ door, admin: false }, verb, path)).status });
      }
    }
    const written = topology.lines.slice(from);
    expect(written.length).toBeGreaterThan(0); // the access logs did write their lines
    const [, tokenBody, tokenTag] = token.split('.');
    for (const secret of [uuid, uuid.replace(/-/g, ''), escapedUuid, token, tokenBody!, tokenTag!]) {
      expect(written.filter((line) => line.includes(secret))).toEqual([]);
    }
    expect(written.filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
    expect(answers.filter((answer) => answer.status !== 404)).toEqual([]);
  });

  it('when generated paths of every kind are asked for on every port, then never a 5xx, always the right shape and headers, and no error in the logs', async () => {
    const targets: Target[] = DOORS.flatMap((door) => [{ door, admin: false }, { door, admin: true }]);
    const from = topology.lines.length;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), method, anyTarget, async (at, verb, requestTarget) => {
        const answer = await ask(at, verb, requestTarget);
        expectWellFormed(at, verb, requestTarget, answer);
      }),
      { numRuns: 2000, endOnFailure: true },
    );
    expect(topology.lines.slice(from).filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
  });
});
