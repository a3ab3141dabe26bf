'use strict';
const { Refusal, shown } = require('./errors');

const VERSION = require('../package.json').version;
const TIMEOUT_MS = 30_000;

/**
 * One request to the vanish server. Redirects are never followed: a key proof, a passcode or a note must not be
 * carried to an address the user did not give.
 */
async function send(url, init, origin) {
  let response;
  try {
    response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { 'user-agent': `vanish-cli/${VERSION}`, ...init.headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const reason = err.cause?.code ?? err.cause?.message ?? (err.name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS / 1000} s` : err.message);
    throw new Refusal(`cannot reach ${origin}: ${reason}`);
  }
  if (response.status >= 300 && response.status < 400) {
    throw new Refusal(`the server at ${origin} answered a redirect (HTTP ${response.status}) to ${shown(response.headers.get('location') ?? 'nowhere')}: vanish follows no redirect. If that is the vanish server, use its address instead`);
  }
  return response;
}

/** A bounded read of the answer (a false server could send without end). */
async function bodyText(response, maxBytes = 1_000_000) {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Refusal(`the server's answer is over ${maxBytes} bytes: not a vanish answer`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

module.exports = { VERSION, send, bodyText };
