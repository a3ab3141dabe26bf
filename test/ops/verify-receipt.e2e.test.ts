import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyRing } from '@vanish/common';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { ReceiptSigner } from '../../services/notes/src/receipts/receipt-signer';

// Issue 32 (outside review): `npm run verify-receipt` as a person runs it (the built script, a real HTTPS
// issuer whose certificate the process trusts through NODE_EXTRA_CA_CERTS). The e2e project needs
// `npm run build` first.
const SCRIPT = path.resolve(__dirname, '..', '..', 'services', 'notes', 'dist', 'cli', 'verify-receipt.js');
const KEYS_PATH = '/.well-known/vanish-receipt-keys.json';

jest.setTimeout(60_000);

interface Run { code: number; stdout: string; stderr: string }

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Serves one key set at the well-known path, counting requests. */
function keyServer(server: Server, jwks: unknown): { hits: () => number } {
  let hits = 0;
  server.on('request', (req, res) => {
    hits += 1;
    if (req.url !== KEYS_PATH) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  return { hits: () => hits };
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('verify-receipt, the built command', () => {
  let dir: string;
  let ca: TestCertificateAuthority;
  const servers: Server[] = [];

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'vanish-verify-receipt-'));
    ca = createTestCa();
  });
  afterAll(async () => {
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
    ca?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  function saveReceipt(name: string, signer: ReceiptSigner, issuer: string): string {
    const file = path.join(dir, name);
    const receipt = { version: 1, issuer, note_ref: 'ref', status: 'ended', end_reason: 'views', views_used: 1, max_views: 1, issued_at: '2026-11-27 05:00:00', timeline: [] };
    writeFileSync(file, JSON.stringify({ success: true, ...signer.sign(receipt) }, null, 2));
    return file;
  }

  it('when an attacker\'s receipt names the attacker\'s own HTTPS issuer and no trust is given, then it exits 2 and fetches nothing', async () => {
    const attacker = new ReceiptSigner(KeyRing.generate('r1'));
    const issued = ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] });
    const server = createHttpsServer({ cert: issued.cert, key: issued.key });
    servers.push(server);
    const served = keyServer(server, attacker.publicJwks);
    const port = await listening(server);
    const forged = saveReceipt('forged.json', attacker, `https://localhost:${port}`);
    const answer = await run([forged], { NODE_EXTRA_CA_CERTS: ca.caFile });
    expect(answer).toMatchObject({ code: 2 });
    expect(answer.stdout).toMatch(/give either --keys FILE or --issuer URL/);
    expect(answer.stdout).not.toMatch(/VALID/);
    expect(served.hits()).toBe(0);
  });

  it('when the issuer the user trusts is named with --issuer over HTTPS, then its key set is fetched and the receipt is VALID; an attacker\'s receipt is not', async () => {
    const trusted = new ReceiptSigner(KeyRing.generate('r1'));
    const issued = ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] });
    const server = createHttpsServer({ cert: issued.cert, key: issued.key });
    servers.push(server);
    const served = keyServer(server, trusted.publicJwks);
    const port = await listening(server);
    const issuer = `https://localhost:${port}`;
    const genuine = saveReceipt('genuine.json', trusted, issuer);
    const ok = await run([genuine, '--issuer', issuer], { NODE_EXTRA_CA_CERTS: ca.caFile });
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toMatch(new RegExp(`^VALID: signed by key "r1" of ${issuer} at 2026-11-27 05:00:00 UTC\\nnote ended \\(views\\); views used 1 of 1\\n$`));
    expect(served.hits()).toBe(1);
    // Same kid, same issuer name, another key: the user's issuer does not vouch for it.
    const forged = saveReceipt('forged-same-issuer.json', new ReceiptSigner(KeyRing.generate('r1')), issuer);
    const refused = await run([forged, '--issuer', issuer], { NODE_EXTRA_CA_CERTS: ca.caFile });
    expect(refused).toMatchObject({ code: 1 });
    expect(refused.stdout).toMatch(/^INVALID: the signature does not match the receipt/);
    // Without the CA, the HTTPS issuer's certificate is not trusted: nothing is verified.
    const untrusted = await run([genuine, '--issuer', issuer]);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stdout).toMatch(/^cannot read input/);
  });

  it('when the issuer is plain http:// on a network address, then it is refused before any request; on loopback it is allowed', async () => {
    const signer = new ReceiptSigner(KeyRing.generate('r1'));
    const server = createHttpServer();
    servers.push(server);
    const served = keyServer(server, signer.publicJwks);
    const port = await listening(server);
    const remote = saveReceipt('remote.json', signer, 'http://notes.example.com');
    const refused = await run([remote, '--issuer', 'http://notes.example.com']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toMatch(/--issuer must be an https:\/\/ address/);
    const local = saveReceipt('local.json', signer, `http://127.0.0.1:${port}`);
    expect(await run([local, '--issuer', `http://127.0.0.1:${port}`])).toMatchObject({ code: 0 });
    expect(served.hits()).toBe(1);
  });
});
