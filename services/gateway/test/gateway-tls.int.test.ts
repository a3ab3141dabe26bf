import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions } from 'node:tls';
import { createTestCa, type IssuedCertificate, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { loadGatewayConfig } from '../src';
import { startGateway, TEST_LIMITER_KEY, type RunningGateway } from './support/gateway-harness';
import { send } from './support/http-client';
import { TestUpstream } from './support/test-upstream';

/**
 * A Secret volume as the kubelet lays it out and renews it: the files are symlinks through `..data`
 * to a timestamped directory, and a renewal writes a new directory and renames a new `..data` over
 * the old one (the files the gateway names never change inode).
 */
class SecretVolume {
  readonly dir = mkdtempSync(join(tmpdir(), 'gateway-secret-'));
  private generation = 0;
  private currentData: string | undefined;

  get certFile(): string {
    return join(this.dir, 'tls.crt');
  }

  get keyFile(): string {
    return join(this.dir, 'tls.key');
  }

  publish(cert: string, key: string): void {
    this.generation += 1;
    const data = `..2026_11_25_${String(this.generation).padStart(4, '0')}`;
    mkdirSync(join(this.dir, data));
    writeFileSync(join(this.dir, data, 'tls.crt'), cert);
    writeFileSync(join(this.dir, data, 'tls.key'), key);
    symlinkSync(data, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (this.currentData === undefined) {
      symlinkSync('..data/tls.crt', this.certFile);
      symlinkSync('..data/tls.key', this.keyFile);
    } else {
      rmSync(join(this.dir, this.currentData), { recursive: true, force: true });
    }
    this.currentData = data;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const fingerprintOf = (issued: IssuedCertificate): string => new X509Certificate(issued.cert).fingerprint256;

/** One request on a connection of its own; resolves with the status and the certificate the server presented. */
function get(url: string, ca: string): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false, timeout: 10_000 }, (res) => {
      const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, fingerprint }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

/** A TLS handshake only: the negotiated protocol and suite, or the error that ended it. */
function handshake(port: number, options: ConnectionOptions): Promise<{ protocol: string | null; cipher: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options }, () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().standardName });
      socket.end();
    });
    socket.on('error', (err) => resolve({ error: err.message }));
    socket.setTimeout(10_000, () => socket.destroy(new Error('handshake timed out')));
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, boundMs = 30_000): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${gw.adminUrl}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `) || candidate.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('gateway TLS: profiles and live certificate renewal', () => {
  const notes = new TestUpstream('notes');
  const stats = new TestUpstream('stats');
  let ca: TestCertificateAuthority;
  let first: IssuedCertificate;
  let second: IssuedCertificate;
  let third: IssuedCertificate;
  const volumes: SecretVolume[] = [];
  const gateways: RunningGateway[] = [];

  const gatewayOn = async (volume: SecretVolume, env: Record<string, string> = {}): Promise<RunningGateway> => {
    const gw = await startGateway({ NOTES_URL: notes.url, STATS_URL: stats.url, TLS_CERT_FILE: volume.certFile, TLS_KEY_FILE: volume.keyFile, ...env });
    gateways.push(gw);
    return gw;
  };
  const volumeWith = (issued: IssuedCertificate): SecretVolume => {
    const volume = new SecretVolume();
    volumes.push(volume);
    volume.publish(issued.cert, issued.key);
    return volume;
  };

  beforeAll(async () => {
    await Promise.all([notes.start(), stats.start()]);
    ca = createTestCa('vanish gateway renewal CA');
    [first, second, third] = [1, 2, 3].map(() => ca.issue('127.0.0.1', { ip: ['127.0.0.1'] })) as [IssuedCertificate, IssuedCertificate, IssuedCertificate];
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.stop()));
    await Promise.all([notes.stop(), stats.stop()]);
    for (const volume of volumes) volume.remove();
    ca?.remove();
  });

  it('when the Secret is renewed (..data swapped) under a steady stream of HTTPS requests, then new connections get the new certificate within seconds and no request fails', async () => {
    const volume = volumeWith(first);
    const gw = await gatewayOn(volume);
    const url = `${gw.url}/api/openapi.json`;
    const results: Array<{ status: number; fingerprint: string } | { error: string }> = [];
    let streaming = true;
    const client = async (): Promise<void> => {
      while (streaming) results.push(await get(url, ca.ca).catch((err: Error) => ({ error: err.message })));
    };
    const stream = [client(), client(), client()];
    try {
      await until('requests with the first certificate', () => (results.length >= 10 ? true : undefined));
      const swappedAt = Date.now();
      volume.publish(second.cert, second.key);
      await until('a new connection presenting the renewed certificate', () =>
        results.some((r) => 'fingerprint' in r && r.fingerprint === fingerprintOf(second)) ? true : undefined);
      const seconds = (Date.now() - swappedAt) / 1000;
      const countAtSwitch = results.length;
      await until('more requests after the switch', () => (results.length >= countAtSwitch + 10 ? true : undefined));
      // Within seconds, with room for a loaded machine: the watch reacts after a 250 ms settle.
      expect(seconds).toBeLessThan(15);
    } finally {
      streaming = false;
      await Promise.all(stream);
    }
    expect(results.filter((r) => 'error' in r || r.status !== 200)).toEqual([]);
    const seen = new Set(results.map((r) => ('fingerprint' in r ? r.fingerprint : '')));
    expect(seen).toEqual(new Set([fingerprintOf(first), fingerprintOf(second)]));
    // Once the new certificate was presented, no new connection got the old one.
    const firstNew = results.findIndex((r) => 'fingerprint' in r && r.fingerprint === fingerprintOf(second));
    expect(results.slice(firstNew + 3).filter((r) => 'fingerprint' in r && r.fingerprint === fingerprintOf(first))).toEqual([]);

    expect(await metric(gw, 'gateway_tls_reloads_total')).toBe(1);
    expect(await metric(gw, 'gateway_tls_reload_failures_total')).toBe(0);
    const expiry = await metric(gw, 'gateway_tls_certificate_expiry_seconds');
    const expected = (new Date(new X509Certificate(second.cert).validTo).getTime() - Date.now()) / 1000;
    expect(Math.abs((expiry ?? 0) - expected)).toBeLessThan(120);
    expect(gw.logs.entries().filter((e) => e.msg === 'TLS certificate renewed')).toEqual([
      expect.objectContaining({ fingerprint: fingerprintOf(second), previousFingerprint: fingerprintOf(first), level: 'info' }),
    ]);
  });

  it('when the renewed pair is broken (a key of another certificate, then no PEM), then the old pair keeps serving, an error is logged and counted; SIGHUP retries; a good pair is taken again', async () => {
    const volume = volumeWith(first);
    const gw = await gatewayOn(volume);
    const url = `${gw.url}/api/openapi.json`;
    const failuresLogged = (): number => gw.logs.entries().filter((e) => e.msg === 'TLS certificate not renewed: the previous pair keeps serving').length;

    volume.publish(second.cert, third.key);
    await until('the mismatched pair reported', () => (failuresLogged() >= 1 ? true : undefined));
    expect(await get(url, ca.ca)).toEqual({ status: 200, fingerprint: fingerprintOf(first) });
    expect(await metric(gw, 'gateway_tls_reload_failures_total')).toBe(1);
    const [mismatch] = gw.logs.entries().filter((e) => e.msg === 'TLS certificate not renewed: the previous pair keeps serving');
    expect(mismatch).toMatchObject({ level: 'error', servingFingerprint: fingerprintOf(first), reason: expect.stringMatching(/is not the key of the certificate/) });

    volume.publish('not a certificate\n', second.key);
    await until('the unparsable pair reported', () => (failuresLogged() >= 2 ? true : undefined));
    expect(await get(url, ca.ca)).toEqual({ status: 200, fingerprint: fingerprintOf(first) });
    expect(await metric(gw, 'gateway_tls_reload_failures_total')).toBe(2);

    // SIGHUP reads the files again and reports the same broken pair again (a poll would not).
    // jest gives tests a copy of `process` whose listeners the OS signal never reaches, so the signal is
    // delivered as the real process delivers it to its listeners.
    process.emit('SIGHUP', 'SIGHUP');
    await until('the SIGHUP retry reported', () => (failuresLogged() >= 3 ? true : undefined));
    expect(await get(url, ca.ca)).toEqual({ status: 200, fingerprint: fingerprintOf(first) });

    volume.publish(third.cert, third.key);
    await until('the good pair taken', async () => ((await get(url, ca.ca)).fingerprint === fingerprintOf(third) ? true : undefined));
    expect(await metric(gw, 'gateway_tls_reloads_total')).toBe(1);
    expect(await metric(gw, 'gateway_tls_reload_failures_total')).toBe(3);
  });

  it('when TLS_PROFILE is intermediate (the default), then TLS 1.2 takes ECDHE with AEAD only: no static RSA, no CBC', async () => {
    const gw = await gatewayOn(volumeWith(first));
    const port = Number(new URL(gw.url).port);
    const tls12 = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' } as const;
    expect(await handshake(port, { ...tls12, ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })).toEqual({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' });
    expect(await handshake(port, { ...tls12, ciphers: 'ECDHE-RSA-CHACHA20-POLY1305' })).toEqual({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256' });
    for (const refused of ['AES128-SHA', 'AES256-SHA256', 'AES128-GCM-SHA256', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA384', 'DHE-RSA-AES128-GCM-SHA256']) {
      expect([refused, await handshake(port, { ...tls12, ciphers: refused })]).toEqual([refused, { error: expect.any(String) }]);
    }
    // The server's order wins: a client listing CHACHA20 first still gets AES-128-GCM.
    expect(await handshake(port, { ...tls12, ciphers: 'ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256' }))
      .toEqual({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' });
    expect(await handshake(port, { ecdhCurve: 'secp384r1', ...tls12, ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })).toEqual({ error: expect.any(String) });
    expect(await handshake(port, {})).toMatchObject({ protocol: 'TLSv1.3' });
    expect((await send(`${gw.url}/api/openapi.json`, { ca: ca.ca })).status).toBe(200);
  });

  it('when TLS_PROFILE is modern, then only TLS 1.3 is spoken', async () => {
    const gw = await gatewayOn(volumeWith(first), { TLS_PROFILE: 'modern' });
    const port = Number(new URL(gw.url).port);
    expect(await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })).toEqual({ error: expect.any(String) });
    expect(await handshake(port, {})).toEqual({ protocol: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256' });
    expect(gw.logs.entries().find((e) => e.msg === 'gateway listening')).toMatchObject({ tls: 'modern' });
  });

  it('when TLS_PROFILE is unknown or the key is not the certificate\'s, then the gateway refuses to start and says why', () => {
    const volume = volumeWith(first);
    const base = { LIMITER_KEY: TEST_LIMITER_KEY, TLS_CERT_FILE: volume.certFile, TLS_KEY_FILE: volume.keyFile };
    expect(() => loadGatewayConfig({ ...base, TLS_PROFILE: 'old' })).toThrow(/TLS_PROFILE/);
    const mismatched = volumeWith(first);
    mismatched.publish(first.cert, second.key);
    expect(() => loadGatewayConfig({ ...base, TLS_CERT_FILE: mismatched.certFile, TLS_KEY_FILE: mismatched.keyFile }))
      .toThrow(/is not the key of the certificate/);
  });
});
