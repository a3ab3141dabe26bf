/*
 * Checks packages/envelope/file-stream.js against test-vectors/file-stream.json, wherever it runs: the unit test
 * (Node), the CLI's pack check (Node, on the CLI's own copy) and the Chromium test (the bytes served at
 * /assets/file-stream.js). Plain JavaScript, no imports. Resolves with the number of checks made; rejects with the
 * first vector that does not hold.
 */
(function (root, factory) {
  'use strict';
  if (typeof module === 'object' && module.exports) module.exports = factory();
  else root.vanishVerifyFileVectors = factory();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  function hex(bytes) {
    var out = '';
    for (var i = 0; i < bytes.length; i += 1) out += (bytes[i] < 16 ? '0' : '') + bytes[i].toString(16);
    return out;
  }

  function fromHex(text) {
    var bytes = new Uint8Array(text.length / 2);
    for (var i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(text.substr(i * 2, 2), 16);
    return bytes;
  }

  function plaintextOf(stream) {
    if (stream.plaintext_hex !== undefined) return fromHex(stream.plaintext_hex);
    var bytes = new Uint8Array(stream.plain_size);
    for (var i = 0; i < bytes.length; i += 1) bytes[i] = i % 251;
    return bytes;
  }

  function concat(chunks) {
    var size = chunks.reduce(function (sum, chunk) { return sum + chunk.length; }, 0);
    var out = new Uint8Array(size);
    var at = 0;
    chunks.forEach(function (chunk) { out.set(chunk, at); at += chunk.length; });
    return out;
  }

  function sha256(bytes) {
    return crypto.subtle.digest('SHA-256', bytes).then(function (digest) { return hex(new Uint8Array(digest)); });
  }

  // Pushes in uneven pieces (7 bytes, then 40,000, then the rest), as a network would deliver them.
  function run(worker, bytes) {
    var pieces = [bytes.subarray(0, 7), bytes.subarray(7, 40007), bytes.subarray(40007)];
    var out = [];
    return pieces.reduce(function (ready, piece) {
      return ready.then(function () { return worker.push(piece); }).then(function (done) { out.push.apply(out, done); });
    }, Promise.resolve()).then(function () { return worker.finish(); }).then(function (done) {
      out.push.apply(out, done);
      return concat(out);
    });
  }

  function mutate(bytes, mutation, segment) {
    var copy = new Uint8Array(bytes);
    if (mutation.op === 'none') return copy;
    if (mutation.op === 'flip') { copy[mutation.offset] ^= 1; return copy; }
    if (mutation.op === 'truncate') return copy.subarray(0, mutation.length);
    if (mutation.op === 'append_hex') return concat([copy, fromHex(mutation.hex)]);
    if (mutation.op === 'swap_segments') {
      var a = copy.slice(mutation.a * segment, (mutation.a + 1) * segment);
      var b = copy.slice(mutation.b * segment, (mutation.b + 1) * segment);
      if (a.length !== segment || b.length !== segment) throw new Error('swap_segments needs two full segments');
      copy.set(b, mutation.a * segment);
      copy.set(a, mutation.b * segment);
      return copy;
    }
    throw new Error('unknown mutation ' + mutation.op);
  }

  function verify(vectors, fileStream) {
    var checks = 0;
    var expect = function (condition, what) {
      if (!condition) throw new Error('file-stream vectors: ' + what);
      checks += 1;
    };
    var sealedBy = {};
    var streamBy = {};
    var key = vectors.key;
    return vectors.streams.reduce(function (ready, stream) {
      return ready.then(function () {
        streamBy[stream.name] = stream;
        var plain = plaintextOf(stream);
        expect(fileStream.sealedSize(stream.plain_size) === stream.sealed_size, stream.name + ': sealedSize');
        expect(fileStream.plainSize(stream.sealed_size) === stream.plain_size, stream.name + ': plainSize');
        return fileStream.fileKeyBytes(key, stream.nonce).then(function (fileKey) {
          expect(hex(fileKey) === stream.file_key_hex, stream.name + ': the file key (HKDF)');
          return run(fileStream.createSealer(key, stream.nonce), plain);
        }).then(function (sealed) {
          sealedBy[stream.name] = sealed;
          expect(sealed.length === stream.sealed_size, stream.name + ': sealed size ' + sealed.length);
          if (stream.sealed_hex !== undefined) expect(hex(sealed) === stream.sealed_hex, stream.name + ': sealed bytes');
          return sha256(sealed);
        }).then(function (digest) {
          expect(digest === stream.sealed_sha256, stream.name + ': SHA-256 of the sealed bytes');
          return run(fileStream.createOpener(key, stream.nonce, stream.plain_size), sealedBy[stream.name]);
        }).then(function (opened) {
          expect(hex(opened) === hex(plain), stream.name + ': opens to its plaintext');
          return run(fileStream.createOpener(key, stream.nonce), sealedBy[stream.name]);
        }).then(function (opened) {
          expect(opened.length === plain.length, stream.name + ': opens without its size too');
        });
      });
    }, Promise.resolve()).then(function () {
      var manifest = vectors.manifest;
      return fileStream.sealManifest(manifest.text, manifest.files, key, fileStream.fromBase64Url(manifest.iv)).then(function (envelope) {
        expect(envelope === manifest.envelope, 'the manifest envelope');
        return fileStream.openNote(manifest.envelope, key);
      }).then(function (note) {
        expect(note.text === manifest.text, 'the manifest\'s text');
        expect(JSON.stringify(note.files) === JSON.stringify(manifest.files), 'the manifest\'s files');
      });
    }).then(function () {
      return vectors.failures.reduce(function (ready, failure) {
        return ready.then(function () {
          var target = streamBy[failure.opened_as];
          var bytes = mutate(sealedBy[failure.sealed_from], failure.mutation, fileStream.SEALED_SEGMENT_BYTES);
          var opener = fileStream.createOpener(key, target.nonce, failure.without_size ? undefined : target.plain_size);
          return run(opener, bytes).then(function () {
            expect(false, failure.name + ': opened, but must fail with ' + failure.code);
          }, function (error) {
            expect(error && error.code === failure.code, failure.name + ': failed with ' + (error && (error.code || error.message)) + ', not ' + failure.code);
            expect(typeof error.message === 'string' && error.message.length > 20, failure.name + ': says why');
          });
        });
      }, Promise.resolve());
    }).then(function () { return checks; });
  }

  return verify;
});
