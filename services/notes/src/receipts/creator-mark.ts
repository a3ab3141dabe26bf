/**
 * The creator mark (DECISIONS 16, docs/receipts.md "The wrong-link guard"): a cookie that the created page
 * sets in the browser that made the note, scoped to that note's receipt path (`Path=/r/{receipt_id}`), so
 * that only requests for that receipt carry it. Its value is a constant: it says "this browser created the
 * note" and nothing else. The server learns nothing from it that the request's own path does not already
 * say, it is set without any script (a `Set-Cookie` on the created page), and it is not a credential: the
 * receipt link stays the bearer secret it was (the JSON receipt needs no mark). It only decides whether the
 * receipt page shows the receipt at once or first the guard that says whose link this is.
 */
export const CREATOR_MARK_COOKIE = 'vanish_creator';
const CREATOR_MARK_VALUE = '1';
/** Browsers keep a cookie at most 400 days (Chromium caps Max-Age there). */
const MAX_AGE_MS = 400 * 24 * 3_600_000;
const HOUR_MS = 3_600_000;

export interface CookieToSet {
  name: string;
  value: string;
  options: { path: string; maxAge: number; sameSite: 'lax'; httpOnly: true; secure: boolean };
}

/**
 * The mark for one receipt: it lives as long as the receipt can (the note's deadline plus the retention),
 * at most 400 days. `SameSite=Lax`: a receipt link clicked in the creator's own mail still carries it.
 */
export function creatorMark(receiptUrl: string, expiresAt: Date, retentionHours: number, now: Date): CookieToSet {
  const url = new URL(receiptUrl);
  const lifetime = expiresAt.getTime() + retentionHours * HOUR_MS - now.getTime();
  return {
    name: CREATOR_MARK_COOKIE,
    value: CREATOR_MARK_VALUE,
    options: { path: url.pathname, maxAge: Math.max(HOUR_MS, Math.min(MAX_AGE_MS, lifetime)), sameSite: 'lax', httpOnly: true, secure: url.protocol === 'https:' },
  };
}

/** True when the request carries the creator mark (only a request for the marked receipt's path can). */
export function hasCreatorMark(cookieHeader: string | undefined): boolean {
  if (!cookieHeader) return false;
  return cookieHeader.split(';').some((part) => part.trim() === `${CREATOR_MARK_COOKIE}=${CREATOR_MARK_VALUE}`);
}
