import type { LimitedAction } from '../domain/limit-policy';

export type UpstreamName = 'notes' | 'stats' | 'mailer';
export type RouteKind = 'api' | 'page';

/** One public route: its template (the only form of the path that reaches logs and metrics). */
export interface GatewayRoute {
  template: string;
  kind: RouteKind;
  pattern: RegExp;
  upstream: UpstreamName;
  /** Methods and the limit each one counts against (undefined: not limited). HEAD follows GET. */
  methods: Readonly<Record<string, LimitedAction | undefined>>;
  /** True when the path itself is a secret (note uuid, unsubscribe token): logs show the template. */
  secretPath: boolean;
  /** The Allow header value: the methods and OPTIONS. */
  allow: string;
  /**
   * True when a GET's answer is the same for every client: no secret in the path, and nothing in the
   * answer that depends on the client or its request headers (language, cookies, conditionals).
   * Concurrent GETs of one path then share upstream reads (shared-upstream-read.ts).
   */
  sharedRead: boolean;
  /**
   * True when a GET or HEAD of this route changes nothing upstream (the API's reads: no view is spent, no
   * receipt or timeline entry written), so that sending it twice is harmless. Such reads travel on upstream
   * connections that carry several at once (UPSTREAM_PIPELINING), where undici sends again the reads that a
   * connection broken under them (an aborted neighbour, a closed keep-alive) left unanswered. The note, receipt
   * and request pages are not: fetching one is recorded (DECISIONS 12's timeline).
   */
  repeatableRead: boolean;
  /**
   * Files (DECISIONS 14): relayed by files-relay.ts, streamed both ways, with no body guard, no
   * deadline but an idle timeout, and FILE_BYTES_PER_HOUR on upload bytes.
   */
  files: boolean;
  /**
   * DECISIONS 15: the request's embedded form is the one page that may be framed, by the origins its own
   * Content-Security-Policy names (frame-ancestors): the gateway sends no X-Frame-Options there. `script`: the
   * embed script, which other sites load (with its integrity hash, so in CORS mode).
   */
  embed?: 'frame' | 'script';
}

const route = (
  template: string,
  kind: RouteKind,
  pattern: RegExp,
  upstream: UpstreamName,
  methods: Record<string, LimitedAction | undefined>,
  {
    secretPath = false, sharedRead = false, repeatableRead = false, files = false, embed,
  }: { secretPath?: boolean; sharedRead?: boolean; repeatableRead?: boolean; files?: boolean; embed?: 'frame' | 'script' } = {},
): GatewayRoute => ({
  template, kind, pattern, upstream, methods, secretPath, sharedRead, repeatableRead, files, allow: allowedMethods({ methods }).join(', '), ...(embed ? { embed } : {}),
});

/**
 * The gateway's whole public surface (brief "Web routes" and "API"; DECISIONS 5 for the limits).
 * Order matters: the first match wins, and `/:uuid` (any single segment) comes last.
 */
export const ROUTES: readonly GatewayRoute[] = [
  route('/api/create.php', 'api', /^\/api\/create\.php$/, 'notes', { POST: 'create' }),
  route('/api/view/:uuid.php', 'api', /^\/api\/view\/[^/]+\.php$/, 'notes', { GET: 'view', HEAD: 'view' }, { secretPath: true, repeatableRead: true }),
  // Receipts (DECISIONS 12): reads count as views (DECISIONS 5), the id is a secret path.
  route('/api/receipt/:id.php', 'api', /^\/api\/receipt\/[^/]+\.php$/, 'notes', { GET: 'view', HEAD: 'view' }, { secretPath: true, repeatableRead: true }),
  // Requests (DECISIONS 15): making one and each submission count as creates, reads as views; the ids are secrets.
  route('/api/request.php', 'api', /^\/api\/request\.php$/, 'notes', { POST: 'create' }),
  route('/api/request/:id.php', 'api', /^\/api\/request\/[^/]+\.php$/, 'notes', { GET: 'view', HEAD: 'view', POST: 'create' }, { secretPath: true, repeatableRead: true }),
  route('/api/inbox/:id.php', 'api', /^\/api\/inbox\/[^/]+\.php$/, 'notes', { GET: 'view', HEAD: 'view' }, { secretPath: true, repeatableRead: true }),
  route('/api/stats.php', 'api', /^\/api\/stats\.php$/, 'stats', { GET: 'stats', HEAD: 'stats' }, { sharedRead: true, repeatableRead: true }),
  route('/api/openapi.json', 'api', /^\/api\/openapi\.json$/, 'notes', { GET: undefined, HEAD: undefined }, { repeatableRead: true }),
  route('/', 'page', /^\/$/, 'notes', { GET: undefined, HEAD: undefined, POST: 'create' }),
  route('/assets/embed.js', 'page', /^\/assets\/embed\.js$/, 'notes', { GET: undefined, HEAD: undefined }, { embed: 'script' }),
  route('/assets/*', 'page', /^\/assets\/[^?#]+$/, 'notes', { GET: undefined, HEAD: undefined }),
  route('/favicon.ico', 'page', /^\/favicon\.ico$/, 'notes', { GET: undefined, HEAD: undefined }),
  route('/.well-known/vanish-receipt-keys.json', 'page', /^\/\.well-known\/vanish-receipt-keys\.json$/, 'notes', { GET: undefined, HEAD: undefined }),
  // DECISIONS 17: the release manifest, the same for everyone. DECISIONS 16: the receipt wallet's page (the
  // receipts themselves stay in the browser; reading each one is a /api/receipt read, limited as a view).
  route('/.well-known/vanish-release.json', 'page', /^\/\.well-known\/vanish-release\.json$/, 'notes', { GET: undefined, HEAD: undefined }),
  route('/receipts', 'page', /^\/receipts$/, 'notes', { GET: undefined, HEAD: undefined }),
  route('/r/:id', 'page', /^\/r\/[^/]+$/, 'notes', { GET: 'view', HEAD: 'view', POST: 'view' }, { secretPath: true }),
  // DECISIONS 16: "I am still here", a dead-man's switch's check-in (a form post from the receipt page or the CLI).
  route('/r/:id/checkin', 'page', /^\/r\/[^/]+\/checkin$/, 'notes', { POST: 'view' }, { secretPath: true }),
  route('/request', 'page', /^\/request$/, 'notes', { GET: undefined, HEAD: undefined }),
  route('/q/:id', 'page', /^\/q\/[^/]+$/, 'notes', { GET: 'view', HEAD: 'view' }, { secretPath: true }),
  route('/embed/q/:id', 'page', /^\/embed\/q\/[^/]+$/, 'notes', { GET: 'view', HEAD: 'view' }, { secretPath: true, embed: 'frame' }),
  route('/i/:id', 'page', /^\/i\/[^/]+$/, 'notes', { GET: 'view', HEAD: 'view', POST: 'view' }, { secretPath: true }),
  route('/i/:id/close', 'page', /^\/i\/[^/]+\/close$/, 'notes', { POST: 'view' }, { secretPath: true }),
  route('/unsubscribe/:token', 'page', /^\/unsubscribe\/[^/]+$/, 'mailer', { GET: 'view', HEAD: 'view', POST: 'view' }, { secretPath: true }),
  // Files (DECISIONS 14): tus uploads (OPTIONS is tus's own discovery, answered by notes) and downloads.
  route('/files/uploads/:token', 'page', /^\/files\/uploads\/[^/]+$/, 'notes', { HEAD: undefined, PATCH: undefined, OPTIONS: undefined }, { secretPath: true, files: true }),
  route('/files/d/:token', 'page', /^\/files\/d\/[^/]+$/, 'notes', { GET: undefined, HEAD: undefined }, { secretPath: true, files: true }),
  route('/:uuid', 'page', /^\/[^/]+$/, 'notes', { GET: 'view', HEAD: 'view', POST: 'view' }, { secretPath: true }),
];

export type RouteMatch =
  | { found: true; route: GatewayRoute }
  | { found: false; kind: RouteKind; template: string };

/** Each route's match, made once: a lookup allocates nothing (issue 35). Frozen, since every request shares it. */
const FOUND = ROUTES.map((route) => Object.freeze({ found: true as const, route }));

/** Matches a path (without query string) against the table; unknown paths are named, never echoed. */
export function matchRoute(path: string): RouteMatch {
  const isApi = path === '/api' || path.startsWith('/api/');
  for (const match of FOUND) {
    if ((match.route.kind === 'api') === isApi && match.route.pattern.test(path)) return match;
  }
  return { found: false, kind: isApi ? 'api' : 'page', template: isApi ? '/api/*' : '/*' };
}

/** The methods a route answers, as an Allow header lists them (OPTIONS always). */
export function allowedMethods(matched: Pick<GatewayRoute, 'methods'>): string[] {
  const methods = Object.keys(matched.methods);
  return methods.includes('OPTIONS') ? methods : [...methods, 'OPTIONS'];
}

const UUID_LIKE = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/gi;
/** A run long enough to be (part of) a secret: an unsubscribe token's parts, a mangled uuid. */
const TOKEN_LIKE = /[0-9A-Za-z_-]{16,}/g;

/**
 * The path as it may appear in a log (DECISIONS 1): the template for secret paths, otherwise
 * the path without query string, with escaped ASCII decoded first (so `%33%66...` cannot smuggle a
 * uuid past), anything uuid-shaped or token-long replaced, and bounded in length.
 */
export function redactPath(path: string, match: RouteMatch): string {
  if (match.found && match.route.secretPath) return match.route.template;
  const bare = (path.split('?')[0] ?? '').replace(/%([0-7][0-9a-f])/gi, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return bare.replace(UUID_LIKE, ':uuid').replace(TOKEN_LIKE, ':redacted').slice(0, 200);
}
