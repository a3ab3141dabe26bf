import { parseTimestamp } from '@vanish/common';
import { type Html, escapeHtml, html, raw } from '../http/pages/html';
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
    case 'file_download': return t.t(`receipt.event.fileDownload.${entry.client}`);
    case 'end': return t.t('receipt.event.end', { reason: endReasonText(t, entry.reason, viewsUsed) });
    case 'shrink': return t.t('receipt.event.shrink');
    case 'checkin': return t.t('receipt.event.checkin');
    case 'release': return t.t('receipt.event.release');
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

/**
 * DECISIONS 16: the note's release ("scheduled" or "held", then "released"), the switch's "I am still
 * here" form (`checkinToken`, only while it is held), and the shrink after the first view.
 */
export function timeControlsSection(t: Translator, receipt: ReceiptBody, checkinToken: string | null, checkinPath: string): Html {
  const release = receipt.release;
  if (!release && !receipt.shrink_after_first_view_minutes) return raw('');
  const ended = receipt.status === 'ended';
  const opens = parseTimestamp(release?.opens_at ?? '');
  const when = opens ? t.dateUtc(opens) : release?.opens_at ?? '';
  const releasedAt = parseTimestamp(release?.released_at ?? '') ?? opens;
  return html`<section class="card" aria-labelledby="controls-heading" id="time-controls">
  <h2 id="controls-heading">${t.t('receipt.controls.heading')}</h2>
  <dl class="facts">
    ${release && ended && release.state !== 'released' ? html`<dt>${t.t('receipt.release.label')}</dt><dd id="release-state" data-state="never">${t.t('receipt.release.endedFirst')}</dd>` : raw('')}
    ${release && !(ended && release.state !== 'released') ? html`<dt>${t.t('receipt.release.label')}</dt><dd id="release-state" data-state="${release.state}"><strong>${t.t(`receipt.release.state.${release.state}`)}</strong>: ${release.state === 'released'
      ? t.t('receipt.release.released', { when: releasedAt ? t.dateUtc(releasedAt) : '' })
      : t.t(release.state === 'held' ? 'receipt.release.held' : 'receipt.release.scheduled', { when })}</dd>` : raw('')}
    ${receipt.shrink_after_first_view_minutes ? html`<dt>${t.t('receipt.controls.shrink')}</dt><dd id="shrink">${t.t('controls.shrink', { minutes: receipt.shrink_after_first_view_minutes })}</dd>` : raw('')}
  </dl>
  ${release?.state === 'held' && !ended && checkinToken ? html`<form method="post" action="${checkinPath}">
    <input type="hidden" name="form_token" value="${checkinToken}">
    <button type="submit" id="checkin-button">${t.t('receipt.release.checkinButton')}</button>
  </form>
  <p class="hint">${t.t('receipt.release.checkinHint', { hours: release.silence_hours ?? 0 })}</p>` : raw('')}
  ${release ? html`<p class="hint">${t.t('controls.timeGate')}</p>` : raw('')}
</section>`;
}

/**
 * The receipt page (DECISIONS 12): what happened to the note; it never shows content and counts nothing.
 * `endHref`: where "End this note now" leads while the note lives, the confirmation page (DECISIONS 16:
 * ending always asks first); the button itself ends nothing.
 */
export function receiptPage(
  ctx: PageContext, receipt: ReceiptBody, endHref: string | null, jsonPath: string, notice?: string, checkinToken: string | null = null, checkinPath = '',
): string {
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
${timeControlsSection(t, receipt, checkinToken, checkinPath)}
<section class="card" aria-labelledby="timeline-heading">
  <h2 id="timeline-heading">${t.t('receipt.timelineHeading')}</h2>
  <ol class="timeline" id="timeline">
    ${receipt.timeline.map((entry): Html => html`<li data-event="${entry.event}">${moment(t, entry.at, true)} ${describe(t, entry, receipt.views_used)}</li>`)}
  </ol>
  <p class="hint">${t.t('receipt.timelineHint')}</p>
</section>
${!ended && endHref ? html`<section class="card" aria-labelledby="end-heading">
  <h2 id="end-heading">${t.t('receipt.endHeading')}</h2>
  <p><a class="button danger" id="end-note" href="${endHref}">${t.t('receipt.endButton')}</a></p>
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

/**
 * The wrong-link guard (DECISIONS 16): a receipt link opened in a browser that did not create the note
 * (no creator mark). It says whose link this is and offers nothing that ends the note; the creator on
 * another device goes on to the receipt with one more step.
 */
export function receiptGuardPage(ctx: PageContext, receiptHref: string): string {
  const { t } = ctx;
  return layout(ctx, t.t('receipt.guard.title'), html`
<h1>${t.t('receipt.guard.heading')}</h1>
<section class="card" id="receipt-guard">
  <p>${t.t('receipt.guard.whose')}</p>
  <p><strong>${t.t('receipt.guard.ifSent')}</strong></p>
  <p class="hint">${t.t('receipt.guard.why')}</p>
  <p><a href="${receiptHref}" id="show-receipt">${t.t('receipt.guard.creator')}</a></p>
</section>`);
}

/** "End this note now" asks first (DECISIONS 16): this page's form is the only one that ends the note. */
export function confirmEndPage(ctx: PageContext, endToken: string, receiptHref: string): string {
  const { t } = ctx;
  return layout(ctx, t.t('receipt.confirm.title'), html`
<h1>${t.t('receipt.confirm.heading')}</h1>
<section class="card" id="confirm-end">
  <p>${t.t('receipt.confirm.body')}</p>
  <form method="post" action="${receiptHref.split('?')[0]}">
    <input type="hidden" name="form_token" value="${endToken}">
    <button type="submit" class="danger">${t.t('receipt.confirm.yes')}</button>
  </form>
  <p><a href="${receiptHref}">${t.t('receipt.confirm.no')}</a></p>
</section>`);
}

const WALLET_STATES = ['waiting', 'previewed', 'read', 'ended', 'scheduled', 'held', 'gone', 'unreachable'] as const;

/**
 * `/receipts`, the receipt wallet (DECISIONS 16): the server sends the same page to everyone; the page's
 * script fills it from this browser's storage. Every word the script shows comes from here, translated.
 */
export function walletPage(ctx: PageContext): string {
  const { t } = ctx;
  const states = WALLET_STATES.map((state) => raw(` data-state-${state}="${escapeHtml(t.t(`wallet.state.${state}`))}"`));
  return layout(ctx, t.t('wallet.title'), html`
<h1>${t.t('wallet.heading')}</h1>
<noscript><p class="card error">${t.t('wallet.needsScript')}</p></noscript>
<section class="card" id="wallet" hidden${states}
  data-open="${t.t('wallet.open')}" data-end="${t.t('wallet.end')}" data-forget="${t.t('wallet.forget')}"
  data-confirm-end="${t.t('wallet.confirmEnd')}" data-confirm-end-all="${t.t('wallet.confirmEndAll')}">
  <p>${t.t('wallet.intro')}</p>
  <p id="wallet-empty">${t.t('wallet.empty')}</p>
  <p class="error" role="alert" id="wallet-problem" hidden>${t.t('wallet.endFailed')}</p>
  <table class="wallet" id="wallet-table" hidden>
    <thead><tr><th scope="col">${t.t('wallet.col.created')}</th><th scope="col">${t.t('wallet.col.state')}</th><th scope="col">${t.t('wallet.col.views')}</th><th scope="col">${t.t('wallet.col.actions')}</th></tr></thead>
    <tbody id="wallet-rows"></tbody>
  </table>
  <div class="actions">
    <button type="button" class="danger" id="wallet-end-all" disabled>${t.t('wallet.endAll')}</button>
    <button type="button" class="secondary" id="wallet-export" disabled>${t.t('wallet.export')}</button>
  </div>
  <p class="hint">${t.t('wallet.exportHint')}</p>
</section>`);
}
