#!/usr/bin/env node
'use strict';
/*
 * vanish create: seals a note on this machine and prints its full link (DECISIONS 13). The text and its
 * key never leave this machine; the server stores the envelope and a proof of the key. This client never
 * reveals a note: notes are read on vanish's web pages (SPEC 1).
 */
const { readFileSync } = require('node:fs');
const { parseArgs } = require('node:util');
const envelope = require('@vanish/envelope');

const VERSION = require('../package.json').version;
const CONTENT_MAX_CODE_POINTS = 10000;
const DEFAULT_SERVER = 'http://localhost:8080';

const USAGE = `Usage: vanish create [options] [< file]

Seals a note on this machine and prints its link. The key is the part after #: the server never sees it.

Options:
  -f, --file PATH        read the note from PATH (default: standard input)
  -v, --views N          views allowed, 1-100 (default 1)
  -e, --expires HOURS    hours until it expires, 1-8760 (default 24 when it expires by time)
  -t, --type TYPE        view, time or both (default: from --views and --expires; view when neither)
  -p, --passcode TEXT    a passcode the reader must type too (or set VANISH_PASSCODE)
  -n, --notify EMAIL     e-mail this address when the note is read
  -s, --send-link EMAIL  e-mail the link to this address (without the key: send that yourself)
      --server URL       the vanish server (default: $VANISH_URL, else ${DEFAULT_SERVER})
      --json             print the result as JSON
  -h, --help             this text
      --version          the client's version
`;

class UsageError extends Error {}

function parse(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      file: { type: 'string', short: 'f' },
      views: { type: 'string', short: 'v' },
      expires: { type: 'string', short: 'e' },
      type: { type: 'string', short: 't' },
      passcode: { type: 'string', short: 'p' },
      notify: { type: 'string', short: 'n' },
      'send-link': { type: 'string', short: 's' },
      server: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
  return { values, command: positionals[0], extra: positionals.slice(1) };
}

function wholeNumber(text, name, min, max) {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

function expiryType(values, views, expires) {
  if (values.type !== undefined) {
    if (!['view', 'time', 'both'].includes(values.type)) throw new UsageError('--type must be view, time or both');
    return values.type;
  }
  if (expires !== undefined && views !== undefined) return 'both';
  return expires !== undefined ? 'time' : 'view';
}

async function readContent(file) {
  if (file !== undefined) return readFileSync(file, 'utf8');
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function create(values) {
  const views = wholeNumber(values.views, 'views', 1, 100);
  const expires = wholeNumber(values.expires, 'expires', 1, 8760);
  const type = expiryType(values, views, expires);
  const server = (values.server ?? process.env.VANISH_URL ?? DEFAULT_SERVER).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(server)) throw new UsageError(`--server must be an http:// or https:// URL, not "${server}"`);

  let text;
  try {
    text = await readContent(values.file);
  } catch (err) {
    throw new UsageError(`cannot read ${values.file}: ${err.code ?? err.message}`);
  }
  if (text.trim() === '') throw new UsageError('the note is empty');
  if ([...text].length > CONTENT_MAX_CODE_POINTS) throw new UsageError(`the note is longer than ${CONTENT_MAX_CODE_POINTS} characters`);

  const key = envelope.newKey();
  const body = {
    client_encrypted: true,
    content: await envelope.seal(text, key),
    key_check: await envelope.keyCheck(key),
    expiry_type: type,
    ...(views !== undefined ? { max_views: views } : {}),
    ...(expires !== undefined ? { expiry_time: expires } : {}),
  };
  const passcode = values.passcode ?? process.env.VANISH_PASSCODE;
  if (passcode) body.passcode = passcode;
  if (values.notify) body.notification_email = values.notify;
  if (values['send-link']) body.send_link_email = values['send-link'];

  let response;
  try {
    response = await fetch(`${server}/api/create.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': `vanish-cli/${VERSION}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30000),
    });
  } catch (err) {
    const reason = err.cause?.code ?? err.cause?.message ?? err.message;
    throw new Error(`cannot reach ${server}: ${reason}`);
  }
  const answer = await response.json().catch(() => null);
  if (!response.ok || !answer || answer.success !== true) {
    const message = answer && typeof answer.error === 'string' ? `${answer.error} (${answer.code}${answer.details?.parameter ? `, ${answer.details.parameter}` : ''})` : `HTTP ${response.status}`;
    throw new Error(`the server refused the note: ${message}`);
  }
  const link = `${answer.url}#${key}`;
  return values.json
    ? JSON.stringify({ link, uuid: answer.uuid, expires_at: answer.expires_at, max_views: answer.max_views, has_passcode: answer.has_passcode, key })
    : link;
}

async function main(argv) {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new UsageError(err.message);
  }
  const { values, command, extra } = parsed;
  if (values.version) return VERSION;
  if (values.help || command === undefined) return USAGE.trimEnd();
  if (command !== 'create') throw new UsageError(`unknown command "${command}" (there is only "create"; notes are read on the web page)`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  return create(values);
}

main(process.argv.slice(2)).then(
  (out) => { process.stdout.write(`${out}\n`); },
  (err) => {
    process.stderr.write(`vanish: ${err.message}\n`);
    if (err instanceof UsageError) process.stderr.write('Try "vanish --help".\n');
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
