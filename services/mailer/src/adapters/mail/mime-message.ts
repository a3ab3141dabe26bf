import { randomUUID } from 'node:crypto';
import type { OutgoingEmail } from '../../domain/mail-transport';

/**
 * The one shape every e-mail of ours has, written directly: a multipart/alternative of the text and the
 * HTML, both quoted-printable UTF-8, under our headers. Handed to nodemailer as `raw`, it replaces the
 * MIME tree, header parsing and encoding streams nodemailer builds for each message: 15 to 40 % of the
 * SMTP transport's CPU per e-mail (docs/mailer.md, Messages). Lines end in CRLF; the SMTP layer still
 * stuffs dots.
 */
export function composeMimeMessage(email: OutgoingEmail, now: Date = new Date()): string {
  // Unique per message (a random UUID): no body holds it.
  const boundary = `--_vanish-${randomUUID().replaceAll('-', '')}`;
  const headers = [
    ['From', mailbox(email.from)],
    ['To', email.to],
    ['Subject', headerText(email.subject)],
    ['Message-ID', email.messageId],
    ['Date', now.toUTCString().replace(/GMT$/, '+0000')],
    ...Object.entries(email.headers),
    ['MIME-Version', '1.0'],
    ['Content-Type', `multipart/alternative; boundary="${boundary}"`],
  ];
  const head = headers.map(([name, value]) => `${name}: ${oneLine(name!, value!)}`).join('\r\n');
  return `${head}\r\n\r\n`
    + `--${boundary}\r\n${textPart('text/plain', email.text)}\r\n`
    + `--${boundary}\r\n${textPart('text/html', email.html)}\r\n`
    + `--${boundary}--\r\n`;
}

/** The envelope's sender: the address of a `Name <address>` From, or the From itself. */
export function envelopeSender(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();
}

function textPart(type: string, body: string): string {
  return `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${quotedPrintable(body)}`;
}

/** A header value never breaks a line of its own: no header of ours may be injected through one. */
function oneLine(name: string, value: string): string {
  if (/[\r\n]/.test(value.replace(/\r\n /g, ''))) throw new Error(`the ${name} header holds a line break`);
  return value;
}

/** `Name <address>` with a name outside ASCII as encoded words (RFC 2047); the address stays as it is. */
function mailbox(from: string): string {
  const match = /^(.*?)\s*<([^<>]+)>\s*$/.exec(from);
  if (!match || isPrintableAscii(match[1]!)) return from;
  return `${encodedWords(match[1]!)} <${match[2]}>`;
}

/** Printable ASCII stays as it is (a subject of ours is far below the 998 characters of a line); anything else as encoded words. */
function headerText(text: string): string {
  return isPrintableAscii(text) ? text : encodedWords(text);
}

function isPrintableAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

/**
 * Most UTF-8 bytes in one `=?UTF-8?B?…?=` word: 52 base64 characters, a word of 64, so that even the first,
 * after "Subject: ", stays within the 76 characters RFC 2047 allows a line holding encoded words.
 */
const ENCODED_WORD_BYTES = 39;

/**
 * RFC 2047 B-encoded words, each whole characters only (a decoder may decode each word on its own),
 * folded one word per line: the whitespace between two encoded words is not part of the text.
 */
function encodedWords(text: string): string {
  const words: string[] = [];
  let bytes: Buffer[] = [];
  let size = 0;
  for (const character of text) {
    const encoded = Buffer.from(character, 'utf8');
    if (size + encoded.length > ENCODED_WORD_BYTES) {
      words.push(Buffer.concat(bytes, size).toString('base64'));
      bytes = [];
      size = 0;
    }
    bytes.push(encoded);
    size += encoded.length;
  }
  if (size > 0) words.push(Buffer.concat(bytes, size).toString('base64'));
  return words.map((word) => `=?UTF-8?B?${word}?=`).join('\r\n ');
}

/** Most characters of a quoted-printable line, its soft line break's "=" included (RFC 2045 6.7). */
const QP_LINE = 76;

/**
 * RFC 2045 quoted-printable of UTF-8 text, its line breaks written as CRLF: printable ASCII but "=" stays
 * as it is, other bytes as =XX, a space or tab ending a line too, and lines longer than 76 characters
 * broken softly ("=" at the end) between whole characters and escapes.
 */
export function quotedPrintable(text: string): string {
  return text.split(/\r?\n/).map(quotedPrintableLine).join('\r\n');
}

function quotedPrintableLine(line: string): string {
  // The common line of our templates: plain ASCII, short, no trailing space: as it is.
  if (line.length <= QP_LINE && /^[\x20-\x3c\x3e-\x7e]*$/.test(line) && !line.endsWith(' ')) return line;
  const bytes = Buffer.from(line, 'utf8');
  const tokens: string[] = [];
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i]!;
    const last = i === bytes.length - 1;
    const plain = (byte >= 0x21 && byte <= 0x7e && byte !== 0x3d) || ((byte === 0x20 || byte === 0x09) && !last);
    tokens.push(plain ? String.fromCharCode(byte) : `=${byte < 0x10 ? '0' : ''}${byte.toString(16).toUpperCase()}`);
  }
  const out: string[] = [];
  let current = '';
  for (const token of tokens) {
    // Room for the soft break's "=" on every line but the last.
    if (current.length + token.length > QP_LINE - 1) {
      out.push(`${current}=`);
      current = '';
    }
    current += token;
  }
  out.push(current);
  return out.join('\r\n');
}
