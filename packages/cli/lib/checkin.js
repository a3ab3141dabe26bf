'use strict';
/*
 * vanish receipts checkin RECEIPT_LINK (DECISIONS 16): "I am still here" for a note held by a dead-man's switch,
 * exactly as the receipt page's button sends it: the page's own single-use form token, posted back to the same
 * server. The receipt link is a bearer secret: it never goes anywhere but the server it names.
 */
const { Refusal, UsageError, shown } = require('./errors');
const { bodyText, send } = require('./http');
const { attributes } = require('./page');

const RECEIPT_ID = /^[A-Za-z0-9_-]{43}$/;
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const PAGE_HEADERS = { accept: 'text/html', 'accept-language': 'en' };
const GONE = 'there is no receipt at this link: it never existed, or its note ended long enough ago that the receipt was deleted';

/** A receipt link `https://host/r/<receipt id>` (plain http:// to this machine only). */
function receiptLink(text) {
  let url;
  try {
    url = new URL(String(text ?? '').trim());
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new UsageError('that is not a link: a receipt link looks like https://vanish.example/r/<receipt id>');
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') throw new UsageError('a receipt link carries no user name, password, query or #');
  if (url.protocol === 'http:' && !LOCAL_HOSTS.has(url.hostname)) {
    throw new UsageError(`refusing plain http:// to ${url.host}: the receipt link is a secret that can end the note. Use https:// (http:// only to localhost, 127.0.0.1 or [::1])`);
  }
  const match = /^\/r\/([^/]+)$/.exec(url.pathname);
  if (!match || !RECEIPT_ID.test(match[1])) throw new UsageError('that is not a receipt link: its path must be /r/<receipt id> (43 characters), as the creation printed it');
  return { origin: url.origin, id: match[1] };
}

/** The receipt page's check-in form token, or null when the page offers no check-in. */
function checkinToken(html, id) {
  const pattern = /<form\b([^>]*)>([\s\S]*?)<\/form>/gi;
  for (let match = pattern.exec(html); match; match = pattern.exec(html)) {
    const form = attributes(match[1]);
    if ((form.method ?? '').toLowerCase() !== 'post' || form.action !== `/r/${id}/checkin`) continue;
    const input = /<input\b([^>]*)>/gi;
    for (let field = input.exec(match[2]); field; field = input.exec(match[2])) {
      const attrs = attributes(field[1]);
      if (attrs.name === 'form_token' && attrs.value) return attrs.value;
    }
  }
  return null;
}

/** The signed receipt's release part (DECISIONS 16), or null. */
async function releaseOf(link) {
  const answer = await send(`${link.origin}/api/receipt/${link.id}.php`, { headers: { accept: 'application/json' } }, link.origin);
  if (answer.status === 404) throw new Refusal(GONE);
  if (answer.status !== 200) throw new Refusal(`the server answered HTTP ${answer.status} for the receipt`);
  let body;
  try {
    body = JSON.parse(await bodyText(answer));
  } catch {
    throw new Refusal('the server\'s receipt is not JSON: is this a vanish server?');
  }
  return { status: body?.receipt?.status, release: body?.receipt?.release ?? null };
}

/** Checks in once; writes what the receipt says now. Throws a Refusal when there is nothing to check in. */
async function checkin(text, io) {
  const link = receiptLink(text);
  const pageUrl = `${link.origin}/r/${link.id}`;
  // `?as=creator`: whoever holds the receipt link and runs this is its creator; without it the page is the
  // wrong-link guard (DECISIONS 16), which carries no form.
  const page = await send(`${pageUrl}?as=creator`, { headers: PAGE_HEADERS }, link.origin);
  if (page.status === 404) throw new Refusal(GONE);
  if (page.status !== 200) throw new Refusal(`the server answered HTTP ${page.status} for the receipt page`);
  const token = checkinToken(await bodyText(page), link.id);
  if (!token) {
    const { status, release } = await releaseOf(link);
    if (!release || release.kind !== 'silence') throw new Refusal('this note has no dead-man\'s switch: there is nothing to check in');
    if (status === 'ended') throw new Refusal('the note has ended: there is nothing to check in');
    throw new Refusal(`too late: the note opened at ${shown(release.opens_at)} UTC when a check-in was missed`);
  }
  const answer = await send(`${pageUrl}/checkin`, {
    method: 'POST',
    headers: { ...PAGE_HEADERS, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ form_token: token }).toString(),
  }, link.origin).catch((err) => {
    // The page answers 303 back to the receipt: a redirect to that very page is the expected answer.
    if (err instanceof Refusal && err.message.includes('HTTP 303') && err.message.includes(`/r/${link.id}`)) return { status: 303 };
    throw err;
  });
  if (answer.status === 403) throw new Refusal('the server refused the check-in form (its single-use token was already used or has expired): run the command again');
  if (answer.status === 404) throw new Refusal(GONE);
  if (answer.status !== 303) throw new Refusal(`the server answered HTTP ${answer.status} to the check-in`);
  const { release } = await releaseOf(link);
  if (release?.state === 'held') {
    io.stdout.write(`Checked in. The note stays closed until ${release.opens_at} UTC unless you check in again before then.\n`);
    return;
  }
  throw new Refusal(`the check-in came too late: the note opened at ${shown(release?.opens_at ?? 'its deadline')} UTC`);
}

module.exports = { checkin, receiptLink, checkinToken };
