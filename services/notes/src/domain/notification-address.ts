/**
 * Issue 20: a read notification is written in the language of the page that created the note. The
 * language is kept with the address, inside the note's sealed e-mail box (`address` + LF + `lang`): no
 * new column, nothing in clear, and a box sealed before this (the address alone) reads as English. An
 * address never holds a line break (the validator accepts one plain address only).
 */
const SEPARATOR = '\n';
const LANG_TAG = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,2}$/;

export interface NotificationAddress {
  address: string;
  /** Absent: English. */
  lang?: string;
}

export function packNotificationAddress(address: string | null, lang: string | undefined): string | null {
  if (address === null) return null;
  return lang && lang !== 'en' && LANG_TAG.test(lang) ? `${address}${SEPARATOR}${lang}` : address;
}

export function unpackNotificationAddress(sealedText: string | null): NotificationAddress | null {
  if (sealedText === null) return null;
  const at = sealedText.indexOf(SEPARATOR);
  if (at < 0) return { address: sealedText };
  const lang = sealedText.slice(at + 1);
  return LANG_TAG.test(lang) ? { address: sealedText.slice(0, at), lang } : { address: sealedText.slice(0, at) };
}
