/*
 * Files of DECISIONS 14, sealed on the writer's machine (docs/file-format.md says it byte for byte).
 *
 * - The manifest (names, types, sizes and each file's nonce, and the text, if any) is sealed under the note's key K
 *   in an ordinary `vz1.` envelope (DECISIONS 13) whose plaintext is the byte 0xFF followed by the manifest as
 *   UTF-8 JSON. 0xFF never occurs in UTF-8, so a text note can never be read as a manifest, nor the other way.
 * - Each file is a separate stream: its key is HKDF-SHA-256(K, salt = the file's 16-byte random nonce,
 *   info = "vanish file v1"); its plaintext is cut into 64 KiB segments, each sealed with AES-256-GCM under the
 *   nonce (11-byte big-endian segment counter || 1 byte, 0x01 on the last segment, else 0x00): the STREAM
 *   construction as the age format uses it. Only the last segment may be shorter, and it is empty only when the
 *   whole file is. A flipped, truncated, extended, reordered or swapped (between files) stream fails to open.
 *
 * One file, served byte for byte to the browser (as /assets/file-stream.js, with its SRI hash) and shipped as the
 * command-line client's lib/file-stream.js. Plain JavaScript with no build and no imports, using only WebCrypto,
 * TextEncoder/TextDecoder, btoa/atob and (for the stream helpers) TransformStream, which browsers and Node 24 have.
 * Memory stays bounded: one segment at a time. In a page it defines `window.vanishFileStream`.
 */
(function (root, factory) {
  'use strict';
  if (typeof module === 'object' && module.exports) module.exports = factory();
  else root.vanishFileStream = factory();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  var SEGMENT_BYTES = 65536;
  var TAG_BYTES = 16;
  var SEALED_SEGMENT_BYTES = SEGMENT_BYTES + TAG_BYTES;
  var KEY_BYTES = 32;
  var IV_BYTES = 12;
  var FILE_NONCE_BYTES = 16;
  var FILE_KEY_INFO = 'vanish file v1';
  var MANIFEST_MARK = 0xff;
  var MANIFEST_VERSION = 1;
  var MANIFEST_MAX_FILES = 1000;
  var NAME_MAX_BYTES = 255;
  var TYPE_MAX_CHARS = 255;
  // The envelope's limit (DECISIONS 13): the server refuses a longer one.
  var ENVELOPE_MAX_LENGTH = 60000;
  var B64URL = /^[A-Za-z0-9_-]+$/;

  /** Every failure to open says what went wrong in `code` and in words a user can act on in `message`. */
  function FileStreamError(code, message) {
    var error = new Error(message);
    error.name = 'FileStreamError';
    error.code = code;
    return error;
  }

  function toBase64Url(bytes) {
    var binary = '';
    for (var i = 0; i < bytes.length; i += 1) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function fromBase64Url(text) {
    if (typeof text !== 'string' || !B64URL.test(text) || text.length % 4 === 1) throw new Error('not base64url');
    var binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    if (toBase64Url(bytes) !== text) throw new Error('not canonical base64url');
    return bytes;
  }

  function bytesOf(text, length, what) {
    var bytes;
    try {
      bytes = fromBase64Url(text);
    } catch (e) {
      bytes = null;
    }
    if (!bytes || bytes.length !== length) throw new Error(what + ' must be ' + length + ' bytes of base64url');
    return bytes;
  }

  function utf8Length(text) {
    return new TextEncoder().encode(text).length;
  }

  function isSize(value) {
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  }

  /** Segments in a file of `plainSize` bytes: at least one (an empty file is one empty segment). */
  function segmentCount(plainSize) {
    return plainSize === 0 ? 1 : Math.ceil(plainSize / SEGMENT_BYTES);
  }

  /** The sealed (uploaded, stored, downloaded) size of a file of `plainSize` bytes. */
  function sealedSize(plainSize) {
    if (!isSize(plainSize)) throw new Error('a file size is a whole number of bytes');
    return plainSize + TAG_BYTES * segmentCount(plainSize);
  }

  /** The plaintext size of a sealed stream of `size` bytes, or null when no file seals to that size. */
  function plainSize(size) {
    if (!isSize(size) || size < TAG_BYTES) return null;
    var full = Math.floor(size / SEALED_SEGMENT_BYTES);
    var rest = size - full * SEALED_SEGMENT_BYTES;
    if (rest === 0) return full === 0 ? null : full * SEGMENT_BYTES;
    if (rest < TAG_BYTES || (rest === TAG_BYTES && full > 0)) return null;
    return full * SEGMENT_BYTES + rest - TAG_BYTES;
  }

  /** A new random per-file nonce (the HKDF salt), as base64url. */
  function newFileNonce() {
    return toBase64Url(crypto.getRandomValues(new Uint8Array(FILE_NONCE_BYTES)));
  }

  /** The file's 32-byte key: HKDF-SHA-256(K, salt = nonce, info = "vanish file v1"). */
  function fileKeyBytes(keyText, nonceText) {
    return Promise.resolve().then(function () {
      var key = bytesOf(keyText, KEY_BYTES, 'the key');
      var nonce = bytesOf(nonceText, FILE_NONCE_BYTES, 'a file nonce');
      return crypto.subtle.importKey('raw', key, 'HKDF', false, ['deriveBits']).then(function (ikm) {
        return crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: nonce, info: new TextEncoder().encode(FILE_KEY_INFO) }, ikm, KEY_BYTES * 8);
      }).then(function (bits) { return new Uint8Array(bits); });
    });
  }

  /** The file's AES-256-GCM key (a CryptoKey that cannot be exported). */
  function fileKey(keyText, nonceText) {
    return fileKeyBytes(keyText, nonceText).then(function (raw) {
      return crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
    });
  }

  /**
   * The key segments are sealed and opened with: the CryptoKey (fileKey), or, given `makeKey`, what it makes of the
   * file key's 32 bytes (a host cipher, see sealSegment).
   */
  function segmentKey(keyText, nonceText, makeKey) {
    return makeKey ? fileKeyBytes(keyText, nonceText).then(makeKey) : fileKey(keyText, nonceText);
  }

  /** The segment nonce: 11-byte big-endian counter || 0x01 on the last segment, 0x00 otherwise. */
  function segmentNonce(index, last) {
    if (!Number.isSafeInteger(index) || index < 0) throw new Error('a segment index is a whole number');
    var nonce = new Uint8Array(IV_BYTES);
    var rest = index;
    for (var i = 10; i >= 0 && rest > 0; i -= 1) {
      nonce[i] = rest % 256;
      rest = Math.floor(rest / 256);
    }
    nonce[11] = last ? 1 : 0;
    return nonce;
  }

  /**
   * A segment key is the file's AES-GCM CryptoKey, or a host's own AES-256-GCM of the same key bytes (see
   * createOpener's `makeKey`): an object with seal(iv, plain) giving ciphertext || tag, and open(iv, sealed) giving
   * the plaintext or null when it does not open. The command-line client uses node:crypto that way: WebCrypto's
   * cost per call is many times its cost per byte at 64 KiB.
   */
  function isHostCipher(aesKey) {
    return aesKey !== null && typeof aesKey === 'object' && typeof aesKey.seal === 'function' && typeof aesKey.open === 'function';
  }

  function sealSegment(aesKey, index, last, plain) {
    if (plain.length > SEGMENT_BYTES) return Promise.reject(new Error('a segment holds at most 65536 bytes'));
    if (isHostCipher(aesKey)) return Promise.resolve().then(function () { return aesKey.seal(segmentNonce(index, last), plain); });
    return crypto.subtle.encrypt({ name: 'AES-GCM', iv: segmentNonce(index, last) }, aesKey, plain)
      .then(function (sealed) { return new Uint8Array(sealed); });
  }

  /** The segment's plaintext, or null when it does not open at this place (index, last) under this key. */
  function openSegment(aesKey, index, last, sealed) {
    if (sealed.length < TAG_BYTES || sealed.length > SEALED_SEGMENT_BYTES) return Promise.resolve(null);
    if (isHostCipher(aesKey)) return Promise.resolve().then(function () { return aesKey.open(segmentNonce(index, last), sealed); });
    return crypto.subtle.decrypt({ name: 'AES-GCM', iv: segmentNonce(index, last) }, aesKey, sealed)
      .then(function (plain) { return new Uint8Array(plain); }, function () { return null; });
  }

  /** Bytes queued in arrival order, taken out in pieces of any size (one segment's worth at most). */
  function Queue() {
    this.chunks = [];
    this.length = 0;
  }
  Queue.prototype.push = function (chunk) {
    if (!(chunk instanceof Uint8Array)) throw new TypeError('a stream of bytes (Uint8Array) was expected');
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  };
  Queue.prototype.take = function (count) {
    var out = new Uint8Array(count);
    var filled = 0;
    while (filled < count) {
      var head = this.chunks[0];
      var wanted = count - filled;
      if (head.length <= wanted) {
        out.set(head, filled);
        filled += head.length;
        this.chunks.shift();
      } else {
        out.set(head.subarray(0, wanted), filled);
        this.chunks[0] = head.subarray(wanted);
        filled += wanted;
      }
    }
    this.length -= count;
    return out;
  };

  /**
   * A sealer of one file's stream: push(plaintext chunk) and finish() each resolve to the sealed chunks they
   * complete. One segment is held back until more follows, so that the last one is marked as last. `makeKey` is
   * optional (see segmentKey).
   */
  function createSealer(keyText, nonceText, makeKey) {
    var keyPromise = segmentKey(keyText, nonceText, makeKey);
    var queue = new Queue();
    var index = 0;
    var finished = false;
    var sealNext = function (last) {
      var plain = queue.take(last ? queue.length : SEGMENT_BYTES);
      var at = index;
      index += 1;
      return keyPromise.then(function (aes) { return sealSegment(aes, at, last, plain); });
    };
    return {
      push: function (chunk) {
        if (finished) return Promise.reject(new Error('the sealer has finished'));
        queue.push(chunk);
        // Every segment known not to be the last is sealed at once (WebCrypto may use several threads).
        var pending = [];
        while (queue.length > SEGMENT_BYTES) pending.push(sealNext(false));
        return Promise.all(pending);
      },
      finish: function () {
        if (finished) return Promise.reject(new Error('the sealer has finished'));
        finished = true;
        return sealNext(true).then(function (sealed) { return [sealed]; });
      },
    };
  }

  /**
   * An opener of one file's stream. `expectedPlainSize` (from the manifest) is optional: with it, a stream of the
   * wrong length is refused as soon as that shows; without it, the segments' last flag still catches every cut.
   * push(sealed chunk) and finish() resolve to the plaintext chunks they complete, or reject with a
   * FileStreamError (code TRUNCATED, EXTENDED, SEGMENT_CHANGED or MALFORMED). `makeKey` is optional (see segmentKey).
   */
  function createOpener(keyText, nonceText, expectedPlainSize, makeKey) {
    var expected = expectedPlainSize === undefined || expectedPlainSize === null ? null : sealedSize(expectedPlainSize);
    var keyPromise = segmentKey(keyText, nonceText, makeKey);
    var queue = new Queue();
    var index = 0;
    var received = 0;
    var finished = false;
    var failed = null;
    var fail = function (error) {
      failed = error;
      throw error;
    };
    var refuse = function (error) { throw error; };
    var openNext = function (last) {
      var sealed = queue.take(last ? queue.length : SEALED_SEGMENT_BYTES);
      var at = index;
      index += 1;
      return openAt(at, last, sealed);
    };
    var openAt = function (at, last, sealed) {
      return keyPromise.then(function (aes) {
        return openSegment(aes, at, last, sealed).then(function (plain) {
          if (plain !== null) {
            if (last && plain.length === 0 && at > 0) {
              refuse(FileStreamError('MALFORMED', 'the file\'s last segment (segment ' + at + ') is empty after others: vanish never writes that, so the stream was made to look complete'));
            }
            return plain;
          }
          // Which place would it open at? Tells a cut or an extension from a change.
          return openSegment(aes, at, !last, sealed).then(function (other) {
            if (other !== null && last) refuse(FileStreamError('TRUNCATED', 'the file is cut short: segment ' + at + ' is complete but is not its last, and nothing follows it'));
            if (other !== null) refuse(FileStreamError('EXTENDED', 'the file goes on past its end: segment ' + at + ' is its last, yet more bytes follow it'));
            var where = 'segment ' + at + ' of the file does not open (bytes ' + at * SEALED_SEGMENT_BYTES + ' to ' + (at * SEALED_SEGMENT_BYTES + sealed.length - 1) + '): ';
            // Without the size, a cut inside the last segment looks like a change: both are said.
            refuse(FileStreamError('SEGMENT_CHANGED', where + (last && expected === null ? 'the file was cut short inside it, or it was changed, moved, or belongs to another file' : 'it was changed, moved from another place in this file, or belongs to another file')));
          });
        });
      });
    };
    return {
      push: function (chunk) {
        if (failed) return Promise.reject(failed);
        if (finished) return Promise.reject(new Error('the opener has finished'));
        return Promise.resolve().then(function () {
          queue.push(chunk);
          received += chunk.length;
          if (expected !== null && received > expected) {
            fail(FileStreamError('EXTENDED', 'the file goes on past its end: more than the ' + expected + ' sealed bytes its manifest gives'));
          }
          // Every segment known not to be the last is opened at once; a failure is reported for the first one.
          var pending = [];
          while (queue.length > SEALED_SEGMENT_BYTES) pending.push(openNext(false).then(null, function (error) { return error; }));
          return Promise.all(pending).then(function (results) {
            for (var i = 0; i < results.length; i += 1) if (!(results[i] instanceof Uint8Array)) fail(results[i]);
            return results;
          });
        });
      },
      finish: function () {
        if (failed) return Promise.reject(failed);
        if (finished) return Promise.reject(new Error('the opener has finished'));
        finished = true;
        return Promise.resolve().then(function () {
          if (expected !== null && received < expected) {
            fail(FileStreamError('TRUNCATED', 'the file is cut short: ' + received + ' of its ' + expected + ' sealed bytes arrived'));
          }
          if (received === 0) fail(FileStreamError('TRUNCATED', 'the file is cut short: no byte of it arrived'));
          if (queue.length < TAG_BYTES) fail(FileStreamError('TRUNCATED', 'the file is cut short: it ends inside segment ' + index));
          return openNext(true).then(function (plain) { return [plain]; }, fail);
        });
      },
    };
  }

  function transformOf(worker) {
    return new TransformStream({
      transform: function (chunk, controller) {
        return worker.push(chunk).then(function (out) { out.forEach(function (piece) { controller.enqueue(piece); }); });
      },
      flush: function (controller) {
        return worker.finish().then(function (out) { out.forEach(function (piece) { controller.enqueue(piece); }); });
      },
    });
  }

  /** A TransformStream from a file's plaintext to its sealed stream. */
  function sealTransform(keyText, nonceText) {
    return transformOf(createSealer(keyText, nonceText));
  }

  /** A TransformStream from a file's sealed stream to its plaintext; it errors with a FileStreamError. */
  function openTransform(keyText, nonceText, expectedPlainSize) {
    return transformOf(createOpener(keyText, nonceText, expectedPlainSize));
  }

  /**
   * The sealed bytes [start, end) of a file of `size` plaintext bytes, made again from its plaintext (the same key
   * and nonce always seal to the same bytes): what a resumed upload sends, one segment in memory at a time.
   * `readPlain(offset, length)` resolves to that many plaintext bytes. `aesKey` is a segment key (see sealSegment).
   * An async iterator of Uint8Array.
   */
  function sealRange(aesKey, size, start, end, readPlain) {
    var total = sealedSize(size);
    if (!(isSize(start) && isSize(end) && start <= end && end <= total)) throw new Error('the range is outside the sealed file');
    var count = segmentCount(size);
    var index = Math.floor(start / SEALED_SEGMENT_BYTES);
    var done = start === end;
    return {
      next: function () {
        if (done || index >= count) return Promise.resolve({ value: undefined, done: true });
        var at = index;
        index += 1;
        var offset = at * SEGMENT_BYTES;
        var length = Math.min(SEGMENT_BYTES, size - offset);
        return Promise.resolve(readPlain(offset, length)).then(function (plain) {
          if (!(plain instanceof Uint8Array) || plain.length !== length) throw new Error('the file changed while it was being sealed (it is shorter than it was)');
          return sealSegment(aesKey, at, at === count - 1, plain);
        }).then(function (sealed) {
          var from = at * SEALED_SEGMENT_BYTES;
          var to = from + sealed.length;
          if (to >= end) done = true;
          return { value: sealed.subarray(Math.max(start, from) - from, Math.min(end, to) - from), done: false };
        });
      },
      return: function () {
        done = true;
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: function () { return this; },
    };
  }

  function checkName(name) {
    if (typeof name !== 'string' || name === '' || utf8Length(name) > NAME_MAX_BYTES) throw new Error('a file name must be 1 to ' + NAME_MAX_BYTES + ' bytes of UTF-8');
  }

  /**
   * A manifest entry for a new file: its name as the writer had it, its media type (may be ''), its plaintext
   * size, and a fresh nonce.
   */
  function newFileEntry(name, type, size) {
    checkName(name);
    if (typeof type !== 'string' || type.length > TYPE_MAX_CHARS) throw new Error('a media type is a text of at most ' + TYPE_MAX_CHARS + ' characters');
    if (!isSize(size)) throw new Error('a file size is a whole number of bytes');
    return { name: name, type: type, size: size, nonce: newFileNonce() };
  }

  /** The manifest as it is sealed: the fields in this order, nothing else. */
  function manifestJson(text, files) {
    return JSON.stringify({
      v: MANIFEST_VERSION,
      text: text,
      files: files.map(function (file) { return { name: file.name, type: file.type, size: file.size, nonce: file.nonce }; }),
    });
  }

  /** A manifest as opened (from the writer, who had K, but still checked): a reader never trusts its shape. */
  function checkManifest(value) {
    var bad = function (why) { throw FileStreamError('MANIFEST', 'the note\'s manifest is not well formed: ' + why); };
    if (!value || typeof value !== 'object' || Array.isArray(value)) bad('not an object');
    if (value.v !== MANIFEST_VERSION) bad('version ' + JSON.stringify(value.v) + ' is not 1 (a newer vanish wrote it?)');
    if (typeof value.text !== 'string') bad('no text field');
    if (!Array.isArray(value.files) || value.files.length < 1 || value.files.length > MANIFEST_MAX_FILES) bad('no list of 1 to ' + MANIFEST_MAX_FILES + ' files');
    var seen = {};
    var files = value.files.map(function (file, i) {
      if (!file || typeof file !== 'object') bad('file ' + i + ' is not an object');
      try {
        checkName(file.name);
      } catch (e) {
        bad('file ' + i + ': ' + e.message);
      }
      if (typeof file.type !== 'string' || file.type.length > TYPE_MAX_CHARS) bad('file ' + i + ' has no media type');
      if (!isSize(file.size)) bad('file ' + i + ' has no size');
      try {
        bytesOf(file.nonce, FILE_NONCE_BYTES, 'its nonce');
      } catch (e) {
        bad('file ' + i + ': ' + e.message);
      }
      // Two files under one nonce would share a key, and could be swapped unseen.
      if (seen[file.nonce]) bad('files share a nonce');
      seen[file.nonce] = true;
      return { name: file.name, type: file.type, size: file.size, nonce: file.nonce };
    });
    return { text: value.text, files: files };
  }

  /**
   * Seals a note with files: the text (may be '') and the manifest entries (newFileEntry) into a `vz1.` envelope.
   * `ivForTestVectors` is for the published test vectors only: a real envelope always gets a fresh random IV.
   */
  function sealManifest(text, files, keyText, ivForTestVectors) {
    return Promise.resolve().then(function () {
      if (typeof text !== 'string') throw new Error('the text must be a string (may be empty)');
      if (!Array.isArray(files) || files.length < 1) throw new Error('a manifest lists at least one file');
      var key = bytesOf(keyText, KEY_BYTES, 'the key');
      checkManifest(JSON.parse(manifestJson(text, files)));
      var json = new TextEncoder().encode(manifestJson(text, files));
      var plain = new Uint8Array(json.length + 1);
      plain[0] = MANIFEST_MARK;
      plain.set(json, 1);
      var iv = ivForTestVectors || crypto.getRandomValues(new Uint8Array(IV_BYTES));
      return crypto.subtle.importKey('raw', key, { name: 'AES-GCM' }, false, ['encrypt'])
        .then(function (aes) { return crypto.subtle.encrypt({ name: 'AES-GCM', iv: iv }, aes, plain); })
        .then(function (sealed) {
          var envelope = 'vz1.' + toBase64Url(iv) + '.' + toBase64Url(new Uint8Array(sealed));
          if (envelope.length > ENVELOPE_MAX_LENGTH) {
            throw FileStreamError('TOO_LONG', 'the text and the file names together are too long for one note (' + envelope.length + ' of at most ' + ENVELOPE_MAX_LENGTH + ' characters sealed): shorten the text or the names');
          }
          return envelope;
        });
    });
  }

  /**
   * Opens any `vz1.` envelope: { text, files: null } for a note without files (exactly what envelope.js opens), or
   * { text, files: [{ name, type, size, nonce }] } for a note with files. Rejects when the key does not open it.
   */
  function openNote(envelopeText, keyText) {
    return Promise.resolve().then(function () {
      var key = bytesOf(keyText, KEY_BYTES, 'the key');
      var parts = typeof envelopeText === 'string' ? envelopeText.split('.') : [];
      if (parts.length !== 3 || parts[0] !== 'vz1') throw FileStreamError('ENVELOPE', 'not a vz1 envelope');
      var iv = bytesOf(parts[1], IV_BYTES, 'the envelope\'s IV');
      var sealed = fromBase64Url(parts[2]);
      return crypto.subtle.importKey('raw', key, { name: 'AES-GCM' }, false, ['decrypt'])
        .then(function (aes) { return crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv }, aes, sealed); })
        .then(function (buffer) {
          var plain = new Uint8Array(buffer);
          var decoder = new TextDecoder('utf-8', { fatal: true });
          if (plain.length === 0 || plain[0] !== MANIFEST_MARK) return { text: decoder.decode(plain), files: null };
          var manifest;
          try {
            manifest = JSON.parse(decoder.decode(plain.subarray(1)));
          } catch (e) {
            throw FileStreamError('MANIFEST', 'the note\'s manifest is not well formed: not UTF-8 JSON');
          }
          return checkManifest(manifest);
        });
    });
  }

  return {
    SEGMENT_BYTES: SEGMENT_BYTES,
    TAG_BYTES: TAG_BYTES,
    SEALED_SEGMENT_BYTES: SEALED_SEGMENT_BYTES,
    FILE_NONCE_BYTES: FILE_NONCE_BYTES,
    FILE_KEY_INFO: FILE_KEY_INFO,
    NAME_MAX_BYTES: NAME_MAX_BYTES,
    toBase64Url: toBase64Url,
    fromBase64Url: fromBase64Url,
    segmentCount: segmentCount,
    sealedSize: sealedSize,
    plainSize: plainSize,
    newFileNonce: newFileNonce,
    fileKeyBytes: fileKeyBytes,
    fileKey: fileKey,
    segmentNonce: segmentNonce,
    sealSegment: sealSegment,
    openSegment: openSegment,
    createSealer: createSealer,
    createOpener: createOpener,
    sealTransform: sealTransform,
    openTransform: openTransform,
    sealRange: sealRange,
    newFileEntry: newFileEntry,
    sealManifest: sealManifest,
    openNote: openNote,
  };
});
