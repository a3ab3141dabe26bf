'use strict';
/*
 * vanish open: reads a note as the web page does (DECISIONS 13). It fetches the note page, posts the page's own
 * reveal form (the single-use token, the key proof computed here from the link's key, the passcode), and opens the
 * envelope of the revealed page on this machine. The key never leaves it; /api is never used to read a note.
 */
const fs = require('node:fs');
const path = require('node:path');
const envelope = require('./envelope');
const fileStream = require('./file-stream');
const { checkedDownloads, downloadAll, humanSize } = require('./files');
const { Refusal, UsageError, shown } = require('./errors');
const { bodyText, send } = require('./http');
const { noteLink } = require('./links');
const { fileDownloads, notOpenYet, pageError, revealForm, revealedNote, uploadIncomplete } = require('./page');
const { askHidden, readingPasscode } = require('./passcode');

const GONE = 'there is no note at this link: it was read to its last view, it expired or was ended, or it never existed';
const UPLOADING = 'the note\'s files are still being uploaded by its writer: try again later. Nothing was consumed';
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

/**
 * The note, revealed through the page's form and opened here: { text, files, downloads } (files and downloads null
 * for a note without files). `beforeReveal(form)` runs before anything is consumed (to refuse or to prepare).
 */
async function reveal(link, env, passcodeFile, warn, beforeReveal) {
  const pageUrl = `${link.origin}/${link.uuid}`;
  const page = await send(pageUrl, { headers: PAGE_HEADERS }, link.origin);
  if (page.status === 404) throw new Refusal(GONE);
  if (page.status === 429) throw busy(page);
  if (page.status === 409) throw new Refusal(UPLOADING);
  if (page.status !== 200) throw new Refusal(`the server answered HTTP ${page.status} for the note page`);
  const pageHtml = await bodyText(page);
  if (uploadIncomplete(pageHtml)) throw new Refusal(UPLOADING);
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
  beforeReveal(form);
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
  // 409: a file still being uploaded (DECISIONS 14) or a note not open yet (DECISIONS 16); the page says which.
  if (answer.status === 409) throw new Refusal(uploadIncomplete(await bodyText(answer)) ? UPLOADING : 'the note is not open yet. Nothing was consumed');
  if (answer.status === 403) throw new Refusal('the server refused the reveal form (its single-use token was already used or has expired): run vanish open again. Nothing was consumed');
  const html = await bodyText(answer);
  if (answer.status === 400) throw new Refusal(`the note was not revealed: ${shown(pageError(html) ?? 'the server refused the form (HTTP 400)', 400)}`);
  if (answer.status !== 200) throw new Refusal(`the server answered HTTP ${answer.status} to the reveal`);
  const note = revealedNote(html);
  if (link.key !== null) {
    if (!note || note.envelope === undefined) throw new Refusal('the server answered no sealed envelope for a note sealed on its writer\'s machine: vanish shows nothing else in its place');
    let opened;
    try {
      opened = await fileStream.openNote(note.envelope, link.key);
    } catch (err) {
      if (err.code === 'MANIFEST') throw new Refusal(`${err.message}. The view was used`);
      throw new Refusal('the note\'s envelope does not open with the link\'s key: it was changed on the way or on the server. The view was used');
    }
    return { text: opened.text, files: opened.files, downloads: opened.files ? fileDownloads(html) : null };
  }
  if (!note || note.text === undefined) throw new Refusal('the revealed page holds no note text');
  warn('vanish: this note was encrypted by the server, not on its writer\'s machine: the server had its text when it was written and again just now.\n');
  return { text: note.text, files: null, downloads: null };
}

/** The --out directory for a note's files: an existing directory, or one made now (mode 700). */
function outDirectory(dir) {
  let stat = null;
  try {
    stat = fs.statSync(dir);
  } catch (err) {
    if (err.code !== 'ENOENT') throw new UsageError(`cannot use ${dir}: ${err.code ?? err.message}`);
  }
  if (stat && !stat.isDirectory()) throw new UsageError(`${dir} exists and is not a directory: the note's files need a directory (--out DIR)`);
  if (stat) return { dir, made: false };
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    throw new UsageError(`cannot make the directory ${dir}: ${err.code ?? err.message}`);
  }
  return { dir, made: true };
}

/** A fresh directory in the current one, for files revealed when no --out was given (they are never dropped). */
function rescueDirectory(stem) {
  for (let n = 1; ; n += 1) {
    const dir = `vanish-${stem}${n > 1 ? `-${n}` : ''}`;
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
      return dir;
    } catch (err) {
      if (err.code !== 'EEXIST') throw new Refusal(`the note's files could not be saved: cannot make ${dir} (${err.code ?? err.message})`);
    }
  }
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

function printText(text, io) {
  if (io.stdout.isTTY) {
    const { safe, changed } = forTerminal(text);
    io.stdout.write(safe);
    if (changed) io.stderr.write('vanish: the note holds control characters: each is shown above as \\xNN (its code in hex).\n');
  } else {
    io.stdout.write(text);
  }
}

async function open(options, linkArgument, io) {
  const link = noteLink(linkArgument === undefined || linkArgument === '-' ? await readLink(io.stdin) : linkArgument);
  // An existing file is never a place for a note (its text or its files): refused before anything is asked.
  if (options.out !== undefined && fs.existsSync(options.out) && !fs.statSync(options.out).isDirectory()) {
    throw new UsageError(`${options.out} exists: vanish open never overwrites a file (a note may be readable only once)`);
  }
  // Where the note goes is settled before the reveal, so that a note read once is never lost to a file that cannot
  // be written: a text file made now, or (a note with files) a directory.
  let out = null;
  let filesDir = null;
  const beforeReveal = (form) => {
    if (form.files > 0) {
      if (options.out === undefined) {
        throw new UsageError(`this note carries ${form.files === 1 ? 'a file' : `${form.files} files`}: give --out DIR, the directory to write ${form.files === 1 ? 'it' : 'them'} to (made if missing). Nothing was consumed`);
      }
      filesDir = outDirectory(options.out);
      return;
    }
    if (options.out === undefined) return;
    try {
      out = fs.openSync(options.out, 'wx', 0o600);
    } catch (err) {
      throw new UsageError(err.code === 'EEXIST' ? `${options.out} exists: vanish open never overwrites a file (a note may be readable only once)` : `cannot create ${options.out}: ${err.code ?? err.message}`);
    }
  };
  let note;
  try {
    note = await reveal(link, io.env, options['passcode-file'], (line) => io.stderr.write(line), beforeReveal);
  } catch (err) {
    if (out !== null) {
      fs.closeSync(out);
      fs.rmSync(options.out, { force: true });
    }
    if (filesDir && filesDir.made) fs.rmSync(filesDir.dir, { recursive: true, force: true });
    throw err;
  }
  if (note.files) {
    // The page did not say the note had files (an older server): the files still go to a directory, never lost.
    if (!filesDir) {
      if (out !== null) {
        fs.closeSync(out);
        fs.rmSync(options.out, { force: true });
        out = null;
        filesDir = outDirectory(options.out);
      } else {
        filesDir = { dir: rescueDirectory(link.uuid.slice(0, 8)), made: true };
        io.stderr.write(`vanish: the note carries files and no --out was given: they are written to ${filesDir.dir}\n`);
      }
    }
    const urls = checkedDownloads(note.downloads, note.files, link.origin);
    if (note.text !== '') printText(note.text, io);
    const written = await downloadAll(urls, note.files, link.key, filesDir.dir, options.force === true, io.stderr);
    const lines = [`vanish: ${written.length === 1 ? 'the note\'s file was' : `the note's ${written.length} files were`} written to ${filesDir.dir}:`];
    for (const { entry, name, target } of written) {
      const renamed = path.basename(target) !== entry.name ? ` (the note names it ${JSON.stringify(entry.name)}${path.basename(target) !== name ? `; ${name} exists, so it was not replaced (--force replaces)` : ''})` : '';
      lines.push(`  ${path.basename(target)}  ${humanSize(entry.size)}${renamed}`);
    }
    io.stderr.write(`${lines.join('\n')}\n`);
    return;
  }
  if (out !== null) {
    fs.writeSync(out, note.text);
    fs.closeSync(out);
    return;
  }
  printText(note.text, io);
}

module.exports = { open, forTerminal, outDirectory, rescueDirectory };
