import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseStrictJson } from '@vanish/common';
import { canonicalJson, verifySignedReceipt } from '../receipts/receipt-signer';

export const VERIFY_RECEIPT_USAGE = [
  'usage: npm run verify-receipt -- receipt.json --keys vanish-receipt-keys.json',
  '       npm run verify-receipt -- receipt.json --issuer https://notes.example.com',
  'A receipt cannot vouch for itself: give the key set you saved, or the address of the service you trust.',
].join('\n');

/** The key set's path under an issuer (DECISIONS 12). */
export const RECEIPT_KEYS_PATH = '/.well-known/vanish-receipt-keys.json';

/** A key set larger than this is no vanish key set: the read stops there. */
const MAX_KEY_SET_BYTES = 64 * 1024;

export type FetchText = (url: string) => Promise<string>;

class UsageError extends Error {}

interface ReceiptsExport {
  format: string;
  receipts?: unknown;
}

/** The receipt wallet's export (DECISIONS 16): canonical JSON of `{format, receipts: [{receipt, signature}…]}`. */
export const RECEIPTS_EXPORT_FORMAT = 'vanish-receipts/1';

interface SavedReceipt {
  receipt?: { issuer?: unknown; status?: unknown; end_reason?: unknown; views_used?: unknown; max_views?: unknown; issued_at?: unknown };
}

/**
 * `npm run verify-receipt -- receipt.json (--keys keys.json | --issuer https://…)`: checks a saved
 * receipt (the JSON of GET /api/receipt/{id}.php) against keys the user chose: a saved key set
 * (/.well-known/vanish-receipt-keys.json), or the key set of an issuer named on the command line,
 * fetched over HTTPS (plain HTTP only from this machine's loopback). The issuer the receipt names is
 * never trusted by itself: anyone can sign a receipt under their own issuer. With --issuer, the
 * receipt must name that issuer. The receipt and the key set are parsed strictly: a key repeated in
 * any object is refused, since a viewer keeping the first copy would show values that were not signed.
 * Exit codes: 0 valid, 1 invalid signature, 2 usage or unreadable input.
 */
export async function verifyReceiptCommand(args: readonly string[], out: (line: string) => void, fetchText: FetchText = fetchKeySet): Promise<number> {
  let file: string;
  let keysFile: string | undefined;
  let issuer: string | undefined;
  try {
    ({ file, keysFile, issuer } = parseCommandLine(args));
  } catch (err) {
    out(`${(err as Error).message}\n${VERIFY_RECEIPT_USAGE}`);
    return 2;
  }
  let saved: SavedReceipt;
  let text: string;
  let keys: { keys: Array<Record<string, string>> };
  let source: string;
  try {
    text = readFileSync(file, 'utf8');
    saved = readStrict(text, file) as SavedReceipt;
    if (keysFile !== undefined) {
      keys = readStrict(readFileSync(keysFile, 'utf8'), keysFile) as typeof keys;
      source = `the key set in ${keysFile}`;
    } else {
      const url = `${issuer!}${RECEIPT_KEYS_PATH}`;
      keys = readStrict(await fetchText(url), url) as typeof keys;
      source = issuer!;
    }
    if (!Array.isArray(keys?.keys)) throw new Error('the key set has no "keys" array');
  } catch (err) {
    out(`cannot read input: ${(err as Error).message}`);
    return 2;
  }
  if ((saved as { format?: unknown }).format === RECEIPTS_EXPORT_FORMAT) {
    const checked = verifyReceiptsExport(text, keys, source, issuer, keysFile !== undefined);
    for (const line of checked.lines) out(line);
    return checked.valid ? 0 : 1;
  }
  const named = saved.receipt?.issuer;
  if (issuer !== undefined && (typeof named !== 'string' || named.replace(/\/+$/, '') !== issuer)) {
    out(`INVALID: the receipt names the issuer ${JSON.stringify(named)}, not ${issuer}`);
    return 1;
  }
  const result = verifySignedReceipt(saved, keys);
  if (!result.valid) {
    out(`INVALID: ${result.reason}`);
    return 1;
  }
  const r = saved.receipt!;
  out(`VALID: signed by key "${result.kid}" of ${source} at ${String(r.issued_at)} UTC`);
  if (keysFile !== undefined) out(`the receipt names the issuer ${String(r.issuer)}; it is only as true as that key set is theirs`);
  out(`note ${r.status === 'ended' ? `ended (${String(r.end_reason)})` : 'still active'}; views used ${String(r.views_used)} of ${String(r.max_views)}`);
  return 0;
}

/**
 * An export of several signed receipts (the wallet's, `vanish receipts export`). Every byte of it is checked:
 * the file must be exactly the canonical JSON of what it holds (so no byte can change without changing a
 * value or breaking the form), it holds the format and the receipts and nothing else, each signature names
 * exactly the key and algorithm of its JWS, and each receipt verifies. One failure fails the file.
 */
export function verifyReceiptsExport(text: string, keys: { keys: Array<Record<string, string>> }, source: string, issuer?: string, fromFile = true): { valid: boolean; lines: string[] } {
  const invalid = (reason: string) => ({ valid: false, lines: [`INVALID: ${reason}`] });
  let saved: ReceiptsExport;
  try {
    saved = parseStrictJson(text) as ReceiptsExport;
  } catch {
    return invalid('the export is not strict JSON (a byte was changed, added or removed)');
  }
  if (typeof saved !== 'object' || saved === null || saved.format !== RECEIPTS_EXPORT_FORMAT || Object.keys(saved).length !== 2 || !Array.isArray(saved.receipts) || saved.receipts.length === 0) {
    return invalid(`not a ${RECEIPTS_EXPORT_FORMAT} export with at least one receipt`);
  }
  if (text !== canonicalJson(saved)) return invalid('the export is not exactly as written (a byte was changed, added or removed)');
  const receipts = saved.receipts as Array<SavedReceipt & { signature?: Record<string, unknown> }>;
  for (const [index, entry] of receipts.entries()) {
    const named = entry?.receipt?.issuer;
    if (issuer !== undefined && (typeof named !== 'string' || named.replace(/\/+$/, '') !== issuer)) {
      return invalid(`receipt ${index + 1} names the issuer ${JSON.stringify(named)}, not ${issuer}`);
    }
    if (typeof entry !== 'object' || entry === null || Object.keys(entry).sort().join(',') !== 'receipt,signature') {
      return invalid(`receipt ${index + 1} holds more or less than a receipt and its signature`);
    }
    const result = verifySignedReceipt(entry, keys);
    if (!result.valid) return invalid(`receipt ${index + 1}: ${result.reason}`);
    const signature = entry.signature!;
    if (Object.keys(signature).sort().join(',') !== 'alg,jws,kid' || signature.alg !== 'EdDSA' || signature.kid !== result.kid) {
      return invalid(`receipt ${index + 1}: its signature's alg or kid is not the one its JWS was made with`);
    }
  }
  const lines = [`VALID: ${receipts.length} receipt${receipts.length === 1 ? '' : 's'}, each signed by a key of ${source}`];
  if (fromFile) lines.push('the receipts name their issuer; they are only as true as that key set is theirs');
  for (const [index, { receipt: r }] of receipts.entries()) {
    lines.push(`${index + 1}. ${String(r!.issuer)} note ${String((r as { note_ref?: unknown }).note_ref)}: ${r!.status === 'ended' ? `ended (${String(r!.end_reason)})` : String(r!.status)}; views used ${String(r!.views_used)} of ${String(r!.max_views)}; issued ${String(r!.issued_at)} UTC`);
  }
  return { valid: true, lines };
}

function parseCommandLine(args: readonly string[]): { file: string; keysFile?: string; issuer?: string } {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError('give exactly one receipt file');
  if ((values.keys === undefined) === (values.issuer === undefined)) {
    throw new UsageError('give either --keys FILE or --issuer URL (the issuer the receipt itself names is not trusted)');
  }
  return { file: positionals[0]!, keysFile: values.keys, issuer: values.issuer === undefined ? undefined : trustedIssuer(values.issuer) };
}

function parseOptions(args: readonly string[]) {
  return parseArgs({ args: [...args], allowPositionals: true, strict: true, options: { keys: { type: 'string' }, issuer: { type: 'string' } } });
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/**
 * The issuer as receipts name it (PUBLIC_BASE_URL without a trailing slash). HTTPS only: a key set
 * fetched over plain HTTP could be swapped on the way. Plain HTTP is allowed to this machine's
 * loopback alone (the all-in-one on http://localhost:8080), where no one on a network sits between.
 */
export function trustedIssuer(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--issuer ${JSON.stringify(value)} is not an absolute URL`);
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new UsageError(`--issuer must be an https:// address (plain http:// only for localhost), not ${url.protocol}//${url.host}`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new UsageError('--issuer must be the service\'s address alone (no credentials, query or fragment)');
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function readStrict(text: string, where: string): unknown {
  try {
    return parseStrictJson(text);
  } catch (err) {
    throw new Error(`${where} is not strict JSON (${(err as Error).message}); a repeated key could show values that were not signed`);
  }
}

/** The key set over HTTPS: no redirect followed, a deadline, and at most 64 KiB read. */
async function fetchKeySet(url: string): Promise<string> {
  const answer = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(10_000) });
  if (!answer.ok) throw new Error(`${url} answered ${answer.status}`);
  const reader = answer.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_KEY_SET_BYTES) {
      await reader.cancel();
      throw new Error(`${url} answered more than ${MAX_KEY_SET_BYTES / 1024} KiB`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

if (require.main === module) {
  verifyReceiptCommand(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`))
    .then((code) => { process.exitCode = code; })
    .catch((err: unknown) => { process.stderr.write(`${(err as Error).message}\n`); process.exitCode = 2; });
}
