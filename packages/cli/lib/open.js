'use strict';
/*
 * vanish open: reads a note as the web page does (DECISIONS 13). It fetches the note page, posts the page's own
 * reveal form (the single-use token, the key proof computed here from the link's key, the passcode), and opens the
 * envelope of the revealed page on this machine. The key never leaves it; /api is never used to read a note.
 */
const fs = require('node:fs');
const envelope = require('./envelope');
const { Refusal, UsageError, shown } = require('./errors');
const { bodyText, send } = require('./http');
const { noteLink } = require('./links');
const { notOpenYet, pageError, revealForm, revealedNote } = require('./page');
const { askHidden, readingPasscode } = require('./passcode');

const GONE = 'there is no note at this link: it was read to its last view, it expired or was ended, or it never existed';
const PAGE_HEADERS = { accept: 'text/html', 'accept-language': 'en' };

async function readLink(stdin) {
  // At a terminal, asked without echo: the key is then neither in `ps` nor on the screen.
  if (stdin.isTTY) {
    const typed = await askHidden('The note\'s link (not shown): ');
    if (typed !== null) return typed;
  }
  const chunks = [];
  for await (const chunk of stdin) chunks.push(chunk);
  const line = Buffer.concat(chunks).toString('utf8').split(/\r?\n/).find((candidate) => candidate.trim() !== '');
  if (line === undefined) throw new UsageError('no link: give it as an argument, or on standard input with "-"');
  return line;
}

function busy(response) {
  const retry = response.headers.get('retry-after');
  return new Refusal(`the server is busy or limiting reveals (HTTP 429): try again ${retry && /^\d+$/.test(retry) ? `in ${retry} s` : 'later'}. Nothing was consumed`);
}

/** The note's text, revealed through the page's form and opened here. */
async function reveal(link, env, passcodeFile, warn) {
  const pageUrl = `${link.origin}/${link.uuid}`;
  const page = await send(pageUrl, { headers: PAGE_HEADERS }, link.origin);
  if (page.status === 404) throw new Refusal(GONE);
  if (page.status === 429) throw busy(page);
  if (page.status !== 200) throw new Refusal(`the server answered HTTP ${page.status} for the note page`);
  const pageHtml = await bodyText(page);
  const form = revealForm(pageHtml);
  const closed = form ? null : notOpenYet(pageHtml);
  if (closed !== null) throw new Refusal(`the note is not open yet: ${shown(closed, 300)} Nothing was consumed`);
  if (!form) throw new Refusal(`the page at ${pageUrl} has no reveal form: is ${link.origin} a vanish server?`);
  if (form.takesKeyCheck && link.key === null) {
    throw new UsageError('this note was sealed on its writer\'s machine and the link has no key (the part after #). Ask the writer for it and give the whole link (`vanish open -` reads it from standard input). Nothing was consumed');
  }
  if (!form.takesKeyCheck && link.key !== null) {
    // A false server could pretend so, to show a text of its own in place of the writer's envelope.
    throw new Refusal('the link carries a key, but the server says this note was not sealed with one: vanish does not let a server show its own text in place of the writer\'s. Nothing was consumed');
  }
  const fields = new URLSearchParams({ form_token: form.formToken });
  if (form.takesKeyCheck) fields.set('key_check', await envelope.keyCheck(link.key));
  if (form.takesPasscode) fields.set('passcode', await readingPasscode({ file: passcodeFile, env }));

  const answer = await send(pageUrl, {
    method: 'POST',
    headers: { ...PAGE_HEADERS, 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
  }, link.origin);
  if (answer.status === 404) throw new Refusal(GONE);
  if (answer.status === 429) throw busy(answer);
  if (answer.status === 409) throw new Refusal('the note is not open yet. Nothing was consumed');
  if (answer.status === 403) throw new Refusal('the server refused the reveal form (its single-use token was already used or has expired): run vanish open again. Nothing was consumed');
  const html = await bodyText(answer);
  if (answer.status === 400) throw new Refusal(`the note was not revealed: ${shown(pageError(html) ?? 'the server refused the form (HTTP 400)', 400)}`);
  if (answer.status !== 200) throw new Refusal(`the server answered HTTP ${answer.status} to the reveal`);
  const note = revealedNote(html);
  if (link.key !== null) {
    if (!note || note.envelope === undefined) throw new Refusal('the server answered no sealed envelope for a note sealed on its writer\'s machine: vanish shows nothing else in its place');
    try {
      return await envelope.open(note.envelope, link.key);
    } catch {
      throw new Refusal('the note\'s envelope does not open with the link\'s key: it was changed on the way or on the server. The view was used');
    }
  }
  if (!note || note.text === undefined) throw new Refusal('the revealed page holds no note text');
  warn('vanish: this note was encrypted by the server, not on its writer\'s machine: the server had its text when it was written and again just now.\n');
  return note.text;
}

/** On a terminal, control characters are shown as \xNN so that a note cannot drive the terminal. */
function forTerminal(text) {
  let changed = false;
  const safe = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (ch) => {
    changed = true;
    return `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
  return { safe: safe.endsWith('\n') ? safe : `${safe}\n`, changed };
}

async function open(options, linkArgument, io) {
  const link = noteLink(linkArgument === undefined || linkArgument === '-' ? await readLink(io.stdin) : linkArgument);
  // The file is made before the reveal, so that a note read once is never lost to a file that cannot be written.
  let out = null;
  if (options.out !== undefined) {
    try {
      out = fs.openSync(options.out, 'wx', 0o600);
    } catch (err) {
      throw new UsageError(err.code === 'EEXIST' ? `${options.out} exists: vanish open never overwrites a file (a note may be readable only once)` : `cannot create ${options.out}: ${err.code ?? err.message}`);
    }
  }
  let text;
  try {
    text = await reveal(link, io.env, options['passcode-file'], (line) => io.stderr.write(line));
  } catch (err) {
    if (out !== null) {
      fs.closeSync(out);
      fs.rmSync(options.out, { force: true });
    }
    throw err;
  }
  if (out !== null) {
    fs.writeSync(out, text);
    fs.closeSync(out);
    return;
  }
  if (io.stdout.isTTY) {
    const { safe, changed } = forTerminal(text);
    io.stdout.write(safe);
    if (changed) io.stderr.write('vanish: the note holds control characters: each is shown above as \\xNN (its code in hex).\n');
  } else {
    io.stdout.write(text);
  }
}

module.exports = { open, forTerminal };
