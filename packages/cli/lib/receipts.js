'use strict';
/*
 * vanish receipts (DECISIONS 16): the receipt wallet of the command line. `vanish create` keeps each note's
 * receipt link in a file of this user's (receiptsFile below, mode 600 in a folder of mode 700); nothing about
 * it reaches the server beyond the receipt reads themselves. `list` shows each note's state from its signed
 * receipt, `export` writes them as one file of signed receipts (the web wallet's format, which
 * `vanish receipts verify` and `npm run verify-receipt` check offline), `checkin` is checkin.js's.
 */
const { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { join } = require('node:path');
const { Refusal, UsageError, shown } = require('./errors');
const { bodyText, send } = require('./http');
const { canonicalJson, verifyExportText } = require('./signed');
const { checkin } = require('./checkin');

const EXPORT_FORMAT = 'vanish-receipts/1';
const RECEIPT_URL = /^(https?:\/\/[^/?#]+)\/r\/([A-Za-z0-9_-]{43})$/;

/** $VANISH_CONFIG_DIR, else the platform's config folder: $XDG_CONFIG_HOME or ~/.config, macOS and Windows their own. */
function configDir(env) {
  if (env.VANISH_CONFIG_DIR) return env.VANISH_CONFIG_DIR;
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'vanish');
  const home = env.HOME || homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'vanish');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'vanish');
}

function receiptsFile(env) {
  return join(configDir(env), 'receipts.json');
}

function readKept(env) {
  const file = receiptsFile(env);
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw new Refusal(`cannot read ${file}: ${err.code ?? err.message}`);
  }
  try {
    const kept = JSON.parse(text).receipts;
    return Array.isArray(kept) ? kept.filter((entry) => entry && typeof entry.receipt_url === 'string' && RECEIPT_URL.test(entry.receipt_url)) : [];
  } catch {
    throw new Refusal(`${file} is not a vanish receipts file: move it away and try again`);
  }
}

/** Adds one receipt link; the file is written whole to a new file of mode 600, then renamed over the old. */
function keepReceipt(env, receiptUrl, createdAt) {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const kept = readKept(env).filter((entry) => entry.receipt_url !== receiptUrl);
  kept.push({ receipt_url: receiptUrl, kept_at: createdAt.toISOString() });
  const file = receiptsFile(env);
  const next = `${file}.${process.pid}.tmp`;
  writeFileSync(next, `${JSON.stringify({ receipts: kept }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(next, 0o600);
  renameSync(next, file);
  return file;
}

/** The signed JSON of one receipt link, or why there is none (`gone`: purged or unknown; `unreachable`). */
async function fetchSigned(receiptUrl) {
  const [, origin, id] = RECEIPT_URL.exec(receiptUrl);
  let response;
  try {
    response = await send(`${origin}/api/receipt/${id}.php`, { headers: { accept: 'application/json' } }, origin);
  } catch (err) {
    return { state: 'unreachable', reason: err.message };
  }
  if (response.status === 404) return { state: 'gone' };
  if (!response.ok) return { state: 'unreachable', reason: `HTTP ${response.status}` };
  try {
    const answer = JSON.parse(await bodyText(response));
    return { state: stateOf(answer.receipt), signed: { receipt: answer.receipt, signature: answer.signature } };
  } catch {
    return { state: 'unreachable', reason: 'not a receipt' };
  }
}

/** As the web wallet says it: ended, read, previewed by a bot, waiting, or the status the service names. */
function stateOf(receipt) {
  if (receipt.status === 'ended') return 'ended';
  if (receipt.status !== 'active') return String(receipt.status);
  if (receipt.views_used > 0) return 'read';
  const previewed = (receipt.timeline || []).some((entry) => entry.event === 'page_fetch' && entry.client === 'link_preview_bot');
  return previewed ? 'previewed by a bot' : 'waiting';
}

async function list(io) {
  const kept = readKept(io.env);
  if (kept.length === 0) {
    io.stdout.write(`No receipts kept yet (vanish create keeps them in ${receiptsFile(io.env)}).\n`);
    return;
  }
  for (const entry of kept) {
    const got = await fetchSigned(entry.receipt_url);
    const r = got.signed?.receipt;
    const facts = r ? `, views used ${r.views_used} of ${r.max_views}, created ${r.created_at} UTC${r.ended_at ? `, ended ${r.ended_at} UTC (${r.end_reason})` : ''}` : got.reason ? ` (${shown(got.reason)})` : '';
    io.stdout.write(`${shown(got.state)}${facts}\n  ${entry.receipt_url}\n`);
  }
}

async function exportReceipts(options, io) {
  if (!options.out) throw new UsageError('vanish receipts export needs --out FILE (the file of signed receipts to write)');
  const signed = [];
  for (const entry of readKept(io.env)) {
    const got = await fetchSigned(entry.receipt_url);
    if (got.signed) signed.push(got.signed);
    else io.stderr.write(`vanish: left out ${entry.receipt_url}: ${got.state}${got.reason ? ` (${shown(got.reason)})` : ''}\n`);
  }
  if (signed.length === 0) throw new Refusal('no receipt could be read: nothing to export');
  try {
    writeFileSync(options.out, canonicalJson({ format: EXPORT_FORMAT, receipts: signed }), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    throw new Refusal(`cannot write ${options.out}: ${err.code === 'EEXIST' ? 'it exists already (vanish does not overwrite)' : err.code ?? err.message}`);
  }
  io.stderr.write(`vanish: ${signed.length} signed receipt${signed.length === 1 ? '' : 's'} written to ${options.out}\n`);
}

/** Checks an export (or one saved receipt's export) offline against a key set file the user saved. */
async function verify(options, file, io) {
  if (!file) throw new UsageError('vanish receipts verify needs the export file');
  if (!options.keys) throw new UsageError('vanish receipts verify needs --keys FILE: the key set (/.well-known/vanish-receipt-keys.json) you saved from the service you trust');
  let text;
  let keys;
  try {
    text = readFileSync(file, 'utf8');
    keys = JSON.parse(readFileSync(options.keys, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${err.path ?? 'input'}: ${err.code ?? err.message}`);
  }
  const checked = verifyExportText(text, keys);
  io.stdout.write(`${checked.lines.join('\n')}\n`);
  if (!checked.valid) throw new Refusal('the export does not verify');
}

/** `vanish receipts SUBCOMMAND`: list, export, verify, and checkin (checkin.js, the creator's "I am still here"). */
async function receipts(sub, options, args, io) {
  if (sub === 'list') return list(io);
  if (sub === 'export') return exportReceipts(options, io);
  if (sub === 'verify') return verify(options, args[0], io);
  if (sub === 'checkin') {
    if (args.length !== 1) throw new UsageError('vanish receipts checkin takes one receipt link');
    return checkin(args[0], io);
  }
  throw new UsageError(`unknown receipts command "${shown(sub ?? '')}" (they are list, export, verify and checkin)`);
}

module.exports = { receipts, keepReceipt, receiptsFile, configDir, stateOf, EXPORT_FORMAT };
