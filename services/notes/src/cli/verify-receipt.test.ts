import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyRing } from '@vanish/common';
import { canonicalJson, ReceiptSigner } from '../receipts/receipt-signer';
import { RECEIPTS_EXPORT_FORMAT, verifyReceiptCommand, verifyReceiptsExport } from './verify-receipt';

/** DECISIONS 16: the wallet's export of signed receipts, checked offline; no byte of it can change unnoticed. */
const receipt = (noteRef: string, status: string) => ({
  version: 1, issuer: 'https://notes.example', note_ref: noteRef, created_at: '2026-01-01 00:00:00', expiry_type: 'view', max_views: 2,
  has_passcode: false, expires_at: '2026-01-02 00:00:00', views_used: status === 'ended' ? 1 : 0, views_left: status === 'ended' ? 0 : 2, status,
  ended_at: status === 'ended' ? '2026-01-01 01:00:00' : null, end_reason: status === 'ended' ? 'creator' : null, purge_after: null,
  timeline: [{ at: '2026-01-01 00:00:00', event: 'created' }], issued_at: '2026-01-01 02:00:00',
});

describe('verify-receipt and an export of several receipts', () => {
  const older = new ReceiptSigner(KeyRing.generate('r1'));
  const ring = new ReceiptSigner(new KeyRing([...KeyRing.generate('r2').keys, ...KeyRing.generate('r1').keys]));
  // Two keys, so that a kid changed from one to the other still names a published key.
  const keys = { keys: [...ring.publicJwks.keys] as unknown as Array<Record<string, string>> };
  const exported = canonicalJson({ format: RECEIPTS_EXPORT_FORMAT, receipts: [ring.sign(receipt('a'.repeat(32), 'active')), ring.sign(receipt('b'.repeat(32), 'ended'))] });

  it('when the export is as written, then it verifies and lists each receipt', () => {
    const checked = verifyReceiptsExport(exported, keys, 'keys.json');
    expect(checked.valid).toBe(true);
    expect(checked.lines[0]).toBe('VALID: 2 receipts, each signed by a key of keys.json');
    expect(checked.lines[3]).toBe(`2. https://notes.example note ${'b'.repeat(32)}: ended (creator); views used 1 of 2; issued 2026-01-01 02:00:00 UTC`);
  });

  it('when any one byte of the export is changed, then it does not verify (every position, each to another byte)', () => {
    const bytes = Buffer.from(exported, 'utf8');
    let passed = 0;
    for (let at = 0; at < bytes.length; at++) {
      const changed = Buffer.from(bytes);
      // A neighbouring character of the same kind where there is one (a digit for a digit, r1 for r2), else a space.
      changed[at] = bytes[at] === 0x31 ? 0x32 : bytes[at] === 0x32 ? 0x31 : bytes[at]! ^ 0x01;
      if (verifyReceiptsExport(changed.toString('utf8'), keys, 'keys.json').valid) passed++;
    }
    expect({ length: bytes.length, passed }).toEqual({ length: bytes.length, passed: 0 });
    // Pretty-printed, a receipt signed by another key, or one with a field added: refused too.
    expect(verifyReceiptsExport(JSON.stringify(JSON.parse(exported), null, 2), keys, 'k').valid).toBe(false);
    const foreign = canonicalJson({ format: RECEIPTS_EXPORT_FORMAT, receipts: [older.sign(receipt('c'.repeat(32), 'active'))] });
    expect(verifyReceiptsExport(foreign, keys, 'k').lines[0]).toMatch(/^INVALID: receipt 1: /);
    const extra = canonicalJson({ format: RECEIPTS_EXPORT_FORMAT, receipts: [{ ...ring.sign(receipt('d'.repeat(32), 'active')), success: true }] });
    expect(verifyReceiptsExport(extra, keys, 'k').valid).toBe(false);
  });

  it('when the command is given an export file, then it exits 0 as written, 1 with one byte changed, and checks --issuer for every receipt', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-export-'));
    try {
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(keys));
      writeFileSync(join(dir, 'export.json'), exported);
      writeFileSync(join(dir, 'changed.json'), exported.replace('"views_used":1', '"views_used":0'));
      const lines: string[] = [];
      expect(await verifyReceiptCommand([join(dir, 'export.json'), '--keys', join(dir, 'keys.json')], (l) => lines.push(l))).toBe(0);
      expect(await verifyReceiptCommand([join(dir, 'changed.json'), '--keys', join(dir, 'keys.json')], (l) => lines.push(l))).toBe(1);
      expect(lines.at(-1)).toBe('INVALID: receipt 2: the signature does not match the receipt');
      const fetchText = async () => JSON.stringify(keys);
      expect(await verifyReceiptCommand([join(dir, 'export.json'), '--issuer', 'https://notes.example'], () => undefined, fetchText)).toBe(0);
      expect(await verifyReceiptCommand([join(dir, 'export.json'), '--issuer', 'https://other.example'], (l) => lines.push(l), fetchText)).toBe(1);
      expect(lines.at(-1)).toBe('INVALID: receipt 1 names the issuer "https://notes.example", not https://other.example');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
