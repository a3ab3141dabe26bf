import { type Html, html, raw } from '../http/pages/html';
import type { PageContext } from '../http/pages/templates';
import { layout } from '../http/pages/templates';
import { CLIENT_CLASS_LABELS } from './client-class';
import type { ReceiptBody, ReceiptTimelineEntry } from './receipt-service';
import type { NoteEndReason } from '../domain/ports';

const END_REASONS: Readonly<Record<NoteEndReason, string>> = {
  views: 'destroyed after its last allowed view',
  lockout: 'destroyed after five wrong passcodes',
  takedown: 'taken down by the operator',
  creator: 'ended by you from this receipt',
  time: 'expired at its time limit',
  retention: 'deleted unread after the retention period',
};

function describe(entry: ReceiptTimelineEntry): string {
  switch (entry.event) {
    case 'created': return 'Note created';
    case 'page_fetch': return `Note page fetched without opening the note (${CLIENT_CLASS_LABELS[entry.client]}); no view used`;
    case 'reveal': return 'Note opened and read: one view used';
    case 'wrong_passcode': return 'Wrong passcode tried; nothing shown';
    case 'end': return `Note ${END_REASONS[entry.reason]}`;
  }
}

function expiryText(receipt: ReceiptBody): string {
  const views = `${receipt.max_views} ${receipt.max_views === 1 ? 'view' : 'views'}`;
  switch (receipt.expiry_type) {
    case 'time': return `at ${receipt.expires_at} UTC`;
    case 'both': return `after ${views} or at ${receipt.expires_at} UTC, whichever comes first`;
    default: return `after ${views} (unread, deleted at ${receipt.expires_at} UTC)`;
  }
}

/** The receipt page (DECISIONS 12): what happened to the note. It never shows content and counts nothing. */
export function receiptPage(ctx: PageContext, receipt: ReceiptBody, endToken: string | null, jsonPath: string, notice?: string): string {
  const ended = receipt.status === 'ended';
  return layout(ctx, 'Receipt', html`
<h1>Receipt of your note</h1>
${notice ? html`<p class="card" role="status" id="receipt-notice">${notice}</p>` : raw('')}
<section class="card" aria-labelledby="status-heading">
  <h2 id="status-heading">${ended ? `Ended ${receipt.ended_at} UTC` : 'Waiting to be read'}</h2>
  <dl class="facts">
    <dt>Created</dt><dd>${receipt.created_at} UTC</dd>
    <dt>Destroyed</dt><dd>${expiryText(receipt)}</dd>
    <dt>Views used</dt><dd id="views-used">${String(receipt.views_used)} of ${String(receipt.max_views)}</dd>
    <dt>Views left</dt><dd id="views-left">${String(receipt.views_left)}</dd>
    <dt>Passcode</dt><dd>${receipt.has_passcode ? 'yes' : 'no'}</dd>
    ${ended ? html`<dt>How it ended</dt><dd id="end-reason">${receipt.end_reason ? END_REASONS[receipt.end_reason] : ''}</dd>
    <dt>This receipt</dt><dd>kept until ${receipt.purge_after ?? ''} UTC, then deleted</dd>` : raw('')}
  </dl>
</section>
<section class="card" aria-labelledby="timeline-heading">
  <h2 id="timeline-heading">What happened</h2>
  <ol class="timeline" id="timeline">
    ${receipt.timeline.map((entry): Html => html`<li data-event="${entry.event}"><time>${entry.at} UTC</time>${describe(entry)}</li>`)}
  </ol>
  <p class="hint">Times are UTC. Link previews (chat apps, mail scanners) fetch a shared link without opening the note; they never use a view.</p>
</section>
${!ended && endToken ? html`<section class="card" aria-labelledby="end-heading">
  <h2 id="end-heading">Changed your mind?</h2>
  <form method="post">
    <input type="hidden" name="form_token" value="${endToken}">
    <button type="submit" class="danger">End this note now</button>
  </form>
  <p class="hint">The note is deleted at once; its link will show "not found" to everyone.</p>
</section>` : raw('')}
<p class="hint">This page never shows the note and never uses a view. Keep its link to yourself. <a href="${jsonPath}">Signed copy (JSON)</a> to keep as proof.</p>`);
}

export function receiptNotFoundPage(ctx: PageContext): string {
  return layout(ctx, 'Receipt not found', html`
<h1>This receipt does not exist</h1>
<div class="card">
  <p>It may never have existed, or its note ended long enough ago that the receipt was deleted too.</p>
  <p><a href="/">Write a new note</a></p>
</div>`);
}
