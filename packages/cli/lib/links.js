'use strict';
/*
 * Where vanish may talk, and which links it will put a key on (DECISIONS 13). The key goes only into a link
 * that vanish made itself from the server it asked: the server's answer is checked, never trusted.
 */
const envelope = require('./envelope');
const { Refusal, UsageError, shown } = require('./errors');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RECEIPT_PATH = /^\/r\/[A-Za-z0-9_-]{43}$/;
/** Plain http:// is for a server on this machine only: anywhere else, anyone on the way sees the traffic. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function parsedUrl(text) {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function refuseInsecure(url) {
  if (url.protocol === 'http:' && !LOCAL_HOSTS.has(url.hostname)) {
    throw new UsageError(`refusing plain http:// to ${url.host}: anyone on the way could read or change what is sent and answered. Use https:// (http:// only to localhost, 127.0.0.1 or [::1])`);
  }
}

/** The origin of --server / VANISH_URL: http(s), no credentials, no path, and plain HTTP only to this machine. */
function serverOrigin(text) {
  const url = parsedUrl(text);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new UsageError(`the server must be an https:// URL such as https://vanish.example, not "${shown(text)}"`);
  if (url.username !== '' || url.password !== '') throw new UsageError('the server URL must not carry a user name or password');
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') throw new UsageError(`the server is an origin alone (such as ${url.origin}), without a path, query or #`);
  refuseInsecure(url);
  return url.origin;
}

/** A link of a page on `origin` at exactly `path`: no credentials, query or fragment. */
function sameOriginPath(text, origin, pathTest) {
  const url = typeof text === 'string' ? parsedUrl(text) : null;
  return url !== null && url.origin === origin && url.username === '' && url.password === ''
    && url.search === '' && url.hash === '' && pathTest(url.pathname) ? url : null;
}

/**
 * Checks a creation answer against the server that was asked. Returns the note's link (without the key) and the
 * receipt's, both rebuilt from `origin`; throws a Refusal when the server pointed anywhere else.
 */
function checkedCreation(answer, origin) {
  if (typeof answer.uuid !== 'string' || !UUID.test(answer.uuid)) throw new Refusal(`the server at ${origin} answered no note id (uuid ${shown(answer.uuid)}): nothing was printed`);
  const uuid = answer.uuid;
  if (!sameOriginPath(answer.url, origin, (path) => path === `/${uuid}`)) {
    throw new Refusal(`the server at ${origin} answered the link ${shown(answer.url)}, not ${origin}/${uuid}. vanish puts its key only on a link to the server it asked, so it printed no link and no key (if the server's public address differs, give that one with --server)`);
  }
  let receipt = null;
  if (answer.receipt_url !== undefined) {
    const url = sameOriginPath(answer.receipt_url, origin, (path) => RECEIPT_PATH.test(path));
    if (!url) throw new Refusal(`the server at ${origin} answered the receipt link ${shown(answer.receipt_url)}, not one of ${origin}/r/…: nothing was printed`);
    receipt = `${origin}${url.pathname}`;
  }
  return { uuid, url: `${origin}/${uuid}`, receiptUrl: receipt };
}

/**
 * A note link given to `vanish open`: `https://host/<uuid>#<key>` (plain http:// to this machine only). The key
 * may be missing (a note the server encrypted has none; a writer may send the key another way).
 */
function noteLink(text) {
  const url = parsedUrl(text.trim());
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new UsageError('that is not a link: a note link looks like https://vanish.example/<note id>#<key>');
  if (url.username !== '' || url.password !== '') throw new UsageError('a note link carries no user name or password');
  refuseInsecure(url);
  const match = /^\/([^/]+)$/.exec(url.pathname);
  if (!match || !UUID.test(match[1]) || url.search !== '') throw new UsageError('that is not a note link: its path must be /<note id> alone (no query), as in https://vanish.example/<note id>#<key>');
  const fragment = url.hash.replace(/^#/, '');
  if (fragment !== '' && !envelope.parseKey(fragment)) throw new UsageError('the part after # is not a vanish key (43 characters of A-Z, a-z, 0-9, - and _): check that the link was copied whole');
  return { origin: url.origin, uuid: match[1], key: fragment === '' ? null : fragment };
}

module.exports = { UUID, serverOrigin, checkedCreation, noteLink };
