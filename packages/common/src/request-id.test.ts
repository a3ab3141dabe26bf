import type { Request, Response } from 'express';
import { isAcceptableRequestId, newRequestId, requestId } from './http';

/** Runs the middleware on a bare request/response pair (no socket): what it keeps, sets and forwards. */
function idFor(incoming: string | undefined): { answered: string | undefined; forwarded: unknown; logged: unknown } {
  const headers: Record<string, string | undefined> = { 'x-request-id': incoming };
  const answerHeaders: Record<string, string> = {};
  const req = { headers, header: (name: string) => headers[name.toLowerCase()] } as unknown as Request;
  const res = { locals: {} as Record<string, unknown>, setHeader: (name: string, value: string) => { answerHeaders[name] = value; } } as unknown as Response;
  requestId(req, res, () => undefined);
  return { answered: answerHeaders['X-Request-Id'], forwarded: headers['x-request-id'], logged: res.locals.requestId };
}

describe('request id', () => {
  it.each([
    ['a', 'one character'],
    ['abc-123-def-456', 'letters, digits and dashes'],
    ['edge.proxy_7-Q', 'dots and underscores'],
    ['x'.repeat(64), '64 characters'],
    ['0123456789abcdef0123456789abcde', '31 hex digits'],
  ])('when a client sends %s (%s), then it is kept, answered and forwarded', (incoming) => {
    expect(idFor(incoming)).toEqual({ answered: incoming, forwarded: incoming, logged: incoming });
  });

  it.each([
    ['3f2c8a1e-9b7d-4c2e-8f10-5a6b7c8d9e0f', 'a note id'],
    ['3F2C8A1E-9B7D-4C2E-8F10-5A6B7C8D9E0F', 'a note id in capitals'],
    ['req-3f2c8a1e-9b7d-4c2e-8f10-5a6b7c8d9e0f-1', 'a note id inside'],
    ['00000000-0000-0000-0000-000000000000', 'any 8-4-4-4-12 hex shape, not only version 4'],
    ['3f2c8a1e9b7d4c2e8f105a6b7c8d9e0f', 'a note id without its dashes'],
    ['3f2c8a1e.9b7d_4c2e.8f10_5a6b7c8d9e0f', 'a note id with other separators'],
    ['x'.repeat(65), '65 characters'],
    ['', 'nothing'],
    ['bad id\twith spaces', 'white space'],
    ['a:b', 'a colon'],
    ['id/../etc', 'a slash'],
    ['ﬁ-ligature', 'non-ASCII'],
  ])('when a client sends %j (%s), then a fresh id replaces it everywhere', (incoming) => {
    const { answered, forwarded, logged } = idFor(incoming);
    expect(answered).not.toBe(incoming);
    expect(isAcceptableRequestId(answered)).toBe(true);
    expect(forwarded).toBe(answered);
    expect(logged).toBe(answered);
  });

  it('when no id comes, then one is made, and a made id is accepted by the next hop unchanged', () => {
    const made = idFor(undefined).answered;
    expect(made).toMatch(/^[A-Za-z0-9_-]{16}$/);
    for (let i = 0; i < 1000; i += 1) {
      const id = newRequestId();
      expect(isAcceptableRequestId(id)).toBe(true);
      expect(idFor(id).answered).toBe(id);
    }
  });

  it('when ids are made across many refills of the random pool, then each is 16 characters and none repeats', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5_000; i += 1) ids.add(newRequestId());
    expect(ids.size).toBe(5_000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });
});
