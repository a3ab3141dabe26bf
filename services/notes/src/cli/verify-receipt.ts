import { readFileSync } from 'node:fs';
import { verifySignedReceipt } from '../receipts/receipt-signer';

/**
 * `npm run verify-receipt -- receipt.json [--keys keys.json]`: checks a saved receipt (the JSON of
 * GET /api/receipt/{id}.php) offline against saved public keys (/.well-known/vanish-receipt-keys.json).
 * Without --keys the keys are fetched from the receipt's issuer. Prints what the receipt says.
 * Exit codes: 0 valid, 1 invalid signature, 2 usage or unreadable input.
 */
export async function verifyReceiptCommand(args: readonly string[], out: (line: string) => void, fetchKeys: (url: string) => Promise<unknown> = fetchJson): Promise<number> {
  const keysAt = args.indexOf('--keys');
  const keysFile = keysAt >= 0 ? args[keysAt + 1] : undefined;
  const file = args.find((arg, i) => !arg.startsWith('--') && (keysAt < 0 || i !== keysAt + 1));
  if (!file || (keysAt >= 0 && !keysFile)) {
    out('usage: npm run verify-receipt -- receipt.json [--keys vanish-receipt-keys.json]');
    return 2;
  }
  let saved: { receipt?: { issuer?: unknown; status?: unknown; end_reason?: unknown; views_used?: unknown; max_views?: unknown; issued_at?: unknown } };
  let keys: { keys: Array<Record<string, string>> };
  try {
    saved = JSON.parse(readFileSync(file, 'utf8')) as typeof saved;
    if (keysFile) {
      keys = JSON.parse(readFileSync(keysFile, 'utf8')) as typeof keys;
    } else {
      const issuer = saved.receipt?.issuer;
      if (typeof issuer !== 'string' || !/^https?:\/\//.test(issuer)) throw new Error('the receipt names no issuer; pass --keys');
      keys = (await fetchKeys(`${issuer.replace(/\/+$/, '')}/.well-known/vanish-receipt-keys.json`)) as typeof keys;
    }
    if (!Array.isArray(keys?.keys)) throw new Error('the key set has no "keys" array');
  } catch (err) {
    out(`cannot read input: ${(err as Error).message}`);
    return 2;
  }
  const result = verifySignedReceipt(saved, keys);
  if (!result.valid) {
    out(`INVALID: ${result.reason}`);
    return 1;
  }
  const r = saved.receipt!;
  out(`VALID: signed by key "${result.kid}" of ${String(r.issuer)} at ${String(r.issued_at)} UTC`);
  out(`note ${r.status === 'ended' ? `ended (${String(r.end_reason)})` : 'still active'}; views used ${String(r.views_used)} of ${String(r.max_views)}`);
  return 0;
}

async function fetchJson(url: string): Promise<unknown> {
  const answer = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(10_000) });
  if (!answer.ok) throw new Error(`${url} answered ${answer.status}`);
  return answer.json();
}

if (require.main === module) {
  verifyReceiptCommand(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`))
    .then((code) => { process.exitCode = code; })
    .catch((err: unknown) => { process.stderr.write(`${(err as Error).message}\n`); process.exitCode = 2; });
}
