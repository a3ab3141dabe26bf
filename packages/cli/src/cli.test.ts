import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * The CLI is plain JavaScript (no build step, so that the package is what the repository holds): its modules are
 * required as they are and typed here by what the tests use.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
type Thrower = (...args: never[]) => unknown;
const errors = require('../lib/errors') as { UsageError: new (m: string) => Error; Refusal: new (m: string) => Error; shown(v: unknown): string };
const links = require('../lib/links') as {
  serverOrigin(text: string): string;
  checkedCreation(answer: Record<string, unknown>, origin: string): { uuid: string; url: string; receiptUrl: string | null };
  noteLink(text: string): { origin: string; uuid: string; key: string | null };
};
const main = require('../lib/main') as { parseCommandLine(argv: string[]): { command: string; options?: Record<string, unknown>; link?: string; args?: string[] }; USAGE: string };
const passcodes = require('../lib/passcode') as {
  passcodeFromFile(path: string): string;
  creationPasscode(o: { file?: string; ask: boolean; env: Record<string, string | undefined> }): Promise<string | null>;
  readingPasscode(o: { file?: string; env: Record<string, string | undefined> }): Promise<string>;
};
const page = require('../lib/page') as {
  revealForm(html: string): { formToken: string; takesKeyCheck: boolean; takesPasscode: boolean; files: number } | null;
  revealedNote(html: string): { envelope?: string; text?: string } | null;
  pageError(html: string): string | null;
  fileDownloads(html: string): Array<{ url: string; size: number | null }> | null;
  uploadIncomplete(html: string): boolean;
};
const { forTerminal } = require('../lib/open') as { forTerminal(text: string): { safe: string; changed: boolean } };
const receiptsLib = require('../lib/receipts') as { receiptsFile(env: Record<string, string>): string; stateOf(receipt: Record<string, unknown>): string };
const verifySiteLib = require('../lib/verify-site') as { pageAssets(html: string): Array<Record<string, unknown>> };

const ROOT = resolve(__dirname, '../../..');
const UUID = '9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b';
const KEY = 'q_1z6l3Y2AI3Um77ULSF4Qb2v7LGvFK323gdKV_uB_w';
const RECEIPT = 'wjV_NgILwDxGPQWLkP_1QJYkBnCQroG1nWpLuifQS3c';

function thrown(fn: Thrower): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('it did not throw');
}
const usage = (fn: Thrower) => expect(thrown(fn)).toBeInstanceOf(errors.UsageError);
const refused = (fn: Thrower) => expect(thrown(fn)).toBeInstanceOf(errors.Refusal);

describe('the server vanish talks to', () => {
  it('when it is https, or plain http on this machine, then its origin is used', () => {
    expect(links.serverOrigin('https://vanish.example')).toBe('https://vanish.example');
    expect(links.serverOrigin('https://Vanish.Example:443/')).toBe('https://vanish.example');
    expect(links.serverOrigin('http://localhost:8080')).toBe('http://localhost:8080');
    expect(links.serverOrigin('http://127.0.0.1:9')).toBe('http://127.0.0.1:9');
    expect(links.serverOrigin('http://[::1]:8080/')).toBe('http://[::1]:8080');
  });

  it('when it is plain http to any other host, then vanish refuses it with the safe ways named', () => {
    for (const server of ['http://vanish.example', 'http://10.0.0.5:8080', 'http://localhost.evil.example', 'http://127.0.0.2']) {
      const err = thrown(() => links.serverOrigin(server));
      expect(err).toBeInstanceOf(errors.UsageError);
      expect(err.message).toContain('refusing plain http://');
    }
  });

  it('when it has a path, a query, credentials or another scheme, then it is a usage error', () => {
    for (const server of ['https://vanish.example/notes', 'https://vanish.example/?x=1', 'https://u:p@vanish.example', 'ftp://vanish.example', 'vanish.example', '']) {
      usage(() => links.serverOrigin(server));
    }
  });
});

describe('the creation answer, checked before any key is put on a link', () => {
  const origin = 'https://vanish.example';
  const good = { success: true, uuid: UUID, url: `${origin}/${UUID}`, receipt_url: `${origin}/r/${RECEIPT}` };

  it('when the links are on the server asked, at /{uuid} and /r/{id}, then they are rebuilt from that server', () => {
    expect(links.checkedCreation(good, origin)).toEqual({ uuid: UUID, url: `${origin}/${UUID}`, receiptUrl: `${origin}/r/${RECEIPT}` });
    expect(links.checkedCreation({ ...good, url: `https://VANISH.example:443/${UUID}` }, origin).url).toBe(`${origin}/${UUID}`);
  });

  it('when the note link points anywhere else, then it is refused', () => {
    for (const url of [
      `https://attacker.example/${UUID}`, `http://vanish.example/${UUID}`, `https://vanish.example:8443/${UUID}`,
      `${origin}/${UUID}/x`, `${origin}/x/${UUID}`, `${origin}/${UUID}?k=1`, `${origin}/${UUID}#k`, `https://u@vanish.example/${UUID}`,
      `${origin}/9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5c`, `//attacker.example/${UUID}`, 42, undefined,
    ]) {
      const err = thrown(() => links.checkedCreation({ ...good, url }, origin));
      expect(err).toBeInstanceOf(errors.Refusal);
      expect(err.message).toContain('printed no link and no key');
    }
  });

  it('when the uuid is not a note id, or the receipt link is elsewhere, then it is refused', () => {
    refused(() => links.checkedCreation({ ...good, uuid: '../../etc', url: `${origin}/../../etc` }, origin));
    refused(() => links.checkedCreation({ ...good, uuid: UUID.toUpperCase(), url: `${origin}/${UUID.toUpperCase()}` }, origin));
    for (const receipt of [`https://attacker.example/r/${RECEIPT}`, `${origin}/r/short`, `${origin}/x/${RECEIPT}`, `${origin}/r/${RECEIPT}?a=1`, 7]) {
      refused(() => links.checkedCreation({ ...good, receipt_url: receipt }, origin));
    }
  });

  it('when a server has no receipts, then the note link alone is kept', () => {
    const { receipt_url: _ignored, ...old } = good;
    expect(links.checkedCreation(old, origin).receiptUrl).toBeNull();
  });
});

describe('a link given to vanish open', () => {
  it('when it is a note link with its key, then origin, uuid and key are taken apart', () => {
    expect(links.noteLink(` https://vanish.example/${UUID}#${KEY}\n`)).toEqual({ origin: 'https://vanish.example', uuid: UUID, key: KEY });
    expect(links.noteLink(`http://localhost:8080/${UUID}`)).toEqual({ origin: 'http://localhost:8080', uuid: UUID, key: null });
  });

  it('when it is plain http to another host, not a note path, has a query, or a malformed key, then it is a usage error', () => {
    usage(() => links.noteLink(`http://vanish.example/${UUID}#${KEY}`));
    usage(() => links.noteLink(`https://vanish.example/r/${RECEIPT}`));
    usage(() => links.noteLink(`https://vanish.example/${UUID}?utm=1#${KEY}`));
    usage(() => links.noteLink(`https://vanish.example/${UUID}#${KEY.slice(1)}`));
    usage(() => links.noteLink(`https://vanish.example/${UUID}#${KEY}=`));
    usage(() => links.noteLink('not a link'));
  });
});

describe('the command line', () => {
  it('when a passcode is given on it, in any spelling, then it is refused with the safe ways named', () => {
    for (const argv of [['create', '--passcode', 'pin'], ['create', '--passcode=pin'], ['create', '-p', 'pin'], ['create', '-ppin'], ['create', '--passcode'], ['open', 'x', '--passcode', 'pin']]) {
      const err = thrown(() => main.parseCommandLine(argv));
      expect(err).toBeInstanceOf(errors.UsageError);
      expect(err.message).toMatch(/refused.*ps.*--passcode-file.*VANISH_PASSCODE/);
      expect(err.message).not.toContain('pin');
    }
  });

  it('when each command is given its options, then they are read; another command\'s option, a stray argument or an unknown command is a usage error', () => {
    expect(main.parseCommandLine(['create', '-v', '3', '--webhook', 'https://h.example/x', '--json', '--ask-passcode'])).toMatchObject({ command: 'create', options: { views: '3', webhook: 'https://h.example/x', json: true, 'ask-passcode': true } });
    expect(main.parseCommandLine(['open', `https://vanish.example/${UUID}#${KEY}`, '-o', 'note.txt', '--passcode-file', 'p'])).toMatchObject({ command: 'open', link: `https://vanish.example/${UUID}#${KEY}`, options: { out: 'note.txt', 'passcode-file': 'p' } });
    expect(main.parseCommandLine(['open'])).toMatchObject({ command: 'open', link: undefined });
    expect(main.parseCommandLine([])).toEqual({ command: 'help' });
    expect(main.parseCommandLine(['open', '--help'])).toEqual({ command: 'help' });
    expect(main.parseCommandLine(['--version'])).toEqual({ command: 'version' });
    usage(() => main.parseCommandLine(['open', 'link', '--json']));
    usage(() => main.parseCommandLine(['create', '--out', 'x']));
    usage(() => main.parseCommandLine(['create', 'stray']));
    usage(() => main.parseCommandLine(['open', 'a', 'b']));
    usage(() => main.parseCommandLine(['read', 'x']));
    usage(() => main.parseCommandLine(['create', '--nope']));
  });

  it('when receipts and verify-site are given their options, then they are read; a missing subcommand or address is a usage error (issue 36)', () => {
    expect(main.parseCommandLine(['receipts', 'export', '--out', 'r.json'])).toMatchObject({ command: 'receipts', args: ['export'], options: { out: 'r.json' } });
    expect(main.parseCommandLine(['receipts', 'verify', 'r.json', '--keys', 'k.json'])).toMatchObject({ command: 'receipts', args: ['verify', 'r.json'], options: { keys: 'k.json' } });
    expect(main.parseCommandLine(['verify-site', '--manifest', 'a.json', '--manifest', 'b.json', 'https://v.example'])).toMatchObject({ command: 'verify-site', link: 'https://v.example', options: { manifest: ['a.json', 'b.json'] } });
    usage(() => main.parseCommandLine(['receipts']));
    usage(() => main.parseCommandLine(['verify-site']));
    usage(() => main.parseCommandLine(['verify-site', 'a', 'b']));
    usage(() => main.parseCommandLine(['verify-site', 'https://v.example', '--out', 'x']));
    usage(() => main.parseCommandLine(['create', '--manifest', 'x']));
  });

  it('when the receipts file\'s place is asked, then it is VANISH_CONFIG_DIR, else XDG_CONFIG_HOME/vanish, else ~/.config/vanish (Linux)', () => {
    expect(receiptsLib.receiptsFile({ VANISH_CONFIG_DIR: '/c' })).toBe('/c/receipts.json');
    if (process.platform === 'linux') {
      expect(receiptsLib.receiptsFile({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/x/vanish/receipts.json');
      expect(receiptsLib.receiptsFile({ HOME: '/h' })).toBe('/h/.config/vanish/receipts.json');
    }
    expect(receiptsLib.stateOf({ status: 'active', views_used: 0, timeline: [{ event: 'page_fetch', client: 'link_preview_bot' }] })).toBe('previewed by a bot');
    expect(receiptsLib.stateOf({ status: 'active', views_used: 1, timeline: [] })).toBe('read');
    expect(receiptsLib.stateOf({ status: 'held', views_used: 0, timeline: [] })).toBe('held');
  });

  it('when the CLI is packed, then its version is the repository\'s: the release manifest it ships is that release\'s (DECISIONS 17)', () => {
    const cli = JSON.parse(readFileSync(resolve(__dirname, '../package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };
    expect(cli.version).toBe((JSON.parse(readFileSync(resolve(__dirname, '../../../package.json'), 'utf8')) as { version: string }).version);
    expect(cli.scripts.prepack).toContain('scripts/write-release-manifest.js');
  });

  it('when a page is read for what it loads, then scripts and stylesheets are found with their integrity, inline scripts are named', () => {
    const found = verifySiteLib.pageAssets('<link rel="stylesheet" href="/assets/app.css" integrity="sha384-a"><link rel="icon" href="data:,"><script src="/assets/app.js" integrity="sha384-b" defer></script><script>alert(1)</script>');
    expect(found).toEqual([{ path: '/assets/app.css', integrity: 'sha384-a' }, { path: '/assets/app.js', integrity: 'sha384-b' }, { inline: true }]);
  });

  it('when --help is asked, then every option of both commands, the environment and the exit statuses are named', () => {
    for (const name of ['--file', '--views', '--expires', '--type', '--ask-passcode', '--passcode-file', '--notify', '--send-link', '--webhook', '--server', '--json', '--out', '--help', '--version', 'VANISH_URL', 'VANISH_PASSCODE', 'Exit status',
      'vanish receipts', 'vanish verify-site', '--keys', '--manifest', 'VANISH_CONFIG_DIR']) {
      expect(main.USAGE).toContain(name);
    }
  });
});

describe('requests on the command line (DECISIONS 15)', () => {
  const requests = require('../lib/requests') as {
    parseLink(text: string, kind: 'q' | 'i'): { origin: string; id: string; key: string | null };
    openedEnvelope(html: string): string | null;
  };
  const ID = 'Q'.repeat(43);
  const KEY = 'AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA';

  it('when request and inbox links are read, then only /q/<id> and /i/<id>#<key> on https (or http to this machine) pass', () => {
    expect(requests.parseLink(`https://v.example/q/${ID}`, 'q')).toEqual({ origin: 'https://v.example', id: ID, key: null });
    expect(requests.parseLink(`http://127.0.0.1:8080/i/${ID}#${KEY}`, 'i')).toEqual({ origin: 'http://127.0.0.1:8080', id: ID, key: KEY });
    for (const [bad, kind] of [
      [`http://v.example/q/${ID}`, 'q'], [`https://v.example/i/${ID}`, 'i'], [`https://v.example/i/${ID}#short`, 'i'], [`https://v.example/q/${ID}?x=1`, 'q'],
      [`https://v.example/r/${ID}`, 'q'], ['not a link', 'q'], [`https://u:p@v.example/q/${ID}`, 'q'],
    ] as const) {
      expect(() => requests.parseLink(bad, kind)).toThrow(errors.UsageError);
    }
  });

  it('when the inbox page answers an opening, then its sealed envelope is read, entities decoded; a page without one gives none', () => {
    expect(requests.openedEnvelope('<pre class="content" id="note-content" dir="auto" data-request-envelope="vz1.a&#45;b.c">…</pre>')).toBe('vz1.a-b.c');
    expect(requests.openedEnvelope('<p id="reveal-error">no</p>')).toBeNull();
  });

  it('when the commands are parsed, then each takes its own options and one link at most', () => {
    expect(main.parseCommandLine(['request', '--label', 'x', '--count', '3', '--origin', 'https://a.example', '--origin', 'https://b.example']).options)
      .toMatchObject({ label: 'x', count: '3', origin: ['https://a.example', 'https://b.example'] });
    expect(main.parseCommandLine(['send', `https://v.example/q/${ID}`])).toMatchObject({ command: 'send', link: `https://v.example/q/${ID}` });
    expect(main.parseCommandLine(['inbox', '--key-file', 'k', '--open', '2'])).toMatchObject({ command: 'inbox', options: { 'key-file': 'k', open: '2' } });
    for (const argv of [['request', 'stray'], ['send', 'a', 'b'], ['inbox', '--label', 'x'], ['send', '--open', '1']]) {
      expect(() => main.parseCommandLine(argv)).toThrow(errors.UsageError);
    }
    for (const name of ['vanish request', 'vanish send', 'vanish inbox', '--label', '--count', '--days', '--origin', '--key-file', '--open', '--all', '--close']) expect(main.USAGE).toContain(name);
  });
});

describe('passcode sources', () => {
  let dir: string;
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'vanish-cli-passcode-')); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => { const path = join(dir, name); writeFileSync(path, text); return path; };

  it('when a file holds it, then one final line break is dropped and nothing else', async () => {
    expect(passcodes.passcodeFromFile(file('a', 'open sesame\n'))).toBe('open sesame');
    expect(passcodes.passcodeFromFile(file('b', 'crlf\r\n'))).toBe('crlf');
    expect(passcodes.passcodeFromFile(file('c', ' two lines\n\n'))).toBe(' two lines\n');
  });

  it('when the file is missing, empty or too long, then it is a usage error', () => {
    usage(() => passcodes.passcodeFromFile(join(dir, 'missing')));
    usage(() => passcodes.passcodeFromFile(file('d', '\n')));
    usage(() => passcodes.passcodeFromFile(file('e', 'é'.repeat(129))));
    expect(passcodes.passcodeFromFile(file('f', 'é'.repeat(128)))).toHaveLength(128);
  });

  it('when creating, then the file wins over the environment, none is none, and file with prompt is a usage error', async () => {
    await expect(passcodes.creationPasscode({ file: file('g', 'from file'), ask: false, env: { VANISH_PASSCODE: 'from env' } })).resolves.toBe('from file');
    await expect(passcodes.creationPasscode({ ask: false, env: { VANISH_PASSCODE: 'from env' } })).resolves.toBe('from env');
    await expect(passcodes.creationPasscode({ ask: false, env: {} })).resolves.toBeNull();
    await expect(passcodes.creationPasscode({ ask: false, env: { VANISH_PASSCODE: '' } })).resolves.toBeNull();
    await expect(passcodes.creationPasscode({ file: file('h', 'x'), ask: true, env: {} })).rejects.toBeInstanceOf(errors.UsageError);
  });

  it('when reading a protected note, then the file, else the environment is used', async () => {
    await expect(passcodes.readingPasscode({ file: file('i', 'pin\n'), env: { VANISH_PASSCODE: 'other' } })).resolves.toBe('pin');
    await expect(passcodes.readingPasscode({ env: { VANISH_PASSCODE: 'pin' } })).resolves.toBe('pin');
  });
});

describe('what vanish open reads of the pages', () => {
  it('when the note page has the reveal form, then its token and fields are found whatever the attribute order and quoting', () => {
    const html = `<form method="get" data-settings><input name="lang" value="en"></form>
      <form data-client-encrypted method="POST"><input value="tok&amp;en.sig" type="hidden" name="form_token">
      <input type=hidden name='key_check' value=""><label>Passcode</label><input id="passcode" name="passcode" type="password"></form>`;
    expect(page.revealForm(html)).toEqual({ formToken: 'tok&en.sig', takesKeyCheck: true, takesPasscode: true, files: 0 });
    expect(page.revealForm('<form method="post"><input type="hidden" name="form_token" value="t"><button>Show</button></form>')).toEqual({ formToken: 't', takesKeyCheck: false, takesPasscode: false, files: 0 });
    expect(page.revealForm('<form method="post" data-files="3"><input type="hidden" name="form_token" value="t"></form>')).toMatchObject({ files: 3 });
    expect(page.revealForm('<p>no form</p>')).toBeNull();
  });

  it('when the revealed page holds an envelope, then it is taken from data-envelope; else the escaped text is decoded exactly', () => {
    expect(page.revealedNote('<pre class="content" id="note-content" dir="auto" data-envelope="vz1.abc.def" data-no-key="x">Opening…</pre>')).toEqual({ envelope: 'vz1.abc.def' });
    expect(page.revealedNote('<pre id="note-content" class="content">&lt;b&gt; &amp;amp; &quot;q&quot; &#39;s&#39; &#96;\n  line</pre>')).toEqual({ text: '<b> &amp; "q" \'s\' `\n  line' });
    expect(page.revealedNote('<pre>nothing</pre>')).toBeNull();
  });

  it('when the revealed page lists files (DECISIONS 14), then their download addresses and sizes are read in order', () => {
    const html = '<ol id="vanish-files" data-count="2"><li data-download="https://v.example/files/d/aaa" data-size="30"></li>\n<li data-size="16" data-download=\'https://v.example/files/d/bbb\'></li></ol>';
    expect(page.fileDownloads(html)).toEqual([{ url: 'https://v.example/files/d/aaa', size: 30 }, { url: 'https://v.example/files/d/bbb', size: 16 }]);
    expect(page.fileDownloads('<ol id="vanish-files" data-count="3"><li data-download="x" data-size="1"></li></ol>')).toEqual([]);
    expect(page.fileDownloads('<p>no files</p>')).toBeNull();
    expect(page.uploadIncomplete('<p id="upload-incomplete">still uploading</p>')).toBe(true);
  });

  it('when the page says what went wrong, then that sentence is read', () => {
    expect(page.pageError('<p class="error" role="alert" id="reveal-error">Wrong passcode. <b>4</b> tries&nbsp;left</p>')).toBe('Wrong passcode. 4 tries left');
    expect(page.pageError('<p>fine</p>')).toBeNull();
  });
});

describe('a note shown on a terminal', () => {
  it('when it holds control characters, then they are shown as \\xNN and said so; tabs and line breaks stay', () => {
    expect(forTerminal('a\tb\nc')).toEqual({ safe: 'a\tb\nc\n', changed: false });
    expect(forTerminal('\u001b[2Jgone\u009b')).toEqual({ safe: '\\x1b[2Jgone\\x9b\n', changed: true });
  });
});

describe('the envelope the package ships', () => {
  it('is byte for byte the web page\'s envelope (packages/envelope/envelope.js, served as /assets/envelope.js)', () => {
    expect(readFileSync(join(ROOT, 'packages/cli/lib/envelope.js')).equals(readFileSync(join(ROOT, 'packages/envelope/envelope.js')))).toBe(true);
  });

  it('ships the requests\' sealing byte for byte as the pages serve it (packages/envelope/request-seal.js, DECISIONS 15)', () => {
    expect(readFileSync(join(ROOT, 'packages/cli/lib/request-seal.js')).equals(readFileSync(join(ROOT, 'packages/envelope/request-seal.js')))).toBe(true);
  });

  it('ships the file format byte for byte as the web page does (packages/envelope/file-stream.js, served as /assets/file-stream.js)', () => {
    expect(readFileSync(join(ROOT, 'packages/cli/lib/file-stream.js')).equals(readFileSync(join(ROOT, 'packages/envelope/file-stream.js')))).toBe(true);
  });

  it('seals and opens files with node:crypto exactly as the format\'s test vectors say (lib/segment-cipher.js, the pages use WebCrypto)', async () => {
    type Stream = Record<string, unknown>;
    const fileStream = require('../lib/file-stream') as Record<string, unknown> & {
      createSealer(k: string, n: string, m?: unknown): unknown; createOpener(k: string, n: string, s?: number, m?: unknown): unknown;
      fileKeyBytes(k: string, n: string): Promise<Uint8Array>; segmentNonce(i: number, last: boolean): Uint8Array;
      sealSegment(key: unknown, i: number, last: boolean, plain: Uint8Array): Promise<Uint8Array>; fileKey(k: string, n: string): Promise<unknown>;
    };
    const { nodeSegmentCipher } = require('../lib/segment-cipher') as { nodeSegmentCipher(raw: Uint8Array): { seal(iv: Uint8Array, p: Uint8Array): Uint8Array; open(iv: Uint8Array, s: Uint8Array): Uint8Array | null } };
    const verify = require(join(ROOT, 'packages/envelope/test-vectors/verify.js')) as (vectors: unknown, impl: unknown) => Promise<number>;
    const vectors = JSON.parse(readFileSync(join(ROOT, 'packages/envelope/test-vectors/file-stream.json'), 'utf8')) as { streams: Stream[] };
    const withNodeCipher = {
      ...fileStream,
      createSealer: (key: string, nonce: string) => fileStream.createSealer(key, nonce, nodeSegmentCipher),
      createOpener: (key: string, nonce: string, size?: number) => fileStream.createOpener(key, nonce, size, nodeSegmentCipher),
    };
    expect(await verify(vectors, withNodeCipher)).toBeGreaterThan(10);
    // The same bytes as WebCrypto's for a full segment, and a changed byte does not open.
    const key = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
    const nonce = 'EBESExQVFhcYGRobHB0eHw';
    const plain = new Uint8Array(65536).map((_, i) => i % 251);
    const node = nodeSegmentCipher(await fileStream.fileKeyBytes(key, nonce));
    const sealed = await fileStream.sealSegment(node, 7, false, plain);
    expect(Buffer.from(sealed).equals(Buffer.from(await fileStream.sealSegment(await fileStream.fileKey(key, nonce), 7, false, plain)))).toBe(true);
    expect(Buffer.from(node.open(fileStream.segmentNonce(7, false), sealed)!).equals(Buffer.from(plain))).toBe(true);
    expect(node.open(fileStream.segmentNonce(7, true), sealed)).toBeNull();
    sealed[100] ^= 1;
    expect(node.open(fileStream.segmentNonce(7, false), sealed)).toBeNull();
  });

  it('has one dependency, the tus project\'s own client for resumable uploads (DECISIONS 14), on Node 20 and later', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: '@vanish-notes/cli', bin: { vanish: 'bin/vanish.js' }, engines: { node: '>=20' } });
    expect(Object.keys(manifest.dependencies as object)).toEqual(['tus-js-client']);
    expect(manifest.peerDependencies).toBeUndefined();
  });
});
