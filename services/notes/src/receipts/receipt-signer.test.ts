import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyRing } from '@vanish/common';
import { verifyReceiptCommand } from '../cli/verify-receipt';
import { classifyClient } from './client-class';
import { canonicalJson, ReceiptSigner, verifySignedReceipt } from './receipt-signer';

const receipt = { version: 1, status: 'ended', views_used: 1, max_views: 2, issuer: 'https://n.example', timeline: [{ event: 'reveal', at: '2026-01-01 00:00:00' }], ended_at: null, end_reason: 'views', issued_at: '2026-01-01 00:00:01' };

describe('receipt signatures', () => {
  it('when JSON is canonicalized, then keys are sorted at every depth and nothing else changes (RFC 8785 for these values)', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'é"' }], A: true })).toBe('{"A":true,"a":[{"c":"é\\"","d":null}],"b":1}');
    expect(() => canonicalJson({ x: 1.5 })).toThrow(/safe integers/);
  });

  it('when a receipt is signed, then the detached JWS verifies, names the signing key, and any change breaks it', () => {
    const signer = new ReceiptSigner(KeyRing.generate('r1'));
    const signed = signer.sign(receipt);
    expect(signed.signature.jws).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(signed.signature.jws.split('.')[0]!, 'base64url').toString())).toEqual({ alg: 'EdDSA', kid: 'r1' });
    expect(verifySignedReceipt(JSON.parse(JSON.stringify(signed)), signer.publicJwks)).toEqual({ valid: true, kid: 'r1' });
    expect(verifySignedReceipt({ ...signed, receipt: { ...receipt, views_used: 0 } }, signer.publicJwks)).toMatchObject({ valid: false });
    expect(verifySignedReceipt(signed, new ReceiptSigner(KeyRing.generate('r1')).publicJwks)).toMatchObject({ valid: false });
    expect(verifySignedReceipt(signed, { keys: [] })).toEqual({ valid: false, reason: 'no published Ed25519 key "r1"' });
  });

  it('when the ring rotates, then the new first key signs and receipts signed by the old key still verify with the published set', () => {
    const old = KeyRing.generate('r1');
    const before = new ReceiptSigner(old).sign(receipt);
    const rotated = new ReceiptSigner(new KeyRing([...KeyRing.generate('r2').keys, ...old.keys]));
    expect(rotated.publicJwks.keys.map((key) => key.kid)).toEqual(['r2', 'r1']);
    expect(rotated.publicJwks.keys[0]).toEqual({ kty: 'OKP', crv: 'Ed25519', x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), kid: 'r2', alg: 'EdDSA', use: 'sig' });
    expect(verifySignedReceipt(before, rotated.publicJwks)).toEqual({ valid: true, kid: 'r1' });
    expect(verifySignedReceipt(rotated.sign(receipt), rotated.publicJwks)).toEqual({ valid: true, kid: 'r2' });
  });

  it('when `verify-receipt` checks saved files, then a good receipt exits 0, a changed one 1, and bad usage 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-receipt-'));
    try {
      const signer = new ReceiptSigner(KeyRing.generate('r1'));
      const signed = JSON.stringify({ success: true, ...signer.sign(receipt) }, null, 2);
      writeFileSync(join(dir, 'receipt.json'), signed);
      writeFileSync(join(dir, 'changed.json'), signed.replace('"views_used": 1', '"views_used": 2'));
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(signer.publicJwks));
      const lines: string[] = [];
      expect(await verifyReceiptCommand([join(dir, 'receipt.json'), '--keys', join(dir, 'keys.json')], (l) => lines.push(l))).toBe(0);
      expect(lines[0]).toMatch(/^VALID: signed by key "r1" of the key set in .*keys\.json/);
      expect(lines[1]).toMatch(/names the issuer https:\/\/n\.example/);
      expect(await verifyReceiptCommand([join(dir, 'changed.json'), '--keys', join(dir, 'keys.json')], (l) => lines.push(l))).toBe(1);
      expect(lines.at(-1)).toMatch(/^INVALID/);
      expect(await verifyReceiptCommand([], () => undefined)).toBe(2);
      expect(await verifyReceiptCommand([join(dir, 'missing.json'), '--keys', join(dir, 'keys.json')], () => undefined)).toBe(2);
      expect(await verifyReceiptCommand([join(dir, 'receipt.json'), '--keys'], () => undefined)).toBe(2);
      expect(await verifyReceiptCommand([join(dir, 'receipt.json'), '--keyz', join(dir, 'keys.json')], () => undefined)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Issue 32 (outside review): the receipt's own issuer is never trusted, http:// issuers are refused, and a
  // repeated key anywhere in the receipt, the key set or the JWS header is refused.
  describe('verify-receipt trusts only keys the user chose', () => {
    let dir: string;
    const attacker = new ReceiptSigner(KeyRing.generate('r1'));
    const forged = { ...receipt, issuer: 'https://attacker.example', status: 'ended', end_reason: 'views' };
    const noFetch = async (url: string): Promise<string> => { throw new Error(`fetched ${url}`); };

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'verify-receipt-'));
      writeFileSync(join(dir, 'forged.json'), JSON.stringify({ success: true, ...attacker.sign(forged) }));
    });
    afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

    it('when neither --keys nor --issuer is given, then it refuses (exit 2) and fetches nothing, even for a receipt whose own issuer would vouch for it', async () => {
      const asked: string[] = [];
      const lines: string[] = [];
      const fetchText = async (url: string) => { asked.push(url); return JSON.stringify(attacker.publicJwks); };
      expect(await verifyReceiptCommand([join(dir, 'forged.json')], (l) => lines.push(l), fetchText)).toBe(2);
      expect(asked).toEqual([]);
      expect(lines.join('\n')).toMatch(/give either --keys FILE or --issuer URL/);
      expect(lines.join('\n')).not.toMatch(/VALID/);
    });

    it('when --issuer names the service the user trusts, then its key set is fetched, and a receipt naming another issuer is INVALID', async () => {
      const trusted = new ReceiptSigner(KeyRing.generate('r1'));
      writeFileSync(join(dir, 'genuine.json'), JSON.stringify({ success: true, ...trusted.sign({ ...receipt, issuer: 'https://notes.example.com' }) }));
      const asked: string[] = [];
      const fetchText = async (url: string) => { asked.push(url); return JSON.stringify(trusted.publicJwks); };
      const lines: string[] = [];
      expect(await verifyReceiptCommand([join(dir, 'genuine.json'), '--issuer', 'https://notes.example.com/'], (l) => lines.push(l), fetchText)).toBe(0);
      expect(asked).toEqual(['https://notes.example.com/.well-known/vanish-receipt-keys.json']);
      expect(lines[0]).toMatch(/^VALID: signed by key "r1" of https:\/\/notes\.example\.com at /);
      expect(await verifyReceiptCommand([join(dir, 'forged.json'), '--issuer', 'https://notes.example.com'], (l) => lines.push(l), fetchText)).toBe(1);
      expect(lines.at(-1)).toMatch(/^INVALID: the receipt names the issuer "https:\/\/attacker\.example", not https:\/\/notes\.example\.com/);
    });

    it.each([
      'http://notes.example.com', 'http://10.0.0.5:8080', 'ftp://notes.example.com', 'notes.example.com', 'https://user:pw@notes.example.com',
      'https://notes.example.com/?x=1',
    ])('when --issuer is %s, then it is refused (exit 2) before anything is fetched', async (issuer) => {
      const lines: string[] = [];
      expect(await verifyReceiptCommand([join(dir, 'forged.json'), '--issuer', issuer], (l) => lines.push(l), noFetch)).toBe(2);
      expect(lines.join('\n')).toMatch(/--issuer/);
    });

    it.each(['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080'])('when --issuer is this machine\'s loopback over http (%s), then it is allowed', async (issuer) => {
      const local = new ReceiptSigner(KeyRing.generate('r1'));
      writeFileSync(join(dir, 'local.json'), JSON.stringify({ success: true, ...local.sign({ ...receipt, issuer }) }));
      expect(await verifyReceiptCommand([join(dir, 'local.json'), '--issuer', issuer], () => undefined, async () => JSON.stringify(local.publicJwks))).toBe(0);
    });

    it('when both --keys and --issuer are given, then it refuses (one source of trust)', async () => {
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(attacker.publicJwks));
      expect(await verifyReceiptCommand([join(dir, 'forged.json'), '--keys', join(dir, 'keys.json'), '--issuer', 'https://attacker.example'], () => undefined, noFetch)).toBe(2);
    });

    it('when a saved receipt repeats a key at any depth (a viewer reading the first copy would show unsigned values), then it is refused', async () => {
      const trusted = new ReceiptSigner(KeyRing.generate('r1'));
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(trusted.publicJwks));
      const text = JSON.stringify({ success: true, ...trusted.sign(receipt) });
      writeFileSync(join(dir, 'good.json'), text);
      expect(await verifyReceiptCommand([join(dir, 'good.json'), '--keys', join(dir, 'keys.json')], () => undefined)).toBe(0);
      const repeats = [
        text.replace('"status":"ended"', '"status":"active","status":"ended"'),
        text.replace('"event":"reveal"', '"event":"created","event":"reveal"'),
        text.replace('"receipt":{', '"receipt":{"views_used":0,'),
        text.replace('"success":true', '"success":true,"\\u0073uccess":true'),
        text.replace('"signature":{', '"signature":{"kid":"r9",'),
      ];
      for (const [index, repeated] of repeats.entries()) {
        expect(repeated).not.toBe(text);
        // JSON.parse keeps the last copy, so the signature checks out on what it reads:
        expect(verifySignedReceipt(JSON.parse(repeated), trusted.publicJwks)).toMatchObject({ valid: true });
        writeFileSync(join(dir, `repeated-${index}.json`), repeated);
        const lines: string[] = [];
        expect(await verifyReceiptCommand([join(dir, `repeated-${index}.json`), '--keys', join(dir, 'keys.json')], (l) => lines.push(l))).toBe(2);
        expect(lines.join('\n')).toMatch(/not strict JSON \(duplicate key "/);
      }
      writeFileSync(join(dir, 'keys-repeated.json'), JSON.stringify(trusted.publicJwks).replace('"kid":"r1"', '"kid":"r0","kid":"r1"'));
      expect(await verifyReceiptCommand([join(dir, 'good.json'), '--keys', join(dir, 'keys-repeated.json')], () => undefined)).toBe(2);
    });

    it('when the JWS header repeats a key, then the signature is INVALID', () => {
      const signer = new ReceiptSigner(KeyRing.generate('r1'));
      const signed = signer.sign(receipt);
      const [, , signature] = signed.signature.jws.split('.');
      const header = Buffer.from('{"alg":"none","alg":"EdDSA","kid":"r1"}').toString('base64url');
      expect(verifySignedReceipt({ ...signed, signature: { ...signed.signature, jws: `${header}..${signature}` } }, signer.publicJwks))
        .toEqual({ valid: false, reason: 'the JWS header is not strict JSON' });
    });
  });
});

describe('classifyClient', () => {
  it.each([
    ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'link_preview_bot'],
    ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', 'link_preview_bot'],
    ['WhatsApp/2.23.20.0', 'link_preview_bot'],
    ['Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)', 'link_preview_bot'],
    ['TelegramBot (like TwitterBot)', 'link_preview_bot'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'browser'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'browser'],
    ['', 'other'],
    [undefined, 'other'],
  ])('when the user agent is %j, then the class is %s', (agent, expected) => {
    expect(classifyClient(agent)).toBe(expected);
  });
});
