/*
 * The note envelope of DECISIONS 13. The writer's machine seals the text under a random 256-bit key K
 * (AES-256-GCM, random 96-bit IV) as `vz1.<base64url(iv)>.<base64url(ciphertext and tag)>`, and the link
 * carries K in its fragment, which browsers never send. `key_check` lets the server tell a link with the
 * right key from one without it, without ever learning K.
 *
 * One file, served byte for byte to the browser (as /assets/envelope.js, with its SRI hash) and required
 * by the command-line client and the server's validator. So it is plain JavaScript that needs no build,
 * imports nothing, and uses only WebCrypto, TextEncoder/TextDecoder and btoa/atob, which browsers and
 * Node 24 both have. In a page it defines `window.vanishEnvelope`.
 */
(function (root, factory) {
  'use strict';
  if (typeof module === 'object' && module.exports) module.exports = factory();
  else root.vanishEnvelope = factory();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  var ENVELOPE_VERSION = 'vz1';
  // An envelope of 10,000 code points of 4-byte UTF-8 is under 54,000 characters; 60,000 leaves room.
  var ENVELOPE_MAX_LENGTH = 60000;
  var KEY_BYTES = 32;
  var IV_BYTES = 12;
  var TAG_BYTES = 16;
  var KEY_CHECK_LABEL = 'vanish key check v1';
  var B64URL = /^[A-Za-z0-9_-]+$/;
  var IV_CHARS = 16; // base64url of 12 bytes, unpadded
  var KEY_CHARS = 43; // base64url of 32 bytes, unpadded

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
    // Only the canonical spelling: two texts never name the same bytes.
    if (toBase64Url(bytes) !== text) throw new Error('not canonical base64url');
    return bytes;
  }

  /** A new random key K, as the base64url text that goes into the link's fragment. */
  function newKey() {
    return toBase64Url(crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
  }

  /** The fragment's key as bytes, or null when it is not a well-formed key ("#" allowed in front). */
  function parseKey(fragment) {
    if (typeof fragment !== 'string') return null;
    var text = fragment.replace(/^#/, '');
    if (text.length !== KEY_CHARS) return null;
    try {
      var bytes = fromBase64Url(text);
      return bytes.length === KEY_BYTES ? bytes : null;
    } catch (e) {
      return null;
    }
  }

  function requireKey(keyText) {
    var key = parseKey(keyText);
    if (!key) throw new Error('the key must be 32 bytes of base64url');
    return key;
  }

  /** The envelope's parts, or null when it is not a well-formed `vz1` envelope (the server's check too). */
  function parseEnvelope(envelope) {
    if (typeof envelope !== 'string' || envelope.length > ENVELOPE_MAX_LENGTH) return null;
    var parts = envelope.split('.');
    if (parts.length !== 3 || parts[0] !== ENVELOPE_VERSION || parts[1].length !== IV_CHARS) return null;
    try {
      var iv = fromBase64Url(parts[1]);
      var sealed = fromBase64Url(parts[2]);
      // An empty text still has its 16-byte tag; empty notes are refused.
      return iv.length === IV_BYTES && sealed.length > TAG_BYTES ? { iv: iv, sealed: sealed } : null;
    } catch (e) {
      return null;
    }
  }

  /** Seals the text under the key (base64url, as in the fragment). */
  function seal(text, keyText) {
    var key = requireKey(keyText);
    var iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    return crypto.subtle.importKey('raw', key, { name: 'AES-GCM' }, false, ['encrypt'])
      .then(function (aes) { return crypto.subtle.encrypt({ name: 'AES-GCM', iv: iv }, aes, new TextEncoder().encode(text)); })
      .then(function (sealed) { return ENVELOPE_VERSION + '.' + toBase64Url(iv) + '.' + toBase64Url(new Uint8Array(sealed)); });
  }

  /** Opens an envelope with the key; rejects when the key is wrong or the envelope was changed. */
  function open(envelope, keyText) {
    return Promise.resolve().then(function () {
      var key = requireKey(keyText);
      var parts = parseEnvelope(envelope);
      if (!parts) throw new Error('not a vz1 envelope');
      return crypto.subtle.importKey('raw', key, { name: 'AES-GCM' }, false, ['decrypt'])
        .then(function (aes) { return crypto.subtle.decrypt({ name: 'AES-GCM', iv: parts.iv }, aes, parts.sealed); })
        .then(function (plain) { return new TextDecoder('utf-8', { fatal: true }).decode(plain); });
    });
  }

  /** base64url(HMAC-SHA-256(K, "vanish key check v1")): proof of the key that does not reveal it. */
  function keyCheck(keyText) {
    return Promise.resolve().then(function () {
      var key = requireKey(keyText);
      return crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
        .then(function (hmac) { return crypto.subtle.sign('HMAC', hmac, new TextEncoder().encode(KEY_CHECK_LABEL)); })
        .then(function (mac) { return toBase64Url(new Uint8Array(mac)); });
    });
  }

  /** A key_check as the server accepts it: base64url of 32 bytes. */
  function isKeyCheck(value) {
    if (typeof value !== 'string' || value.length !== KEY_CHARS) return false;
    try {
      return fromBase64Url(value).length === 32;
    } catch (e) {
      return false;
    }
  }

  return {
    ENVELOPE_VERSION: ENVELOPE_VERSION,
    ENVELOPE_MAX_LENGTH: ENVELOPE_MAX_LENGTH,
    toBase64Url: toBase64Url,
    fromBase64Url: fromBase64Url,
    newKey: newKey,
    parseKey: parseKey,
    parseEnvelope: parseEnvelope,
    seal: seal,
    open: open,
    keyCheck: keyCheck,
    isKeyCheck: isKeyCheck,
  };
});
