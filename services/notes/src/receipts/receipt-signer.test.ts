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
      expect(lines[0]).toMatch(/^VALID: signed by key "r1" of https:\/\/n\.example/);
      expect(await verifyReceiptCommand([join(dir, 'changed.json'), '--keys', join(dir, 'keys.json')], (l) => lines.push(l))).toBe(1);
      expect(lines.at(-1)).toMatch(/^INVALID/);
      // Without --keys, the keys come from the receipt's issuer.
      const asked: string[] = [];
      expect(await verifyReceiptCommand([join(dir, 'receipt.json')], () => undefined, async (url) => { asked.push(url); return signer.publicJwks; })).toBe(0);
      expect(asked).toEqual(['https://n.example/.well-known/vanish-receipt-keys.json']);
      expect(await verifyReceiptCommand([], () => undefined)).toBe(2);
      expect(await verifyReceiptCommand([join(dir, 'missing.json'), '--keys', join(dir, 'keys.json')], () => undefined)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
