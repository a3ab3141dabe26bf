import { randomBytes } from 'node:crypto';

/**
 * Object names are random (128 bits, lower-case hex) and unrelated to any token, uuid, note_ref or
 * receipt (DECISIONS 14). Hex only, so the suffixes the tus stores add (`.json`, `.info`, `.part`)
 * never make one name look like another, and no name can climb out of a folder.
 */
export function randomObjectName(): string {
  return randomBytes(16).toString('hex');
}

const NAME = /^[0-9a-f]{32}$/;

export function isObjectName(name: string): boolean {
  return NAME.test(name);
}

/** Adapters refuse any other name: it never came from randomObjectName(). */
export function assertObjectName(name: string): void {
  if (!isObjectName(name)) throw new TypeError('not a stored object name (32 lower-case hex digits)');
}
