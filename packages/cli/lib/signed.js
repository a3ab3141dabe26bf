'use strict';
/*
 * Signed receipts, checked on this machine with node:crypto alone (DECISIONS 12 and 16): RFC 8785 canonical
 * JSON of the receipt, a detached Ed25519 JWS over it, the key from a key set the user saved. An export of
 * several receipts must be exactly the canonical JSON of what it holds, so that no byte of it goes unchecked.
 */
const { createPublicKey, verify } = require('node:crypto');

/** RFC 8785 for what receipts and manifests hold: strings, safe integers, booleans, null, arrays, objects. */
function canonicalJson(value) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error('only safe integers can be canonicalized here');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  throw new Error(`cannot canonicalize a ${typeof value}`);
}

/** One `{receipt, signature}`: { valid, kid } or { valid: false, reason }. */
function verifySigned(entry, keySet) {
  const { receipt, signature } = entry ?? {};
  if (typeof receipt !== 'object' || receipt === null || typeof signature?.jws !== 'string') return { valid: false, reason: 'no receipt or no signature' };
  const [headerPart, empty, signaturePart, ...rest] = signature.jws.split('.');
  if (!headerPart || empty !== '' || !signaturePart || rest.length > 0) return { valid: false, reason: 'the signature is not a detached JWS' };
  let header;
  try {
    const headerText = Buffer.from(headerPart, 'base64url').toString('utf8');
    header = JSON.parse(headerText);
    // The service writes its header canonically; any other form (a repeated key included) is refused.
    if (canonicalJson(header) !== headerText) throw new Error('not canonical');
  } catch {
    return { valid: false, reason: 'unreadable JWS header' };
  }
  if (header.alg !== 'EdDSA' || typeof header.kid !== 'string' || Object.keys(header).sort().join(',') !== 'alg,kid') return { valid: false, reason: 'unexpected JWS header' };
  if (signature.alg !== 'EdDSA' || signature.kid !== header.kid || Object.keys(signature).sort().join(',') !== 'alg,jws,kid') return { valid: false, reason: 'the signature\'s alg or kid is not its JWS\'s' };
  const jwk = (keySet?.keys ?? []).find((key) => key.kid === header.kid);
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') return { valid: false, reason: `no published Ed25519 key "${header.kid}"` };
  let payload;
  try {
    payload = Buffer.from(canonicalJson(receipt), 'utf8').toString('base64url');
  } catch (err) {
    return { valid: false, reason: err.message };
  }
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const ok = verify(null, Buffer.from(`${headerPart}.${payload}`, 'ascii'), key, Buffer.from(signaturePart, 'base64url'));
  return ok ? { valid: true, kid: header.kid } : { valid: false, reason: 'the signature does not match the receipt' };
}

/** An export (`vanish-receipts/1`): every byte as written, every receipt signed by a key of `keySet`. */
function verifyExportText(text, keySet) {
  const invalid = (reason) => ({ valid: false, lines: [`INVALID: ${reason}`] });
  let saved;
  try {
    saved = JSON.parse(text);
  } catch {
    return invalid('the export is not JSON (a byte was changed, added or removed)');
  }
  if (typeof saved !== 'object' || saved === null || saved.format !== 'vanish-receipts/1' || Object.keys(saved).length !== 2 || !Array.isArray(saved.receipts) || saved.receipts.length === 0) {
    return invalid('not a vanish-receipts/1 export with at least one receipt');
  }
  let canonical;
  try { canonical = canonicalJson(saved); } catch (err) { return invalid(err.message); }
  if (canonical !== text) return invalid('the export is not exactly as written (a byte was changed, added or removed)');
  for (const [index, entry] of saved.receipts.entries()) {
    if (typeof entry !== 'object' || entry === null || Object.keys(entry).sort().join(',') !== 'receipt,signature') return invalid(`receipt ${index + 1} holds more or less than a receipt and its signature`);
    const result = verifySigned(entry, keySet);
    if (!result.valid) return invalid(`receipt ${index + 1}: ${result.reason}`);
  }
  const lines = [`VALID: ${saved.receipts.length} receipt${saved.receipts.length === 1 ? '' : 's'}, each signed by a key of the key set given`,
    'the receipts name their issuer; they are only as true as that key set is theirs'];
  saved.receipts.forEach(({ receipt: r }, index) => {
    lines.push(`${index + 1}. ${r.issuer} note ${r.note_ref}: ${r.status === 'ended' ? `ended (${r.end_reason})` : r.status}; views used ${r.views_used} of ${r.max_views}; issued ${r.issued_at} UTC`);
  });
  return { valid: true, lines };
}

module.exports = { canonicalJson, verifySigned, verifyExportText };
