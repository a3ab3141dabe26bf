'use strict';
/*
 * The file segments' AES-256-GCM (DECISIONS 14, docs/file-format.md) with node:crypto, for file-stream.js's
 * `makeKey`: the same bytes as WebCrypto's, several times cheaper per 64 KiB segment (WebCrypto copies each segment
 * into a job on another thread and back, and checks its arguments on every call), which is most of what sealing
 * and opening a large file cost the client. The format's code (file-stream.js) stays the pages' own; only the
 * cipher under it differs.
 */
const crypto = require('node:crypto');

const TAG_BYTES = 16;

/** A host cipher (file-stream.js's sealSegment) under the file key's 32 bytes. */
function nodeSegmentCipher(fileKeyBytes) {
  const key = crypto.createSecretKey(Buffer.from(fileKeyBytes));
  return {
    seal(iv, plain) {
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const out = Buffer.allocUnsafe(plain.length + TAG_BYTES);
      const body = cipher.update(plain);
      body.copy(out, 0);
      cipher.final();
      cipher.getAuthTag().copy(out, plain.length);
      return out;
    },
    open(iv, sealed) {
      if (sealed.length < TAG_BYTES) return null;
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
      try {
        decipher.final();
      } catch {
        return null; // the tag does not match: nothing of it is given out
      }
      return plain;
    },
  };
}

module.exports = { nodeSegmentCipher };
