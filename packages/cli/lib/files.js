'use strict';
/*
 * Files of a note (DECISIONS 14, docs/file-format.md), on this machine: each is sealed as it is read and sent with
 * tus (resumable: a broken connection resumes where the server says it stopped, re-sealing only from there), and
 * each is downloaded with Range requests (a broken download resumes), opened as it streams and written to disk.
 * Memory stays bounded: a few 64 KiB segments at a time, never a whole file.
 */
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { Readable } = require('node:stream');
const tus = require('tus-js-client');
const fileStream = require('./file-stream');
const { nodeSegmentCipher } = require('./segment-cipher');
const { Refusal, UsageError, shown } = require('./errors');
const { VERSION } = require('./http');
const transferScavenger = require('./transfer-scavenger');

/** Waits between tus tries after a network error or a 5xx/423/409 answer: about two minutes in all. */
const RETRY_DELAYS_MS = [0, 500, 1000, 2000, 4000, 8000, 15000, 30000, 60000];
/**
 * One PATCH carries at most this much (each a request of its own, resumed on its own): proxies in front of a
 * server often cap a request body (Cloudflare at 100 MB), and the gateway reserves each PATCH's length against
 * FILE_BYTES_PER_HOUR before it relays a byte. Memory does not grow with it: each PATCH is sealed as it is sent.
 */
const PATCH_BYTES = 64 * 2 ** 20;
/** A connection that moves no byte for this long is cut and tried again (never a total time limit). */
const IDLE_MS = 60_000;
const UPLOAD_PATH = /^\/files\/uploads\/[A-Za-z0-9_-]{16,128}$/;
const DOWNLOAD_PATH = /^\/files\/d\/[A-Za-z0-9_-]{16,128}$/;

function humanSize(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The files given with --attach: regular files, read once here for their size (the name is their last component). */
function attachments(paths) {
  return paths.map((given) => {
    let stat;
    try {
      stat = fs.statSync(given);
    } catch (err) {
      throw new UsageError(`cannot read ${given}: ${err.code ?? err.message}`);
    }
    if (!stat.isFile()) throw new UsageError(`${given} is not a regular file (attach files one by one; a folder can be packed with tar or zip first)`);
    const name = path.basename(given);
    try {
      return { path: given, entry: fileStream.newFileEntry(name, '', stat.size) };
    } catch (err) {
      throw new UsageError(`${given}: ${err.message}`);
    }
  });
}

/** Checks the creation answer's upload addresses: one per file, on the server asked, for the declared size. */
function checkedUploads(answer, origin, sizes) {
  const uploads = answer.uploads;
  if (!Array.isArray(uploads) || uploads.length !== sizes.length) {
    throw new Refusal(`the server at ${origin} answered ${Array.isArray(uploads) ? uploads.length : 'no'} upload addresses for ${sizes.length} files: is it a vanish server with files enabled? Nothing was uploaded`);
  }
  return uploads.map((upload, i) => {
    let url = null;
    try {
      url = new URL(upload.url);
    } catch { /* refused below */ }
    if (!url || url.origin !== origin || !UPLOAD_PATH.test(url.pathname) || url.search !== '' || url.hash !== '') {
      throw new Refusal(`the server at ${origin} answered the upload address ${shown(upload && upload.url)}, not one of ${origin}/files/uploads/…: nothing was uploaded`);
    }
    if (upload.size !== sizes[i]) throw new Refusal(`the server expects ${shown(upload.size)} bytes for file ${i + 1}, not the ${sizes[i]} it was told: nothing was uploaded`);
    return url.href;
  });
}

/** tus-js-client's source for one attached file: any range of its sealed stream, made from the file as it is read. */
function sealedFileReader(aesKey, entry) {
  return {
    openFile(input) {
      const fd = fs.openSync(input, 'r');
      const total = fileStream.sealedSize(entry.size);
      const readPlain = (offset, length) => {
        const buffer = Buffer.allocUnsafe(length);
        let filled = 0;
        while (filled < length) {
          const read = fs.readSync(fd, buffer, filled, length - filled, offset + filled);
          if (read === 0) break;
          filled += read;
        }
        transferScavenger.moved(filled);
        return new Uint8Array(buffer.buffer, buffer.byteOffset, filled);
      };
      return Promise.resolve({
        size: total,
        slice(start, end) {
          const stop = Math.min(end, total);
          const stream = Readable.from(fileStream.sealRange(aesKey, entry.size, start, stop, readPlain), { objectMode: false });
          stream.size = stop - start;
          return Promise.resolve({ value: stream, done: stop >= total });
        },
        close() {
          try { fs.closeSync(fd); } catch { /* closed already */ }
        },
      });
    },
  };
}

/** tus-js-client's Node HTTP stack, with a connection that moves nothing for IDLE_MS cut (and so tried again). */
class IdleCutHttpStack extends tus.DefaultHttpStack {
  createRequest(method, url) {
    const request = super.createRequest(method, url);
    const send = request.send.bind(request);
    request.send = (body) => {
      const sent = send(body);
      const raw = request.getUnderlyingObject();
      if (raw) raw.setTimeout(IDLE_MS, () => raw.destroy(new Error(`no byte moved for ${IDLE_MS / 1000} s`)));
      return sent;
    };
    return request;
  }
}

/** Uploads one sealed file to its tus address, resuming after network errors; resolves when the server has it all. */
function uploadOne(file, aesKey, url, progress) {
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(file.path, {
      uploadUrl: url,
      uploadSize: fileStream.sealedSize(file.entry.size),
      fileReader: sealedFileReader(aesKey, file.entry),
      httpStack: new IdleCutHttpStack(),
      retryDelays: RETRY_DELAYS_MS,
      chunkSize: PATCH_BYTES,
      headers: { 'user-agent': `vanish-cli/${VERSION}` },
      storeFingerprintForResuming: false,
      onProgress: (sent, total) => progress(sent, total),
      onError: (err) => reject(err),
      onSuccess: () => resolve(),
    });
    upload.start();
  });
}

/** Seals and uploads every attached file, one after the other, saying how far each got on a terminal. */
async function uploadAll(files, keyText, urls, stderr) {
  for (let i = 0; i < files.length; i += 1) {
    const file = files[i];
    const aesKey = nodeSegmentCipher(await fileStream.fileKeyBytes(keyText, file.entry.nonce));
    let shownPercent = -1;
    const progress = (sent, total) => {
      if (!stderr.isTTY) return;
      const percent = total === 0 ? 100 : Math.floor((sent / total) * 100);
      if (percent === shownPercent) return;
      shownPercent = percent;
      stderr.write(`\ruploading ${shown(file.entry.name, 60)} (${humanSize(file.entry.size)}): ${percent}%   `);
    };
    try {
      await uploadOne(file, aesKey, urls[i], progress);
    } catch (err) {
      if (stderr.isTTY) stderr.write('\n');
      const status = err.originalResponse ? ` (HTTP ${err.originalResponse.getStatus()})` : '';
      throw new Refusal(`the upload of ${shown(file.path)} failed${status} after ${RETRY_DELAYS_MS.length} tries: ${shown(String(err.message).split('\n')[0], 300)}. The note cannot be read until every file is uploaded; it is deleted with its parts within a day. Create it again`);
    }
    if (stderr.isTTY) stderr.write(`\ruploaded ${shown(file.entry.name, 60)} (${humanSize(file.entry.size)})          \n`);
  }
}

/** A name from a manifest made safe for this machine: one path component, no control or reserved characters. */
function safeName(name, index) {
  let safe = String(name).split(/[/\\]/).pop() ?? '';
  safe = safe.replace(/[\u0000-\u001f\u007f-\u009f:*?"<>|]/g, '_').replace(/^\s+|[\s.]+$/g, '');
  if (safe === '' || safe === '.' || safe === '..') safe = `file-${index + 1}`;
  return safe;
}

/** The path in `dir` for `name`: taken as is with --force, else the first free "name (2).ext", "name (3).ext", … */
function freePath(dir, name, force) {
  const first = path.join(dir, name);
  if (force || !fs.existsSync(first)) return first;
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 2; ; n += 1) {
    const candidate = path.join(dir, `${stem} (${n})${ext}`);
    if (!fs.existsSync(candidate)) return candidate;
  }
}

/** The revealed page's download addresses, checked against the manifest and the server asked. */
function checkedDownloads(downloads, files, origin) {
  if (downloads === null) throw new Refusal('the note\'s manifest lists files, but the revealed page has no download addresses: is the server a vanish server with files enabled?');
  if (downloads.length !== files.length) throw new Refusal(`the note's manifest lists ${files.length} files, but the server offers ${downloads.length}: it does not match what the writer sealed`);
  return downloads.map((download, i) => {
    let url = null;
    try {
      url = new URL(download.url);
    } catch { /* refused below */ }
    if (!url || url.origin !== origin || !DOWNLOAD_PATH.test(url.pathname) || url.search !== '' || url.hash !== '') {
      throw new Refusal(`the server offers file ${i + 1} at ${shown(download.url)}, not at ${origin}/files/d/…: vanish downloads only from the server it asked`);
    }
    const expected = fileStream.sealedSize(files[i].size);
    if (download.size !== null && download.size !== expected) {
      throw new Refusal(`the server offers ${download.size} bytes for ${shown(files[i].name)}, whose manifest says ${expected}: it was changed on the server`);
    }
    return url.href;
  });
}

/**
 * One GET (or ranged GET) of a download, through node:http(s) rather than fetch: the body arrives as the socket's
 * own Buffers, without fetch's web streams (about 15 % of `vanish open`'s CPU). No redirect is followed (none is
 * asked for); a connection that moves no byte for IDLE_MS is cut. Resolves with the answer's status, headers and
 * body (a Node stream); a connection that fails before the answer rejects with the socket's error.
 */
function getFrom(url, from) {
  const headers = { 'user-agent': `vanish-cli/${VERSION}`, accept: 'application/octet-stream' };
  if (from > 0) headers.range = `bytes=${from}-`;
  const client = new URL(url).protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, { headers }, resolve);
    request.setTimeout(IDLE_MS, () => request.destroy(new Error(`no byte moved for ${IDLE_MS / 1000} s`)));
    request.on('error', reject);
  });
}

/**
 * Downloads one sealed file, opens it as it streams and writes the plaintext to `target` (through a partial file
 * renamed at the end). A broken connection resumes with a Range request; a stream that does not open deletes what
 * was written and says why.
 */
async function downloadOne(url, entry, keyText, target, progress) {
  const total = fileStream.sealedSize(entry.size);
  const opener = fileStream.createOpener(keyText, entry.nonce, entry.size, nodeSegmentCipher);
  const partial = path.join(path.dirname(target), `.${path.basename(target)}.vanish-partial`);
  const fd = fs.openSync(partial, 'w', 0o600);
  let received = 0;
  let failures = 0;
  const write = (chunks) => { for (const chunk of chunks) fs.writeSync(fd, chunk); };
  try {
    while (received < total) {
      let response;
      try {
        response = await getFrom(url, received);
      } catch (err) {
        if (++failures > RETRY_DELAYS_MS.length) throw new Refusal(`the download of ${shown(entry.name)} failed: ${shown(err.code ?? err.message)}`);
        await new Promise((done) => setTimeout(done, RETRY_DELAYS_MS[failures - 1]));
        continue;
      }
      try {
        const status = response.statusCode;
        if (status === 410) throw new Refusal(`the download address of ${shown(entry.name)} has expired (its window after the reveal is over): the file cannot be read again`);
        if (status === 404) throw new Refusal(`the server has no file at the download address of ${shown(entry.name)} (ended, or never complete)`);
        if (status >= 500 || status === 429) {
          if (++failures > RETRY_DELAYS_MS.length) throw new Refusal(`the download of ${shown(entry.name)} failed: HTTP ${status}`);
          response.destroy();
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[failures - 1]));
          continue;
        }
        const expectedStatus = received > 0 ? 206 : 200;
        if (status !== expectedStatus) throw new Refusal(`the server answered HTTP ${status} to the download of ${shown(entry.name)}${received > 0 ? ` from byte ${received}` : ''}`);
        if (received > 0 && !new RegExp(`^bytes ${received}-`).test(response.headers['content-range'] ?? '')) {
          throw new Refusal(`the server resumed the download of ${shown(entry.name)} from another place than byte ${received}`);
        }
        const before = received;
        try {
          for await (const chunk of response) {
            received += chunk.length;
            write(await opener.push(chunk));
            progress(received, total);
          }
        } catch (err) {
          if (err && err.code && /^(TRUNCATED|EXTENDED|SEGMENT_CHANGED|MALFORMED)$/.test(err.code)) throw err;
          // A broken connection: resume from what arrived.
          if (++failures > RETRY_DELAYS_MS.length) throw new Refusal(`the download of ${shown(entry.name)} broke off ${failures - 1} times: ${shown(err.code ?? err.message)}`);
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[failures - 1]));
        }
        if (received >= total) break;
        // An answer that ended early without an error: resume, but not for ever when nothing comes.
        if (received === before && ++failures > RETRY_DELAYS_MS.length) throw new Refusal(`the download of ${shown(entry.name)} stops at byte ${received} of ${total}`);
      } finally {
        // Whatever was not read (a refusal, a retried 5xx, an answer longer than the file) is not waited for.
        if (!response.complete) response.destroy();
      }
    }
    write(await opener.finish());
    fs.closeSync(fd);
    fs.renameSync(partial, target);
  } catch (err) {
    try { fs.closeSync(fd); } catch { /* closed already */ }
    fs.rmSync(partial, { force: true });
    if (err && err.name === 'FileStreamError') throw new Refusal(`${shown(entry.name)} does not open, so nothing of it was kept: ${err.message}`);
    throw err;
  }
}

/** Downloads every file of a revealed note into `dir`; returns what was written where (for the user). */
async function downloadAll(urls, files, keyText, dir, force, stderr) {
  const written = [];
  for (let i = 0; i < files.length; i += 1) {
    const entry = files[i];
    const name = safeName(entry.name, i);
    const target = freePath(dir, name, force);
    let shownPercent = -1;
    const progress = (got, total) => {
      if (!stderr.isTTY) return;
      const percent = Math.floor((got / total) * 100);
      if (percent === shownPercent) return;
      shownPercent = percent;
      stderr.write(`\rdownloading ${shown(name, 60)} (${humanSize(entry.size)}): ${percent}%   `);
    };
    await downloadOne(urls[i], entry, keyText, target, progress);
    if (stderr.isTTY) stderr.write('\r');
    written.push({ entry, name, target });
  }
  return written;
}

module.exports = { attachments, checkedUploads, uploadAll, checkedDownloads, downloadAll, safeName, freePath, humanSize, RETRY_DELAYS_MS };
