import { parseTimestamp } from '@vanish/common';
import { type Html, html, raw } from '../http/pages/html';
import type { Translator } from '../http/pages/i18n';
import type { PageContext } from '../http/pages/templates';
import { layout } from '../http/pages/templates';
import type { NoteEndReason } from '../domain/ports';
import type { ReceiptBody, ReceiptTimelineEntry } from './receipt-service';

/** A receipt's `YYYY-MM-DD HH:MM:SS` (UTC) said in the reader's language, machine-readable beside it. */
function moment(t: Translator, timestamp: string | null, precise = false): Html {
  const date = timestamp ? parseTimestamp(timestamp) : undefined;
  if (!date) return html`${timestamp ?? ''}`;
  return html`<time datetime="${date.toISOString()}">${precise ? t.preciseUtc(date) : t.dateUtc(date)}</time>`;
}

/**
 * How the note ended, in words true for that note: a view note swept at its retention deadline was
 * unread only when no view was used.
 */
export function endReasonText(t: Translator, reason: NoteEndReason, viewsUsed: number): string {
  if (reason === 'retention' && viewsUsed > 0) return t.t('receipt.reason.retentionPartlyRead');
  return t.t(`receipt.reason.${reason}`);
}

function describe(t: Translator, entry: ReceiptTimelineEntry, viewsUsed: number): string {
  switch (entry.event) {
    case 'page_fetch': return t.t(`receipt.event.pageFetch.${entry.client}`);
    case 'end': return t.t('receipt.event.end', { reason: endReasonText(t, entry.reason, viewsUsed) });
    default: return t.t(`receipt.event.${entry.event}`);
  }
}

/** The note's rule for ending, said the same way before and after it ended (the label gives the tense). */
export function expiryText(t: Translator, receipt: ReceiptBody): string {
  const date = parseTimestamp(receipt.expires_at);
  const at = date ? t.dateUtc(date) : receipt.expires_at;
  const type = receipt.expiry_type === 'time' || receipt.expiry_type === 'both' ? receipt.expiry_type : 'view';
  return t.t(`receipt.expiry.${type}`, { views: receipt.max_views, at });
}

/** The receipt page (DECISIONS 12): what happened to the note. It never shows content and counts nothing. */
export function receiptPage(ctx: PageContext, receipt: ReceiptBody, endToken: string | null, jsonPath: string, notice?: string): string {
  const { t } = ctx;
  const ended = receipt.status === 'ended';
  const endedAt = receipt.ended_at ? parseTimestamp(receipt.ended_at) : undefined;
  const purgeAt = receipt.purge_after ? parseTimestamp(receipt.purge_after) : undefined;
  // A note that ends at a time only has no view limit the user chose: its max_views is an internal
  // cap (100), so the page says how many views there were, not "0 of 100", nor "100 left".
  const viewLimit = receipt.expiry_type !== 'time';
  return layout(ctx, t.t('receipt.title'), html`
<h1>${t.t('receipt.heading')}</h1>
${notice ? html`<p class="card" role="status" id="receipt-notice">${notice}</p>` : raw('')}
<section class="card" aria-labelledby="status-heading">
  <h2 id="status-heading">${ended ? t.t('receipt.ended', { when: endedAt ? t.dateUtc(endedAt) : receipt.ended_at ?? '' }) : t.t('receipt.waiting')}</h2>
  <dl class="facts">
    <dt>${t.t('receipt.created')}</dt><dd>${moment(t, receipt.created_at)}</dd>
    <dt>${t.t(ended ? 'receipt.wasToEnd' : 'receipt.endsWhen')}</dt><dd id="end-rule">${expiryText(t, receipt)}</dd>
    <dt>${t.t('receipt.viewsUsed')}</dt><dd id="views-used">${viewLimit ? t.t('receipt.viewsUsedValue', { used: receipt.views_used, max: receipt.max_views }) : t.number(receipt.views_used)}</dd>
    ${ended || !viewLimit ? raw('') : html`<dt>${t.t('receipt.viewsLeft')}</dt><dd id="views-left">${t.number(receipt.views_left)}</dd>`}
    <dt>${t.t('receipt.passcode')}</dt><dd>${t.t(receipt.has_passcode ? 'receipt.yes' : 'receipt.no')}</dd>
    ${ended ? html`<dt>${t.t('receipt.howEnded')}</dt><dd id="end-reason">${receipt.end_reason ? endReasonText(t, receipt.end_reason, receipt.views_used) : ''}</dd>
    <dt>${t.t('receipt.thisReceipt')}</dt><dd>${t.t('receipt.keptUntil', { when: purgeAt ? t.dateUtc(purgeAt) : receipt.purge_after ?? '' })}</dd>` : raw('')}
  </dl>
</section>
<section class="card" aria-labelledby="timeline-heading">
  <h2 id="timeline-heading">${t.t('receipt.timelineHeading')}</h2>
  <ol class="timeline" id="timeline">
    ${receipt.timeline.map((entry): Html => html`<li data-event="${entry.event}">${moment(t, entry.at, true)} ${describe(t, entry, receipt.views_used)}</li>`)}
  </ol>
  <p class="hint">${t.t('receipt.timelineHint')}</p>
</section>
${!ended && endToken ? html`<section class="card" aria-labelledby="end-heading">
  <h2 id="end-heading">${t.t('receipt.endHeading')}</h2>
  <form method="post">
    <input type="hidden" name="form_token" value="${endToken}">
    <button type="submit" class="danger">${t.t('receipt.endButton')}</button>
  </form>
  <p class="hint">${t.t('receipt.endHint')}</p>
</section>` : raw('')}
<p class="hint">${t.t('receipt.footer')} <a href="${jsonPath}">${t.t('receipt.signedCopy')}</a></p>`);
}

export function receiptNotFoundPage(ctx: PageContext): string {
  const { t } = ctx;
  return layout(ctx, t.t('receipt.notFound.title'), html`
<h1>${t.t('receipt.notFound.heading')}</h1>
<div class="card">
  <p>${t.t('receipt.notFound.body')}</p>
  <p><a href="/">${t.t('notFound.newNote')}</a></p>
</div>`);
}
