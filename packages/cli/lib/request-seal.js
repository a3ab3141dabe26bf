/*
 * Sealing to a request (DECISIONS 15). A requester makes an X25519 key pair on their machine and gives the
 * server only the public key. A sender makes an ephemeral X25519 key pair, agrees a secret with the request's
 * public key, derives the note key K from it with HKDF-SHA-256, and seals the text into the note envelope of
 * DECISIONS 13 (envelope.js) under K. What the server receives is the request envelope
 *
 *   vr1.<base64url(ephemeral public key, 32 bytes)>.<base64url(iv)>.<base64url(ciphertext and tag)>
 *
 * whose last two parts are exactly those of `vz1.<iv>.<ciphertext>` sealed under K, and key_check(K) as for any
 * note. Only the holder of the private key derives K again, so only they can prove the key (key_check) and open
 * the text. docs/requests.md gives the format byte for byte with a test vector.
 *
 *   shared = X25519(ephemeral private, request public)            (32 bytes; all zero is refused)
 *   K      = HKDF-SHA-256(ikm = shared, salt = ephemeral public || request public, info = "vanish request v1", 32 bytes)
 *
 * Keys travel as base64url of their 32 raw bytes (43 characters): the public key in the request, the private
 * key in the inbox link's fragment (which browsers never send) or in the CLI's key file.
 *
 * One plain-JavaScript file with no build, served byte for byte to the browser (/assets/request-seal.js, with its
 * SRI hash, after envelope.js) and required by the CLI (a pinned copy in packages/cli/lib) and the server's
 * checks. Only WebCrypto (X25519, HKDF) and the envelope. In a page it defines `window.vanishRequestSeal`.
 */
(function (root, factory) {
  'use strict';
  if (typeof module === 'object' && module.exports) module.exports = factory(require('./envelope'));
  else root.vanishRequestSeal = factory(root.vanishEnvelope);
})(typeof self !== 'undefined' ? self : this, function (envelope) {
  'use strict';

  var REQUEST_ENVELOPE_VERSION = 'vr1';
  var INFO = 'vanish request v1';
  var KEY_CHARS = 43;
  // PKCS #8 of an X25519 private key is this fixed prefix and the 32 bytes (RFC 8410): the only form in which
  // WebCrypto imports a bare private key (a JWK wants the public part too, which is what the import computes).
  var PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20];

  function keyBytes(text) {
    if (typeof text !== 'string' || text.length !== KEY_CHARS) return null;
    try {
      var bytes = envelope.fromBase64Url(text);
      return bytes.length === 32 ? bytes : null;
    } catch (e) {
      return null;
    }
  }

  /** True for a key as requests carry them: base64url of 32 bytes, 43 characters. */
  function isKeyText(text) {
    return keyBytes(text) !== null;
  }

  /** WebCrypto's X25519 (Chromium 133+, Firefox 130+, Safari 17+, Node 22+); false where it is missing. */
  function supported() {
    if (typeof crypto === 'undefined' || !crypto.subtle) return Promise.resolve(false);
    return crypto.subtle.generateKey({ name: 'X25519' }, true, ['deriveBits']).then(function () { return true; }, function () { return false; });
  }

  function rawPublic(pair) {
    return crypto.subtle.exportKey('raw', pair.publicKey).then(function (raw) { return envelope.toBase64Url(new Uint8Array(raw)); });
  }

  function rawPrivate(pair) {
    return crypto.subtle.exportKey('jwk', pair.privateKey).then(function (jwk) { return jwk.d; });
  }

  /** A new key pair for a request: { publicKey, privateKey }, each base64url of 32 bytes. */
  function newKeyPair() {
    return crypto.subtle.generateKey({ name: 'X25519' }, true, ['deriveBits']).then(function (pair) {
      return Promise.all([rawPublic(pair), rawPrivate(pair)]).then(function (keys) { return { publicKey: keys[0], privateKey: keys[1] }; });
    });
  }

  function importPrivate(privateKeyText) {
    var bytes = keyBytes(privateKeyText);
    if (!bytes) return Promise.reject(new Error('the private key must be 32 bytes of base64url'));
    var pkcs8 = new Uint8Array(PKCS8_PREFIX.length + 32);
    pkcs8.set(PKCS8_PREFIX, 0);
    pkcs8.set(bytes, PKCS8_PREFIX.length);
    return crypto.subtle.importKey('pkcs8', pkcs8, { name: 'X25519' }, true, ['deriveBits']);
  }

  function importPublic(publicKeyText) {
    var bytes = keyBytes(publicKeyText);
    if (!bytes) return Promise.reject(new Error('the public key must be 32 bytes of base64url'));
    return crypto.subtle.importKey('raw', bytes, { name: 'X25519' }, true, []);
  }

  /** The public key of a private key (to check an inbox link's key against its request). */
  function publicKeyOf(privateKeyText) {
    return importPrivate(privateKeyText).then(function (key) { return crypto.subtle.exportKey('jwk', key); }).then(function (jwk) { return jwk.x; });
  }

  /** K (base64url, as a note link's fragment) from one side's private key and the other side's public key. */
  function deriveNoteKey(privateKey, publicKey, ephemeralPublicText, requestPublicText) {
    return crypto.subtle.deriveBits({ name: 'X25519', public: publicKey }, privateKey, 256).then(function (bits) {
      var shared = new Uint8Array(bits);
      var zero = 0;
      for (var i = 0; i < shared.length; i += 1) zero |= shared[i];
      // A low-order public key makes the agreement all zeros: anyone could compute it.
      if (zero === 0) throw new Error('the key agreement gave no secret (a low-order public key)');
      var salt = new Uint8Array(64);
      salt.set(keyBytes(ephemeralPublicText), 0);
      salt.set(keyBytes(requestPublicText), 32);
      return crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveBits']).then(function (ikm) {
        return crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: salt, info: new TextEncoder().encode(INFO) }, ikm, 256);
      });
    }).then(function (k) { return envelope.toBase64Url(new Uint8Array(k)); });
  }

  /** The parts of a request envelope, or null when it is not a well-formed `vr1` one. */
  function parseRequestEnvelope(text) {
    if (typeof text !== 'string' || text.length > envelope.ENVELOPE_MAX_LENGTH + 48) return null;
    var parts = text.split('.');
    if (parts.length !== 4 || parts[0] !== REQUEST_ENVELOPE_VERSION || !isKeyText(parts[1])) return null;
    var inner = envelope.ENVELOPE_VERSION + '.' + parts[2] + '.' + parts[3];
    if (!envelope.parseEnvelope(inner)) return null;
    return { ephemeralPublicKey: parts[1], envelope: inner };
  }

  /**
   * A new note key K for an answer to a request: { ephemeralPublicKey, key }. The sender seals its note under `key`
   * (envelope.js for a text; file-stream.js's sealManifest and streams for an answer with files, DECISIONS 14) and
   * submits requestEnvelope(ephemeralPublicKey, that note envelope). `ephemeral` (a { publicKey, privateKey } pair)
   * is for test vectors only; a fresh pair is made otherwise.
   */
  function newNoteKeyTo(requestPublicText, ephemeral) {
    var pairText = ephemeral ? Promise.resolve(ephemeral) : newKeyPair();
    return Promise.all([pairText, importPublic(requestPublicText)]).then(function (both) {
      var pair = both[0];
      return importPrivate(pair.privateKey).then(function (privateKey) {
        return deriveNoteKey(privateKey, both[1], pair.publicKey, requestPublicText);
      }).then(function (key) { return { ephemeralPublicKey: pair.publicKey, key: key }; });
    });
  }

  /** The request envelope to submit: `vr1.<ephemeral public key>.<iv>.<ciphertext>` of a `vz1` note envelope sealed under K. */
  function requestEnvelope(ephemeralPublicText, noteEnvelope) {
    var inner = typeof noteEnvelope === 'string' ? noteEnvelope.split('.') : [];
    if (inner.length !== 3 || inner[0] !== envelope.ENVELOPE_VERSION || !isKeyText(ephemeralPublicText)) throw new Error('a request envelope wraps a vz1 note envelope and a 32-byte ephemeral public key');
    return REQUEST_ENVELOPE_VERSION + '.' + ephemeralPublicText + '.' + inner[1] + '.' + inner[2];
  }

  /**
   * Seals a text to a request's public key. `ephemeral` (a { publicKey, privateKey } pair) is for test vectors
   * only; a fresh pair is made otherwise. Resolves { content, keyCheck, key } where `content` is the request
   * envelope to submit, `keyCheck` its proof, and `key` K (for a test; a sender has no use for it).
   */
  function sealTo(requestPublicText, text, ephemeral) {
    return newNoteKeyTo(requestPublicText, ephemeral).then(function (noteKey) {
      return Promise.all([envelope.seal(text, noteKey.key), envelope.keyCheck(noteKey.key)]).then(function (sealed) {
        return { content: requestEnvelope(noteKey.ephemeralPublicKey, sealed[0]), keyCheck: sealed[1], key: noteKey.key };
      });
    });
  }

  /** K of one submission, from the requester's private key and the submission's ephemeral public key. */
  function noteKeyFor(privateKeyText, ephemeralPublicText) {
    return Promise.all([importPrivate(privateKeyText), importPublic(ephemeralPublicText), publicKeyOf(privateKeyText)]).then(function (keys) {
      return deriveNoteKey(keys[0], keys[1], ephemeralPublicText, keys[2]);
    });
  }

  /** The proof to reveal a submission (its key_check), made on the requester's machine. */
  function keyCheckFor(privateKeyText, ephemeralPublicText) {
    return noteKeyFor(privateKeyText, ephemeralPublicText).then(envelope.keyCheck);
  }

  /** Opens a submission's note envelope (`vz1…`, as the reveal answers it) with the requester's private key. */
  function openFrom(privateKeyText, ephemeralPublicText, noteEnvelope) {
    return noteKeyFor(privateKeyText, ephemeralPublicText).then(function (key) { return envelope.open(noteEnvelope, key); });
  }

  return {
    REQUEST_ENVELOPE_VERSION: REQUEST_ENVELOPE_VERSION,
    supported: supported,
    isKeyText: isKeyText,
    newKeyPair: newKeyPair,
    publicKeyOf: publicKeyOf,
    parseRequestEnvelope: parseRequestEnvelope,
    newNoteKeyTo: newNoteKeyTo,
    requestEnvelope: requestEnvelope,
    sealTo: sealTo,
    noteKeyFor: noteKeyFor,
    keyCheckFor: keyCheckFor,
    openFrom: openFrom,
  };
});
