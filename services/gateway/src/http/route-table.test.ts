import { allowedMethods, matchRoute, redactPath, ROUTES } from './route-table';

const uuid = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';

describe('matchRoute', () => {
  it.each([
    ['/api/create.php', '/api/create.php', 'notes', { POST: 'create' }],
    [`/api/view/${uuid}.php`, '/api/view/:uuid.php', 'notes', { GET: 'view', HEAD: 'view' }],
    ['/api/stats.php', '/api/stats.php', 'stats', { GET: 'stats', HEAD: 'stats' }],
    ['/api/openapi.json', '/api/openapi.json', 'notes', { GET: undefined, HEAD: undefined }],
    ['/', '/', 'notes', { GET: undefined, HEAD: undefined, POST: 'create' }],
    ['/assets/app.css', '/assets/*', 'notes', { GET: undefined, HEAD: undefined }],
    [`/${uuid}`, '/:uuid', 'notes', { GET: 'view', HEAD: 'view', POST: 'view' }],
    ['/unsubscribe/tok_123', '/unsubscribe/:token', 'mailer', { GET: 'view', HEAD: 'view', POST: 'view' }],
    // Receipts (DECISIONS 12): reads and the end-now form count as views; the keys are public.
    [`/api/receipt/${'R'.repeat(43)}.php`, '/api/receipt/:id.php', 'notes', { GET: 'view', HEAD: 'view' }],
    [`/r/${'R'.repeat(43)}`, '/r/:id', 'notes', { GET: 'view', HEAD: 'view', POST: 'view' }],
    [`/r/${'R'.repeat(43)}/checkin`, '/r/:id/checkin', 'notes', { POST: 'view' }],
    ['/.well-known/vanish-receipt-keys.json', '/.well-known/vanish-receipt-keys.json', 'notes', { GET: undefined, HEAD: undefined }],
    // DECISIONS 16 and 17: the receipt wallet's page and the release manifest are not limited.
    ['/receipts', '/receipts', 'notes', { GET: undefined, HEAD: undefined }],
    ['/.well-known/vanish-release.json', '/.well-known/vanish-release.json', 'notes', { GET: undefined, HEAD: undefined }],
    // Files (DECISIONS 14): tus uploads (OPTIONS relayed) and downloads; the byte limit is the relay's own.
    [`/files/uploads/${'T'.repeat(43)}`, '/files/uploads/:token', 'notes', { HEAD: undefined, PATCH: undefined, OPTIONS: undefined }],
    [`/files/d/${'T'.repeat(43)}`, '/files/d/:token', 'notes', { GET: undefined, HEAD: undefined }],
    // Requests (DECISIONS 15): making one and each submission count as creates; reading and opening as views.
    ['/api/request.php', '/api/request.php', 'notes', { POST: 'create' }],
    [`/api/request/${'Q'.repeat(43)}.php`, '/api/request/:id.php', 'notes', { GET: 'view', HEAD: 'view', POST: 'create' }],
    [`/api/inbox/${'I'.repeat(43)}.php`, '/api/inbox/:id.php', 'notes', { GET: 'view', HEAD: 'view' }],
    ['/request', '/request', 'notes', { GET: undefined, HEAD: undefined }],
    [`/q/${'Q'.repeat(43)}`, '/q/:id', 'notes', { GET: 'view', HEAD: 'view' }],
    [`/embed/q/${'Q'.repeat(43)}`, '/embed/q/:id', 'notes', { GET: 'view', HEAD: 'view' }],
    [`/i/${'I'.repeat(43)}`, '/i/:id', 'notes', { GET: 'view', HEAD: 'view', POST: 'view' }],
    [`/i/${'I'.repeat(43)}/close`, '/i/:id/close', 'notes', { POST: 'view' }],
    ['/assets/embed.js', '/assets/embed.js', 'notes', { GET: undefined, HEAD: undefined }],
  ])('when the path is %s, then the route is %s on %s with its limits', (path, template, upstream, methods) => {
    const match = matchRoute(path);
    expect(match.found).toBe(true);
    if (!match.found) return;
    expect(match.route.template).toBe(template);
    expect(match.route.upstream).toBe(upstream);
    expect(match.route.methods).toEqual(methods);
  });

  it('when the routes are listed, then only the embedded form may be framed and only the embed script is for other sites; request and inbox ids are secret paths', () => {
    expect(ROUTES.filter((candidate) => candidate.embed === 'frame').map((candidate) => candidate.template)).toEqual(['/embed/q/:id']);
    expect(ROUTES.filter((candidate) => candidate.embed === 'script').map((candidate) => candidate.template)).toEqual(['/assets/embed.js']);
    for (const template of ['/api/request/:id.php', '/api/inbox/:id.php', '/q/:id', '/embed/q/:id', '/i/:id', '/i/:id/close']) {
      expect([template, ROUTES.find((candidate) => candidate.template === template)?.secretPath]).toEqual([template, true]);
    }
  });

  it('when an /api path is unknown, then it is not found and named /api/*', () => {
    expect(matchRoute('/api/delete.php')).toEqual({ found: false, kind: 'api', template: '/api/*' });
    expect(matchRoute('/api')).toEqual({ found: false, kind: 'api', template: '/api/*' });
    expect(matchRoute(`/api/view/${uuid}`)).toMatchObject({ found: false, kind: 'api' });
  });

  it('when a page path has several segments and is unknown, then it is not found', () => {
    expect(matchRoute('/a/b')).toEqual({ found: false, kind: 'page', template: '/*' });
  });
});

describe('allowedMethods', () => {
  it('when asked for a route, then OPTIONS is always listed', () => {
    const match = matchRoute('/api/create.php');
    if (!match.found) throw new Error('route expected');
    expect(allowedMethods(match.route)).toEqual(['POST', 'OPTIONS']);
  });

  it('when a route answers OPTIONS itself (tus uploads), then it is listed once and the route streams', () => {
    const match = matchRoute('/files/uploads/token');
    if (!match.found) throw new Error('route expected');
    expect(allowedMethods(match.route)).toEqual(['HEAD', 'PATCH', 'OPTIONS']);
    expect(match.route.allow).toBe('HEAD, PATCH, OPTIONS');
    expect([match.route.files, match.route.secretPath]).toEqual([true, true]);
    expect(ROUTES.filter((r) => r.files).map((r) => r.template)).toEqual(['/files/uploads/:token', '/files/d/:token']);
    expect(matchRoute('/files/uploads')).toMatchObject({ found: false });
    expect(matchRoute('/files/d/a/b')).toMatchObject({ found: false });
  });
});

describe('redactPath', () => {
  it('when the path carries a note uuid or a token, then only the template is logged', () => {
    expect(redactPath(`/api/view/${uuid}.php`, matchRoute(`/api/view/${uuid}.php`))).toBe('/api/view/:uuid.php');
    expect(redactPath(`/${uuid}`, matchRoute(`/${uuid}`))).toBe('/:uuid');
    expect(redactPath('/unsubscribe/secret-token', matchRoute('/unsubscribe/secret-token'))).toBe('/unsubscribe/:token');
    expect(redactPath('/r/secret-receipt', matchRoute('/r/secret-receipt'))).toBe('/r/:id');
    expect(redactPath('/r/secret-receipt/checkin', matchRoute('/r/secret-receipt/checkin'))).toBe('/r/:id/checkin');
    expect(redactPath('/api/receipt/secret-receipt.php', matchRoute('/api/receipt/secret-receipt.php'))).toBe('/api/receipt/:id.php');
    expect(redactPath('/files/uploads/secret-token', matchRoute('/files/uploads/secret-token'))).toBe('/files/uploads/:token');
    expect(redactPath('/files/d/secret-token', matchRoute('/files/d/secret-token'))).toBe('/files/d/:token');
  });

  it('when an unknown path contains something uuid-shaped, then that part is replaced', () => {
    const path = `/api/view/${uuid.toUpperCase()}`;
    expect(redactPath(path, matchRoute(path))).toBe('/api/view/:uuid');
  });

  it('when an unknown path carries an escaped uuid or a token, then those are replaced too', () => {
    const escaped = `/x/${[...uuid].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}`;
    expect(redactPath(escaped, matchRoute(escaped))).toBe('/x/:uuid');
    const token = '/unsubscribe/u1.q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s.LEM41ybr8mLnzIVGqX2ijg%E0/x';
    expect(redactPath(token, matchRoute(token))).toBe('/unsubscribe/u1.:redacted.:redacted%E0/x');
  });

  it('when a path is harmless, then it is logged as is', () => {
    expect(redactPath('/assets/app.css', matchRoute('/assets/app.css'))).toBe('/assets/app.css');
  });
});

describe('shared reads', () => {
  it('when the table is read, then only the statistics share upstream reads: no other answer is the same for every client', () => {
    expect(ROUTES.filter((candidate) => candidate.sharedRead).map((candidate) => candidate.template)).toEqual(['/api/stats.php']);
    // A secret path must never be shared by path alone.
    expect(ROUTES.filter((candidate) => candidate.sharedRead && candidate.secretPath)).toEqual([]);
  });
});

describe('reads on pipelined connections', () => {
  it('when the table is read, then only the API routes whose GET changes nothing upstream are marked repeatable: never a page, never a file', () => {
    expect(ROUTES.filter((candidate) => candidate.repeatableRead).map((candidate) => candidate.template)).toEqual([
      '/api/view/:uuid.php', '/api/receipt/:id.php', '/api/request/:id.php', '/api/inbox/:id.php', '/api/stats.php', '/api/openapi.json',
    ]);
    // A page fetch is recorded in a receipt's timeline (DECISIONS 12) and a download is counted: neither may be sent twice.
    expect(ROUTES.filter((candidate) => candidate.repeatableRead && (candidate.kind === 'page' || candidate.files))).toEqual([]);
  });
});
