'use strict';
/*
 * Requests (DECISIONS 15) on the command line:
 *   vanish request  makes an X25519 key pair here, sends only the public key, keeps the private key in a file of its
 *                   own (mode 600), prints the request link (for senders) and the inbox link (for you alone);
 *   vanish send     seals a text and files (--attach, where the request allows them) to a request's public key here
 *                   and submits only the envelope, then uploads the sealed files as a note's (DECISIONS 14);
 *   vanish inbox    lists a request's answers and opens them here, through the inbox page's own form (never /api),
 *                   writing an answer's files to --out DIR as vanish open does.
 */
const fs = require('node:fs');
const path = require('node:path');
const envelope = require('./envelope');
const fileStream = require('./file-stream');
const seal = require('./request-seal');
const { attachments, checkedUploads, checkedDownloads, downloadAll, humanSize, uploadAll } = require('./files');
const { Refusal, UsageError, shown } = require('./errors');
const { bodyText, send } = require('./http');
const { serverOrigin } = require('./links');
const { DEFAULT_SERVER, CONTENT_MAX_CODE_POINTS } = require('./create');
const { decodeEntities, fileDownloads } = require('./page');
const { forTerminal, outDirectory, rescueDirectory } = require('./open');

const ID = /^[A-Za-z0-9_-]{43}$/;
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

function wholeNumber(text, name, min, max) {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

/** A request or inbox link: `https://host/q/<id>` or `https://host/i/<id>#<key>` (plain http:// to this machine only). */
function parseLink(text, kind) {
  let url;
  try {
    url = new URL(String(text).trim());
  } catch {
    url = null;
  }
  const example = kind === 'q' ? 'https://vanish.example/q/<request id>' : 'https://vanish.example/i/<inbox id>#<key>';
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new UsageError(`that is not a link: it looks like ${example}`);
  if (url.protocol === 'http:' && !LOCAL_HOSTS.has(url.hostname)) throw new UsageError(`refusing plain http:// to ${url.host}: use https:// (http:// only to localhost, 127.0.0.1 or [::1])`);
  if (url.username !== '' || url.password !== '' || url.search !== '') throw new UsageError(`that is not a ${kind === 'q' ? 'request' : 'inbox'} link: it looks like ${example}`);
  const match = new RegExp(`^/${kind}/([^/]+)$`).exec(url.pathname);
  if (!match || !ID.test(match[1])) throw new UsageError(`that is not a ${kind === 'q' ? 'request' : 'inbox'} link: it looks like ${example}`);
  const key = url.hash.replace(/^#/, '');
  if (kind === 'i' && !seal.isKeyText(key)) throw new UsageError('the inbox link has no key (the part after #): give the whole link, or --key-file with the file vanish request wrote');
  return { origin: url.origin, id: match[1], key: kind === 'i' ? key : null };
}

async function answerOf(response) {
  try {
    return JSON.parse(await bodyText(response));
  } catch (err) {
    if (err instanceof Refusal) throw err;
    return null;
  }
}

function refusal(what, response, answer) {
  const reason = answer && typeof answer.error === 'string'
    ? `${shown(answer.error)} (${shown(answer.code)}${answer.details?.parameter ? `, ${shown(answer.details.parameter)}` : ''})`
    : `HTTP ${response.status}`;
  return new Refusal(`${what}: ${reason}`);
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function request(options, io) {
  if (typeof options.label !== 'string' || options.label.trim() === '') throw new UsageError('--label is required: what you ask for, shown to senders (not a secret)');
  const origin = serverOrigin(options.server ?? io.env.VANISH_URL ?? DEFAULT_SERVER);
  const body = { label: options.label };
  const count = wholeNumber(options.count, 'count', 1, 1000);
  const days = wholeNumber(options.days, 'days', 1, 90);
  const views = wholeNumber(options.views, 'views', 1, 100);
  if (count !== undefined) body.max_submissions = count;
  if (days !== undefined) body.open_days = days;
  if (views !== undefined) body.max_views = views;
  if (options['allow-files']) body.allow_files = true;
  if (options.notify) body.notification_email = options.notify;
  if (options.webhook) body.webhook_url = options.webhook;
  if (options.origin) body.allowed_origins = options.origin;
  const pair = await seal.newKeyPair();
  body.public_key = pair.publicKey;
  // The key file is made first (new, mode 600), so that a request is never made whose key could not be kept.
  const keyFile = options['key-file'] ?? `vanish-inbox-${pair.publicKey.slice(0, 8).replace(/[^A-Za-z0-9]/g, 'x')}.key`;
  let fd;
  try {
    fd = fs.openSync(keyFile, 'wx', 0o600);
  } catch (err) {
    throw new UsageError(err.code === 'EEXIST' ? `${keyFile} exists: vanish never overwrites a key file` : `cannot create ${keyFile}: ${err.code ?? err.message}`);
  }
  let answer;
  try {
    const response = await send(`${origin}/api/request.php`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) }, origin);
    answer = await answerOf(response);
    if (!response.ok || !answer || answer.success !== true) throw refusal('the server refused the request', response, answer);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(keyFile, { force: true });
    throw err;
  }
  // The links are checked against the server asked; the key goes only onto a link vanish checked.
  const requestLink = parseLink(answer.request_url, 'q');
  const inboxUrl = new URL(String(answer.inbox_url));
  if (requestLink.origin !== origin || inboxUrl.origin !== origin || !/^\/i\/[A-Za-z0-9_-]{43}$/.test(inboxUrl.pathname) || inboxUrl.search !== '' || inboxUrl.hash !== '') {
    fs.closeSync(fd);
    fs.rmSync(keyFile, { force: true });
    throw new Refusal(`the server at ${origin} answered links elsewhere: nothing was printed`);
  }
  const inbox = `${origin}${inboxUrl.pathname}#${pair.privateKey}`;
  const request = `${origin}/q/${requestLink.id}`;
  fs.writeSync(fd, `${JSON.stringify({ inbox, request, private_key: pair.privateKey, public_key: pair.publicKey }, null, 2)}\n`);
  fs.closeSync(fd);
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ ...answer, request_url: request, inbox_url: inbox, key_file: keyFile })}\n`);
    return;
  }
  io.stdout.write(`${request}\n`);
  const lines = [
    'Send the link above to the person who has the secret: it can send you answers, never read them.',
    '', 'Your inbox: keep this, do not share it', inbox,
    'Only for you: the part after # is your private key, made on this machine and never sent. Whoever has this link can read the answers.',
    `The key is also in ${keyFile} (mode 600): vanish inbox --key-file ${keyFile}`,
  ];
  if (answer.webhook_secret !== undefined) lines.push('', `Webhook request reference: ${shown(answer.request_ref)}`, `Webhook signing secret (shown once, not again): ${shown(answer.webhook_secret)}`);
  io.stderr.write(`${lines.join('\n')}\n`);
}

async function sendTo(options, linkText, io) {
  if (linkText === undefined) throw new UsageError('vanish send needs the request link');
  const link = parseLink(linkText, 'q');
  const api = `${link.origin}/api/request/${link.id}.php`;
  const about = await send(api, { headers: { accept: 'application/json' } }, link.origin);
  const described = await answerOf(about);
  if (about.status === 404) throw new Refusal('there is no request at this link: it never existed, or it ended long ago');
  if (about.status === 410) throw new Refusal('this request takes no more answers (its count, its date, or its requester closed it)');
  if (!about.ok || !described || described.success !== true || !seal.isKeyText(described.public_key)) throw refusal('the server did not describe the request', about, described);
  const files = attachments(options.attach ?? []);
  if (files.length > 0 && described.allow_files !== true) throw new UsageError('this request takes text only: its requester did not allow files. Nothing was sent');
  let text;
  try {
    // With files the text is optional: it is read from standard input only when that is not a terminal.
    text = options.file !== undefined ? fs.readFileSync(options.file, 'utf8') : files.length > 0 && io.stdin.isTTY ? '' : await readAll(io.stdin);
  } catch (err) {
    throw new UsageError(`cannot read ${options.file ?? 'standard input'}: ${err.code ?? err.message}`);
  }
  if (text.trim() === '' && files.length === 0) throw new UsageError('the answer is empty');
  if ([...text].length > CONTENT_MAX_CODE_POINTS) throw new UsageError(`the answer is longer than ${CONTENT_MAX_CODE_POINTS} characters`);
  io.stderr.write(`vanish: sealing for a request that asks for: ${shown(described.label, 500)}\n`);
  // K from a fresh ephemeral key and the request's public key; the note under K is a text, or (DECISIONS 14) the
  // manifest of the files and the text, exactly as vanish create seals a note.
  const noteKey = await seal.newNoteKeyTo(described.public_key);
  let noteEnvelope;
  try {
    noteEnvelope = files.length > 0
      ? await fileStream.sealManifest(text.trim() === '' ? '' : text, files.map((file) => file.entry), noteKey.key)
      : await envelope.seal(text, noteKey.key);
  } catch (err) {
    throw new UsageError(err.message);
  }
  const body = { content: seal.requestEnvelope(noteKey.ephemeralPublicKey, noteEnvelope), key_check: await envelope.keyCheck(noteKey.key) };
  if (files.length > 0) body.files = files.map((file) => ({ size: fileStream.sealedSize(file.entry.size) }));
  const response = await send(api, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) }, link.origin);
  const answer = await answerOf(response);
  if (response.status === 410) throw new Refusal('not sent: this request takes no more answers');
  if (!response.ok || !answer || answer.success !== true) throw refusal('the server refused the answer', response, answer);
  if (files.length > 0) {
    // The answer opens once every file is uploaded: "Sent" is said only then.
    const urls = checkedUploads(answer, link.origin, body.files.map((file) => file.size));
    await uploadAll(files, noteKey.key, urls, io.stderr);
  }
  if (options.json) {
    // The upload addresses are bearer secrets of no further use: they are not printed.
    const { uploads: _uploads, ...printed } = answer;
    io.stdout.write(`${JSON.stringify(printed)}\n`);
    return;
  }
  io.stderr.write('Sent. Only the requester can open it.\n');
  if (typeof answer.receipt_url === 'string') io.stderr.write(`\nYour receipt: keep this, do not share it\n${shown(answer.receipt_url)}\n`);
}

function inboxLinkFrom(options, linkText, io) {
  if (options['key-file'] !== undefined) {
    let saved;
    try {
      saved = JSON.parse(fs.readFileSync(options['key-file'], 'utf8'));
    } catch (err) {
      throw new UsageError(`cannot read the key file ${options['key-file']}: ${err.code ?? err.message}`);
    }
    return parseLink(saved.inbox, 'i');
  }
  if (linkText === undefined || linkText === '-') return readAll(io.stdin).then((text) => parseLink(text.split(/\r?\n/).find((line) => line.trim() !== '') ?? '', 'i'));
  return parseLink(linkText, 'i');
}

/** The inbox page's answer to an opening: the envelope the page's script would open. */
function openedEnvelope(html) {
  const match = /<pre\b[^>]*\bid="note-content"[^>]*>/i.exec(html);
  const attribute = match && /\bdata-request-envelope="([^"]*)"/.exec(match[0]);
  return attribute ? decodeEntities(attribute[1]) : null;
}

async function inbox(options, linkText, io) {
  const link = await inboxLinkFrom(options, linkText, io);
  const listing = await send(`${link.origin}/api/inbox/${link.id}.php`, { headers: { accept: 'application/json' } }, link.origin);
  const answer = await answerOf(listing);
  if (listing.status === 404) throw new Refusal('there is no inbox at this link');
  if (!listing.ok || !answer || answer.success !== true) throw refusal('the server did not list the inbox', listing, answer);
  // The key must be this inbox's own: a key that is not would open nothing, and its proofs would be refused.
  if ((await seal.publicKeyOf(link.key)) !== answer.public_key) throw new Refusal('the key in this inbox link is not the key of this inbox: nothing was asked');
  if (options.close) {
    const closed = await send(`${link.origin}/i/${link.id}/close`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }, link.origin).catch((err) => {
      // A 303 back to the inbox page is the success.
      if (/HTTP 303/.test(err.message)) return { status: 303 };
      throw err;
    });
    if (closed.status !== 303) throw new Refusal(`the server did not close the request (HTTP ${closed.status})`);
    io.stderr.write('The request is closed: it takes no more answers.\n');
    return;
  }
  const items = answer.submissions;
  if (options.open === undefined && !options.all) {
    if (options.json) {
      io.stdout.write(`${JSON.stringify(answer)}\n`);
      return;
    }
    io.stdout.write(`Asked for: ${shown(answer.label, 500)}\nStatus: ${shown(answer.status)} (${items.length} of ${answer.max_submissions} answers), open until ${shown(answer.expires_at)} UTC\n`);
    for (const item of items) io.stdout.write(`  ${item.submission}\t${shown(item.submitted_at)} UTC\t${humanSize(item.size)} sealed\t${shown(item.state)}\n`);
    if (items.length === 0) io.stdout.write('  (nothing yet)\n');
    return;
  }
  // An existing file is never a place for an answer's files: refused before anything is opened.
  if (options.out !== undefined && fs.existsSync(options.out) && !fs.statSync(options.out).isDirectory()) {
    throw new UsageError(`${options.out} exists and is not a directory: an answer's files need a directory (--out DIR). Nothing was opened`);
  }
  let filesDir = null;
  const wanted = options.all ? items.filter((item) => item.state !== 'expired').map((item) => item.submission) : [wholeNumber(options.open, 'open', 1, 1000)];
  for (const number of wanted) {
    const item = items.find((candidate) => candidate.submission === number);
    if (!item) throw new Refusal(`there is no answer ${number} in this inbox`);
    const keyCheck = await seal.keyCheckFor(link.key, item.ephemeral_key);
    const page = await send(`${link.origin}/i/${link.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', 'accept-language': 'en' },
      body: new URLSearchParams({ submission: String(number), key_check: keyCheck }).toString(),
    }, link.origin);
    const html = await bodyText(page);
    if (page.status === 410) throw new Refusal(`answer ${number} can no longer be opened: opened to its last view, expired, or ended by its sender`);
    if (page.status === 409) throw new Refusal(`answer ${number}'s files are still being uploaded by its sender: try again later. Nothing was consumed`);
    if (page.status !== 200) throw new Refusal(`the server answered HTTP ${page.status} to opening answer ${number}`);
    const envelope = openedEnvelope(html);
    if (!envelope) throw new Refusal('the server answered no sealed envelope: vanish shows nothing else in its place');
    const key = await seal.noteKeyFor(link.key, item.ephemeral_key);
    let text;
    let files;
    try {
      ({ text, files } = await fileStream.openNote(envelope, key));
    } catch (err) {
      if (err.code === 'MANIFEST') throw new Refusal(`answer ${number}: ${err.message}. The view was used`);
      throw new Refusal(`answer ${number} does not open with the inbox's key: it was changed on the way or on the server. The view was used`);
    }
    if (options.all) io.stdout.write(`--- answer ${number} (${shown(item.submitted_at)} UTC) ---\n`);
    if (files) {
      // DECISIONS 14: the answer's files, downloaded, opened as they arrive and written as vanish open writes a note's.
      const urls = checkedDownloads(fileDownloads(html), files, link.origin);
      if (!filesDir) {
        filesDir = options.out !== undefined ? outDirectory(options.out) : { dir: rescueDirectory(`answer-${number}`), made: true };
        if (options.out === undefined) io.stderr.write(`vanish: answer ${number} carries files and no --out was given: they are written to ${filesDir.dir}\n`);
      }
      const written = await downloadAll(urls, files, key, filesDir.dir, options.force === true, io.stderr);
      const lines = [`vanish: ${written.length === 1 ? `the file of answer ${number} was` : `the ${written.length} files of answer ${number} were`} written to ${filesDir.dir}:`];
      for (const { entry, target } of written) {
        lines.push(`  ${path.basename(target)}  ${humanSize(entry.size)}${path.basename(target) !== entry.name ? ` (the answer names it ${JSON.stringify(entry.name)})` : ''}`);
      }
      io.stderr.write(`${lines.join('\n')}\n`);
      if (text === '') continue;
    }
    if (io.stdout.isTTY) {
      const { safe, changed } = forTerminal(text);
      io.stdout.write(safe);
      if (changed) io.stderr.write('vanish: the answer holds control characters: each is shown above as \\xNN (its code in hex).\n');
    } else {
      io.stdout.write(options.all && !text.endsWith('\n') ? `${text}\n` : text);
    }
  }
}

module.exports = { request, sendTo, inbox, parseLink, openedEnvelope };
