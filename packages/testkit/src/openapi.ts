import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

/**
 * Checks an HTTP answer of the public API against the repository's OpenAPI 3.1 document
 * (services/notes/openapi/openapi.json): the concrete path is matched to its template, and the
 * check throws on an undocumented path, method or status, on a missing required header or a header
 * value its schema refuses, on a wrong media type and on a body that does not validate.
 * Use it on every API answer a test receives, errors included.
 */
export interface ApiAnswer {
  method: string;
  /** The concrete request path, e.g. `/api/view/4f0c….php` (a query string is ignored). */
  path: string;
  status: number;
  /** Node's IncomingHttpHeaders, a plain record, or a fetch Headers object. */
  headers: HeaderSource;
  /** The parsed JSON body, or its raw text; undefined or '' when there is none. */
  body: unknown;
}

type HeaderSource =
  | Record<string, string | string[] | number | undefined>
  | { forEach(callback: (value: string, name: string) => void): void };

export const OPENAPI_DOCUMENT_PATH = resolve(__dirname, '../../../services/notes/openapi/openapi.json');

type Json = Record<string, unknown>;

interface Operation { responses: Record<string, Json> }

interface Template { template: string; pattern: RegExp; item: Record<string, unknown> }

const DOC_ID = 'openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Rewrites document-local `#/…` refs so they resolve inside the document registered with ajv. */
function rebaseRefs<T>(value: T): T {
  if (Array.isArray(value)) return value.map(rebaseRefs) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value as Json)) {
    out[key] = key === '$ref' && typeof inner === 'string' && inner.startsWith('#/') ? `${DOC_ID}${inner}` : rebaseRefs(inner);
  }
  return out as T;
}

function normalizeHeaders(source: HeaderSource): Map<string, string> {
  const headers = new Map<string, string>();
  if (typeof (source as { forEach?: unknown }).forEach === 'function') {
    (source as { forEach(cb: (v: string, n: string) => void): void }).forEach((value, name) => headers.set(name.toLowerCase(), value));
    return headers;
  }
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (value === undefined) continue;
    headers.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value));
  }
  return headers;
}

function summarize(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (text === undefined) return 'undefined';
  return text.length > 400 ? `${text.slice(0, 400)}…(${text.length} chars)` : text;
}

export class ApiChecker {
  private readonly ajv: Ajv2020;
  private readonly templates: Template[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOC_ID, components: rebaseRefs(document.components) });
    const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
    this.templates = Object.entries(paths).map(([template, item]) => ({
      template,
      item,
      pattern: new RegExp(`^${template.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '[^/]+' : escapeRegExp(part))).join('')}$`),
    }));
  }

  static fromFile(file = OPENAPI_DOCUMENT_PATH): ApiChecker {
    return new ApiChecker(JSON.parse(readFileSync(file, 'utf8')) as Json);
  }

  /** Follows a local `$ref` (`#/components/...`) to its object. */
  private deref<T = Json>(value: T): T {
    let current: unknown = value;
    for (let hops = 0; hops < 10; hops++) {
      const ref = (current as { $ref?: unknown })?.$ref;
      if (typeof ref !== 'string') return current as T;
      if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
      current = ref.slice(2).split('/').map(unescapePointer).reduce<unknown>((node, key) => (node as Json | undefined)?.[key], this.document);
      if (current === undefined) throw new Error(`unresolvable $ref ${ref} in the OpenAPI document`);
    }
    throw new Error('too many $ref hops');
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebaseRefs(schema) as Json);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /**
   * What a received webhook request (DECISIONS 11) breaks of the document's `webhooks` section: the
   * entry named by its `event`, its required headers and its body schema. Empty when it conforms.
   */
  webhookProblems(request: { headers: HeaderSource; body: string }): string[] {
    let body: Json;
    try {
      body = JSON.parse(request.body) as Json;
    } catch {
      return ['body is not valid JSON'];
    }
    const event = String(body.event);
    const operation = ((this.document.webhooks ?? {}) as Record<string, Json>)[event]?.post as Json | undefined;
    if (!operation) return [`the document has no webhook "${event}"`];
    const problems: string[] = [];
    const headers = normalizeHeaders(request.headers);
    for (const parameter of (operation.parameters ?? []) as Json[]) {
      const name = String(parameter.name).toLowerCase();
      const value = headers.get(name);
      if (value === undefined) {
        if (parameter.required) problems.push(`header ${name} is missing`);
        continue;
      }
      const validate = this.validator(`webhook ${event} header ${name}`, parameter.schema ?? {});
      if (!validate(value)) problems.push(`header ${name}: ${this.ajv.errorsText(validate.errors, { dataVar: name, separator: '; ' })}`);
    }
    const requestBody = this.deref(operation.requestBody as Json) as { content?: Record<string, { schema?: unknown }> };
    const schema = requestBody.content?.['application/json']?.schema;
    const validate = this.validator(`webhook ${event} body`, schema ?? {});
    if (!validate(body)) problems.push(`body: ${this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })}`);
    return problems;
  }

  /** The template a concrete path belongs to, or undefined. */
  templateOf(path: string): string | undefined {
    const bare = path.split('?')[0]!;
    return this.templates.find((t) => t.pattern.test(bare))?.template;
  }

  check(answer: ApiAnswer): void {
    const method = answer.method.toLowerCase();
    const bare = answer.path.split('?')[0]!;
    const where = `${answer.method.toUpperCase()} ${bare} → ${answer.status}`;
    const problems: string[] = [];
    const match = this.templates.find((t) => t.pattern.test(bare));

    let response: Json | undefined;
    let key: string;
    if (!match) {
      if (!bare.startsWith('/api/') && bare !== '/api') throw new Error(`${where}: not an API path; checkApiAnswer only checks /api answers`);
      key = 'ApiNotFound';
      if (answer.status === 404) response = this.deref({ $ref: '#/components/responses/ApiNotFound' } as Json);
      else problems.push(`path ${bare} matches no documented template, so only 404 NOT_FOUND is documented, got ${answer.status}`);
    } else {
      const isHead = method === 'head';
      let operation = match.item[method] as Operation | undefined;
      if (!operation && isHead) operation = match.item.get as Operation | undefined; // HEAD answers as GET, without a body
      if (!operation && !METHODS.includes(method) && answer.status === 405) {
        operation = { responses: { 405: { $ref: '#/components/responses/MethodNotAllowed' } } };
      }
      if (!operation) throw new Error(`${where}: method ${answer.method} is not documented for ${match.template}`);
      key = `${match.template} ${isHead && !match.item.head ? 'get' : method}`;
      const documented = operation.responses[String(answer.status)] ?? operation.responses[`${String(answer.status)[0]}XX`] ?? operation.responses.default;
      if (!documented) {
        problems.push(`status ${answer.status} is not documented for ${answer.method.toUpperCase()} ${match.template} (documented: ${Object.keys(operation.responses).join(', ')})`);
      } else {
        response = this.deref(documented);
      }
      key = `${key} ${answer.status}`;
    }

    if (response) {
      const headers = normalizeHeaders(answer.headers);
      this.checkHeaders(key, response, headers, problems);
      this.checkBody(key, response, headers, answer, problems);
    }
    if (problems.length > 0) {
      throw new Error(`API answer does not match the OpenAPI document: ${where}\n  - ${problems.join('\n  - ')}\n  body: ${summarize(answer.body)}`);
    }
  }

  private checkHeaders(key: string, response: Json, headers: Map<string, string>, problems: string[]): void {
    const documented = (response.headers ?? {}) as Record<string, Json>;
    for (const [name, raw] of Object.entries(documented)) {
      if (name.toLowerCase() === 'content-type') continue; // described by the content map (OpenAPI rule)
      const header = this.deref(raw);
      const value = headers.get(name.toLowerCase());
      if (value === undefined) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (header.schema) {
        const validate = this.validator(`${key} header ${name}`, header.schema);
        if (!validate(value)) problems.push(`header ${name}: "${value}" ${this.ajv.errorsText(validate.errors, { dataVar: name })}`);
      }
    }
  }

  private checkBody(key: string, response: Json, headers: Map<string, string>, answer: ApiAnswer, problems: string[]): void {
    const content = response.content as Record<string, Json> | undefined;
    const empty = answer.body === undefined || answer.body === null || answer.body === '' ||
      (Buffer.isBuffer(answer.body) && answer.body.length === 0);
    if (answer.method.toUpperCase() === 'HEAD' || !content) {
      if (!empty) problems.push(`${answer.method.toUpperCase() === 'HEAD' ? 'a HEAD answer' : 'this answer'} must have no body`);
      if (!content || answer.method.toUpperCase() === 'HEAD') return;
    }
    const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const media = content[contentType];
    if (!media) {
      problems.push(`Content-Type "${headers.get('content-type') ?? ''}" is not documented (documented: ${Object.keys(content).join(', ')})`);
      return;
    }
    let body = answer.body;
    if (Buffer.isBuffer(body)) body = body.toString('utf8');
    if (typeof body === 'string' && contentType.endsWith('json')) {
      try {
        body = JSON.parse(body);
      } catch {
        problems.push('body is not valid JSON');
        return;
      }
    }
    if (!media.schema) return;
    const validate = this.validator(`${key} body ${contentType}`, media.schema);
    if (!validate(body)) {
      problems.push(`body: ${this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })}`);
    }
  }
}

let shared: ApiChecker | undefined;

/** Throws (with every problem listed) when the answer is not what the OpenAPI document describes. */
export function checkApiAnswer(answer: ApiAnswer): void {
  shared ??= ApiChecker.fromFile();
  shared.check(answer);
}
