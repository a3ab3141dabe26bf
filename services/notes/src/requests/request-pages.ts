import { type Html, html, raw } from '../http/pages/html';
import { copyButton, downloadList, filesField, layout, revealedFilesSection, type PageContext } from '../http/pages/templates';
import type { RevealedFile } from '../domain/notes';
import { EMBED_SNIPPET_PLACEHOLDER, embedSnippet } from './embed-snippet';
import type { InboxView, RequestForSender } from './request-service';
import { LABEL_MAX_CODE_POINTS, MAX_SUBMISSIONS_DEFAULT, MAX_SUBMISSIONS_MAX, OPEN_DAYS_DEFAULT, OPEN_DAYS_MAX } from './request-validator';

/** /request: the key pair is made in the browser; the page shows both links only from the script's answer. */
export function makeRequestPage(ctx: PageContext, publicBaseUrl: string): string {
  const { t } = ctx;
  return layout(ctx, t.t('request.make.title'), html`
<h1>${t.t('request.make.title')}</h1>
<p>${t.t('request.make.intro')}</p>
<noscript><p class="error">${t.t('request.make.needsScript')}</p></noscript>
<p class="error" role="alert" id="make-no-crypto" hidden>${t.t('request.make.noCrypto')}</p>
<form class="card" data-make-request hidden
  data-refused="${t.t('request.make.refused', { reason: '{reason}' })}" data-refused-rate="${t.t('request.make.refusedRate')}" data-refused-other="${t.t('request.make.refusedOther')}">
  <label for="label">${t.t('request.make.label')}</label>
  <textarea id="label" name="label" required maxlength="${LABEL_MAX_CODE_POINTS}" rows="3" aria-describedby="label-hint" dir="auto"></textarea>
  <p class="hint" id="label-hint">${t.t('request.make.labelHint', { max: LABEL_MAX_CODE_POINTS })}</p>
  <div class="row">
    <div><label for="max_submissions">${t.t('request.make.count')}</label>
    <input id="max_submissions" name="max_submissions" type="number" min="1" max="${MAX_SUBMISSIONS_MAX}" value="${MAX_SUBMISSIONS_DEFAULT}" required></div>
    <div><label for="open_days">${t.t('request.make.days')}</label>
    <input id="open_days" name="open_days" type="number" min="1" max="${OPEN_DAYS_MAX}" value="${OPEN_DAYS_DEFAULT}" required></div>
    <div><label for="max_views">${t.t('request.make.views')}</label>
    <input id="max_views" name="max_views" type="number" min="1" max="100" value="1" required></div>
  </div>
  <p class="check"><input id="allow_files" name="allow_files" type="checkbox" value="true">
  <label for="allow_files">${t.t('request.make.allowFiles')}</label></p>
  <label for="notification_email">${t.t('request.make.email')}</label>
  <input id="notification_email" name="notification_email" type="email" autocomplete="email" maxlength="254">
  <label for="webhook_url">${t.t('request.make.webhook')}</label>
  <input id="webhook_url" name="webhook_url" type="url" maxlength="2048" dir="ltr">
  <label for="allowed_origins">${t.t('request.make.origins')}</label>
  <textarea id="allowed_origins" name="allowed_origins" rows="2" dir="ltr" spellcheck="false"></textarea>
  <p class="error" role="alert" id="make-refused" hidden></p>
  <button type="submit">${t.t('request.make.submit')}</button>
</form>
<div id="made" hidden>
  <h2 id="made-heading" tabindex="-1">${t.t('request.made.heading')}</h2>
  <section class="card" aria-labelledby="request-link-heading">
    <h3 id="request-link-heading">${t.t('request.made.requestHeading')}</h3>
    <p class="link" id="request-link" dir="ltr"></p>
    ${copyButton(t, 'request-link', 'request.made.copyRequest')}
    <p class="hint">${t.t('request.made.requestHint')}</p>
  </section>
  <section class="card" aria-labelledby="inbox-link-heading">
    <h3 id="inbox-link-heading">${t.t('request.made.inboxHeading')}</h3>
    <p class="link" dir="ltr"><a id="inbox-link-a" href="#"><span id="inbox-link"></span></a></p>
    ${copyButton(t, 'inbox-link', 'request.made.copyInbox')}
    <p class="hint">${t.t('request.made.inboxHint')}</p>
    <p class="link" id="webhook-secret" dir="ltr" hidden data-template="${t.t('request.made.webhookSecret', { secret: '{secret}' })}"></p>
  </section>
  <section class="card" id="embed" hidden aria-labelledby="embed-heading">
    <h3 id="embed-heading">${t.t('request.embed.heading')}</h3>
    <p class="hint">${t.t('request.embed.hint')}</p>
    <pre class="content" id="embed-snippet" dir="ltr" data-template="${embedSnippet(publicBaseUrl, EMBED_SNIPPET_PLACEHOLDER)}"></pre>
    ${copyButton(t, 'embed-snippet', 'revealed.copyText')}
  </section>
</div>`, { requests: true });
}

function sendForm(ctx: PageContext, requestId: string, request: RequestForSender): Html {
  const { t } = ctx;
  return html`<section class="card" aria-labelledby="asks-heading">
  <h2 id="asks-heading">${t.t('request.send.asks')}</h2>
  <p id="request-label" dir="auto" class="content">${request.label}</p>
</section>
<noscript><p class="error">${t.t('request.send.needsScript')}</p></noscript>
<p class="error" role="alert" id="send-no-crypto" hidden>${t.t('request.make.noCrypto')}</p>
<form class="card" data-send-request hidden data-public-key="${request.publicKey}" data-submit="/api/request/${requestId}.php"
  data-refused-rate="${t.t('request.send.refusedRate')}" data-refused-closed="${t.t('request.send.refusedClosed')}" data-refused-other="${t.t('request.send.refusedOther')}"
  data-refused-upload="${t.t('request.send.refusedUpload')}">
  <label for="content">${t.t('request.send.answer')}</label>
  <textarea id="content" name="content" required maxlength="10000" dir="auto" autocomplete="off" aria-describedby="sealing-hint"></textarea>
  <p class="hint" id="sealing-hint">${t.t('request.send.sealing')}</p>
  ${request.allowFiles ? filesField(ctx) : raw('')}
  <p class="error" role="alert" id="send-refused" hidden></p>
  <button type="submit">${t.t('request.send.submit')}</button>
</form>
<div id="sent" hidden>
  <h2 id="sent-heading" tabindex="-1" role="status">${t.t('request.send.sent')}</h2>
  <section class="card" id="sent-receipt" hidden aria-labelledby="receipt-heading">
    <h3 id="receipt-heading">${t.t('created.receiptHeading')}</h3>
    <p class="link" dir="ltr"><a id="receipt-link" href="#" target="_blank" rel="noopener"></a></p>
    <p class="hint">${t.t('created.receiptHint')}</p>
  </section>
</div>`;
}

/** /q/{id}: the requester's label and the form that seals in the browser. */
export function sendPage(ctx: PageContext, requestId: string, request: RequestForSender): string {
  const { t } = ctx;
  return layout(ctx, t.t('request.send.title'), html`
<h1>${t.t('request.send.heading')}</h1>
${sendForm(ctx, requestId, request)}`, { requests: true, upload: request.allowFiles });
}

/** /embed/q/{id}: the same form, made to be framed; it can only submit, never reveal. */
export function embeddedSendPage(ctx: PageContext, requestId: string, request: RequestForSender): string {
  const { t } = ctx;
  return layout(ctx, t.t('request.send.title'), html`
<h1>${t.t('request.send.heading')}</h1>
${sendForm(ctx, requestId, request)}`, { embedded: true, upload: request.allowFiles });
}

export function requestClosedPage(ctx: PageContext, embedded = false): string {
  const { t } = ctx;
  return layout(ctx, t.t('request.closed.heading'), html`
<h1>${t.t('request.closed.heading')}</h1>
<div class="card"><p>${t.t('request.closed.body')}</p></div>`, { embedded });
}

export function requestNotFoundPage(ctx: PageContext, embedded = false): string {
  const { t } = ctx;
  return layout(ctx, t.t('request.notFound.heading'), html`
<h1>${t.t('request.notFound.heading')}</h1>
<div class="card"><p>${t.t('request.notFound.body')}</p></div>`, { embedded });
}

/** /i/{id}: the submissions (time, size, state), each opened in this browser with the fragment's key. */
export function inboxPage(ctx: PageContext, inboxId: string, inbox: InboxView, publicBaseUrl: string): string {
  const { t } = ctx;
  const used = inbox.submissions.length;
  return layout(ctx, t.t('inbox.title'), html`
<h1>${t.t('inbox.heading')}</h1>
<section class="card" aria-labelledby="asked-heading">
  <h2 id="asked-heading">${t.t('inbox.asked')}</h2>
  <p class="content" dir="auto" id="request-label">${inbox.label}</p>
  <dl class="facts">
    <dt>${t.t('inbox.requestLink')}</dt><dd class="link" dir="ltr" id="request-link">${inbox.requestUrl}</dd>
    <dt>${t.t('inbox.status')}</dt><dd id="request-status" data-status="${inbox.status}">${t.t(`inbox.status.${inbox.status}`)}</dd>
    <dt>${t.t('inbox.used')}</dt><dd id="request-used">${t.t('inbox.usedValue', { used, max: inbox.maxSubmissions })}</dd>
    <dt>${t.t('inbox.openUntil')}</dt><dd><time datetime="${inbox.expiresAt.toISOString()}">${t.dateUtc(inbox.expiresAt)}</time></dd>
  </dl>
  ${copyButton(t, 'request-link', 'request.made.copyRequest')}
</section>
<p class="error" role="alert" id="inbox-key-missing" hidden>${t.t('inbox.keyMissing')}</p>
<noscript><p class="error">${t.t('inbox.needsScript')}</p></noscript>
<section class="card" aria-labelledby="answers-heading" data-inbox data-public-key="${inbox.publicKey}">
  <h2 id="answers-heading">${t.t('inbox.answers')}</h2>
  ${inbox.submissions.length === 0 ? html`<p id="inbox-empty">${t.t('inbox.none')}</p>` : html`<ol class="timeline" id="submissions">
  ${inbox.submissions.map((item) => html`<li data-number="${item.number}" data-state="${item.state}">
    <strong>${t.t('inbox.item', { number: item.number })}</strong>
    <time datetime="${item.submittedAt.toISOString()}">${t.preciseUtc(item.submittedAt)}</time>
    <span>${t.t('inbox.size', { size: item.size })}</span> · <span class="state">${t.t(`inbox.state.${item.state}`)}</span>
    ${item.state === 'expired' ? raw('') : html`<form method="post" action="/i/${inboxId}" data-open-submission data-ephemeral-key="${item.ephemeralKey}">
      <input type="hidden" name="submission" value="${item.number}">
      <input type="hidden" name="key_check" value="">
      <button type="submit" class="secondary" disabled>${t.t('inbox.open', { number: item.number })}</button>
    </form>`}
  </li>`)}
  </ol>`}
</section>
${inbox.allowedOrigins.length > 0 ? html`<section class="card" aria-labelledby="embed-heading">
  <h2 id="embed-heading">${t.t('request.embed.heading')}</h2>
  <p class="hint">${t.t('request.embed.hint')}</p>
  <pre class="content" id="embed-snippet" dir="ltr">${embedSnippet(publicBaseUrl, inbox.requestUrl)}</pre>
</section>` : raw('')}
${inbox.status === 'open' ? html`<form method="post" action="/i/${inboxId}/close" class="card" data-keep-key>
  <p class="hint">${t.t('inbox.closeHint')}</p>
  <button type="submit" class="danger">${t.t('inbox.close')}</button>
</form>` : raw('')}`, { requests: true });
}

/** The answer to an opening: the envelope, opened by the page's script with the inbox link's key. */
export function openedSubmissionPage(
  ctx: PageContext, inboxId: string,
  opened: { number: number; envelope: string; ephemeralKey: string; currentViews: number; maxViews: number; destroyed: boolean; files?: RevealedFile[] },
): string {
  const { t } = ctx;
  const left = opened.maxViews - opened.currentViews;
  return layout(ctx, t.t('inbox.opened.title'), html`
<h1 tabindex="-1">${t.t('inbox.opened.heading', { number: opened.number })}</h1>
<div class="card">
  <pre class="content" id="note-content" dir="auto" data-request-envelope="${opened.envelope}" data-ephemeral-key="${opened.ephemeralKey}"
    data-no-key="${t.t('inbox.keyMissing')}" data-wrong-key="${t.t('revealed.wrongKey')}">${t.t('revealed.opening')}</pre>
  ${copyButton(t, 'note-content', 'revealed.copyText')}${downloadList(t, opened.files ?? [])}
  <p>${opened.destroyed ? t.t('revealed.destroyed') : t.t('revealed.left', { left })}</p>
  <p><a id="inbox-back" href="/i/${inboxId}">${t.t('inbox.opened.back')}</a></p>
</div>
${revealedFilesSection(ctx)}`, { requests: true });
}

/** A refused opening (wrong key, or the answer is gone): the inbox's own words, and the way back. */
export function inboxMessagePage(ctx: PageContext, inboxId: string, message: string): string {
  const { t } = ctx;
  return layout(ctx, t.t('inbox.title'), html`
<h1>${t.t('inbox.heading')}</h1>
<div class="card"><p class="error" role="alert" id="reveal-error">${message}</p>
<p><a id="inbox-back" href="/i/${inboxId}">${t.t('inbox.opened.back')}</a></p></div>`, { requests: true });
}
