'use strict';
/*
 * vanish create: seals a note on this machine and prints its full link and the receipt link (DECISIONS 13).
 * The text and its key never leave this machine: the server gets the envelope and a proof of the key.
 */
const { readFileSync } = require('node:fs');
const envelope = require('./envelope');
const fileStream = require('./file-stream');
const { attachments, checkedUploads, uploadAll } = require('./files');
const { Refusal, UsageError, shown } = require('./errors');
const { bodyText, send } = require('./http');
const { checkedCreation, serverOrigin } = require('./links');
const { creationPasscode } = require('./passcode');
const { keepReceipt, receiptsFile } = require('./receipts');

const CONTENT_MAX_CODE_POINTS = 10000;
const DEFAULT_SERVER = 'http://localhost:8080';

function wholeNumber(text, name, min, max) {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

function expiryType(type, views, expires) {
  if (type !== undefined) {
    if (!['view', 'time', 'both'].includes(type)) throw new UsageError('--type must be view, time or both');
    return type;
  }
  if (expires !== undefined && views !== undefined) return 'both';
  return expires !== undefined ? 'time' : 'view';
}

async function readContent(file, stdin, withFiles) {
  try {
    if (file !== undefined) return readFileSync(file, 'utf8');
    // With files the text is optional: it is read from standard input only when that is not a terminal.
    if (withFiles && stdin.isTTY) return '';
    if (stdin.isTTY) process.stderr.write('Type the note, then press Ctrl-D on a line of its own (or give --file PATH):\n');
    const chunks = [];
    for await (const chunk of stdin) chunks.push(chunk);
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file ?? 'standard input'}: ${err.code ?? err.message}`);
  }
}

/** The creation request of the options (everything but the note and the passcode, which are read later). */
function creationFields(options) {
  const views = wholeNumber(options.views, 'views', 1, 100);
  const expires = wholeNumber(options.expires, 'expires', 1, 8760);
  const fields = { expiry_type: expiryType(options.type, views, expires) };
  if (views !== undefined) fields.max_views = views;
  if (expires !== undefined) fields.expiry_time = expires;
  if (options.notify) fields.notification_email = options.notify;
  if (options['send-link']) fields.send_link_email = options['send-link'];
  if (options.webhook !== undefined) {
    // The server checks the rest (a public address, https in production: docs/webhooks.md).
    if (!/^https?:\/\//i.test(options.webhook) || !URL.canParse(options.webhook)) throw new UsageError('--webhook must be an https:// (or http://) URL');
    fields.webhook_url = options.webhook;
  }
  // DECISIONS 16: the creator's time controls (the server checks them against the clock and the expiry).
  const shrink = wholeNumber(options['shrink-after-first-view'], 'shrink-after-first-view', 1, 525600);
  if (shrink !== undefined) fields.shrink_after_first_view_minutes = shrink;
  if (options['available-from'] !== undefined) fields.available_from = options['available-from'];
  const silence = wholeNumber(options['release-after-silence'], 'release-after-silence', 1, 8760);
  if (silence !== undefined) fields.release_after_silence_hours = silence;
  if (silence !== undefined && options['available-from'] !== undefined) throw new UsageError('--available-from and --release-after-silence cannot be combined: choose one release');
  return fields;
}

/** What the writer must keep (the receipt) and may need (webhook secret), said as the created page says it. */
function notices(answer, checked) {
  const lines = ['The link above is the only key to the note: it cannot be shown again.'];
  if (answer.has_passcode === true) lines.push('The reader also needs the passcode; send it another way.');
  if (checked.receiptUrl) {
    lines.push('', 'Your receipt: keep this, do not share it', checked.receiptUrl,
      'Only for you: it shows whether the note was opened, by a person or a link preview, and lets you end it early.',
      'It never shows the note. Whoever has it can end the note, so do not send it with the link.');
  }
  if (answer.available_from !== undefined) lines.push(`It opens at ${shown(answer.available_from)} UTC; before that no one can read it.`);
  if (answer.release_after_silence_hours !== undefined) {
    lines.push(`It stays closed while you check in at least every ${shown(answer.release_after_silence_hours)} hours (vanish receipts checkin RECEIPT_LINK,`,
      'or "I am still here" on the receipt page), and opens when you miss a check-in.');
  }
  if (answer.webhook_secret !== undefined) {
    lines.push('', `Webhook note reference: ${shown(answer.note_ref)}`, `Webhook signing secret (shown once, not again): ${shown(answer.webhook_secret)}`,
      'Check each event\'s signature with this secret (docs/webhooks.md).');
  }
  return `${lines.join('\n')}\n`;
}

async function create(options, io) {
  const fields = creationFields(options);
  const origin = serverOrigin(options.server ?? io.env.VANISH_URL ?? DEFAULT_SERVER);
  const files = attachments(options.attach ?? []);
  const text = await readContent(options.file, io.stdin, files.length > 0);
  if (text.trim() === '' && files.length === 0) throw new UsageError('the note is empty');
  if ([...text].length > CONTENT_MAX_CODE_POINTS) throw new UsageError(`the note is longer than ${CONTENT_MAX_CODE_POINTS} characters`);
  const passcode = await creationPasscode({ file: options['passcode-file'], ask: options['ask-passcode'] === true, env: io.env });

  const key = envelope.newKey();
  let content;
  try {
    // DECISIONS 14: with files, the envelope carries the manifest (names, sizes, nonces) and the text, if any.
    content = files.length > 0 ? await fileStream.sealManifest(text.trim() === '' ? '' : text, files.map((file) => file.entry), key) : await envelope.seal(text, key);
  } catch (err) {
    throw new UsageError(err.message);
  }
  const body = { client_encrypted: true, content, key_check: await envelope.keyCheck(key), ...fields };
  if (files.length > 0) body.files = files.map((file) => ({ size: fileStream.sealedSize(file.entry.size) }));
  if (passcode !== null) body.passcode = passcode;

  const response = await send(`${origin}/api/create.php`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  }, origin);
  let answer = null;
  try {
    answer = JSON.parse(await bodyText(response));
  } catch (err) {
    if (err instanceof Refusal) throw err;
  }
  if (!response.ok || answer === null || typeof answer !== 'object' || answer.success !== true) {
    const reason = answer && typeof answer.error === 'string'
      ? `${shown(answer.error)} (${shown(answer.code)}${answer.details?.parameter ? `, ${shown(answer.details.parameter)}` : ''})`
      : `HTTP ${response.status}`;
    throw new Refusal(`the server refused the note: ${reason}`);
  }
  const checked = checkedCreation(answer, origin);
  if (files.length > 0) {
    // The note is readable once every file is uploaded: the link is printed only then.
    const urls = checkedUploads(answer, origin, body.files.map((file) => file.size));
    await uploadAll(files, key, urls, io.stderr);
  }
  const link = `${checked.url}#${key}`;
  // DECISIONS 16: the CLI's receipt wallet (vanish receipts list/export). Keeping it never fails the note.
  if (checked.receiptUrl) {
    try {
      keepReceipt(io.env, checked.receiptUrl, new Date());
    } catch (err) {
      io.stderr.write(`vanish: the receipt was not kept in ${receiptsFile(io.env)} (${err.code ?? err.message}): keep its link yourself\n`);
    }
  }
  if (options.json) {
    const receipt = checked.receiptUrl ? { receipt_url: checked.receiptUrl } : {};
    // The upload addresses are bearer secrets of no further use: they are not printed.
    const { uploads: _uploads, ...printed } = answer;
    io.stdout.write(`${JSON.stringify({ ...printed, url: checked.url, ...receipt, link, key })}\n`);
  } else {
    // The link alone on stdout, so that `vanish create | pbcopy` or `link=$(vanish create)` never carries the
    // receipt along with it; what is for the writer only goes to the terminal on stderr.
    io.stdout.write(`${link}\n`);
    io.stderr.write(notices(answer, checked));
  }
}

module.exports = { create, creationFields, CONTENT_MAX_CODE_POINTS, DEFAULT_SERVER };
