import { formatTimestamp } from '@vanish/common';
import type { CreatedNote, NoteMetadata } from '../../domain/notes';
import { ASSET_INTEGRITY } from './assets';
import { type Html, html, raw } from './html';

export function layout(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${title} · vanish</title>
<link rel="stylesheet" href="/assets/app.css" integrity="${ASSET_INTEGRITY.css}">
</head>
<body>
<header><a href="/">vanish</a></header>
<main>
${body}
</main>
<footer><p>Notes are encrypted with a key that only the link holds, and destroyed when they expire.</p></footer>
<script src="/assets/envelope.js" integrity="${ASSET_INTEGRITY.envelope}" defer></script>
<script src="/assets/app.js" integrity="${ASSET_INTEGRITY.app}" defer></script>
</body>
</html>
`.value;
}

export interface CreateFormValues {
  content?: string;
  expiry_type?: string;
  expiry_time?: string;
  max_views?: string;
  notification_email?: string;
  send_link_email?: string;
  webhook_url?: string;
}

export interface FormError {
  parameter: string | null;
  message: string;
}

function selected(current: string | undefined, value: string, fallback: string): Html {
  return raw((current ?? fallback) === value ? ' selected' : '');
}

function errorFor(error: FormError | undefined, parameter: string): Html {
  return error && error.parameter === parameter ? html`<p class="error" id="${parameter}-error">${error.message}</p>` : raw('');
}

function described(error: FormError | undefined, parameter: string, hint: string): Html {
  const ids = [hint, error && error.parameter === parameter ? `${parameter}-error` : ''].filter(Boolean).join(' ');
  return raw(` aria-describedby="${ids}"${error && error.parameter === parameter ? ' aria-invalid="true"' : ''}`);
}

/**
 * `sealedInBrowser`: the refused request carried an envelope (DECISIONS 13), so its text is not ours to show
 * again; the browser still has it one step back.
 */
export function createPage(token: string, values: CreateFormValues = {}, error?: FormError, sealedInBrowser = false): string {
  const general = error && !['content', 'expiry_type', 'expiry_time', 'max_views', 'passcode', 'notification_email', 'send_link_email', 'webhook_url'].includes(error.parameter ?? '')
    ? html`<p class="error" role="alert">${error.message}</p>` : raw('');
  return layout('New note', html`
<h1>Write a note that destroys itself</h1>
${error ? html`<p class="error" role="alert">The note was not created: ${error.message}${sealedInBrowser ? ' Your text was encrypted in this browser and never sent: go back to edit it.' : ''}</p>` : raw('')}
${general}
<form method="post" action="/" class="card" novalidate data-create>
  <input type="hidden" name="form_token" value="${token}">
  <label for="content">Note</label>
  <textarea id="content" name="content" maxlength="10000" required${described(error, 'content', 'content-hint')}>${values.content ?? ''}</textarea>
  <p class="hint" id="content-hint">Up to 10,000 characters. Shown as plain text, once per allowed view.</p>
  ${errorFor(error, 'content')}
  <label for="expiry_type">Destroy it</label>
  <select id="expiry_type" name="expiry_type"${described(error, 'expiry_type', 'expiry-hint')}>
    <option value="view"${selected(values.expiry_type, 'view', 'view')}>after it has been read (a number of views)</option>
    <option value="time"${selected(values.expiry_type, 'time', 'view')}>after a time</option>
    <option value="both"${selected(values.expiry_type, 'both', 'view')}>after a number of views or a time, whichever comes first</option>
  </select>
  <p class="hint" id="expiry-hint">An unread note that only expires by views is deleted after 30 days.</p>
  ${errorFor(error, 'expiry_type')}
  <div class="row">
    <div id="max-views-field">
      <label for="max_views">Views allowed</label>
      <input id="max_views" name="max_views" type="number" inputmode="numeric" min="1" max="100" value="${values.max_views ?? '1'}"${described(error, 'max_views', 'max-views-hint')}>
      <p class="hint" id="max-views-hint">1 to 100.</p>
      ${errorFor(error, 'max_views')}
    </div>
    <div id="expiry-time-field">
      <label for="expiry_time">Hours until it expires</label>
      <input id="expiry_time" name="expiry_time" type="number" inputmode="numeric" min="1" max="8760" value="${values.expiry_time ?? '24'}"${described(error, 'expiry_time', 'expiry-time-hint')}>
      <p class="hint" id="expiry-time-hint">1 to 8,760 (one year). Used when it expires by time.</p>
      ${errorFor(error, 'expiry_time')}
    </div>
  </div>
  <label for="passcode">Passcode (optional)</label>
  <input id="passcode" name="passcode" type="password" autocomplete="new-password" maxlength="128"${described(error, 'passcode', 'passcode-hint')}>
  <p class="hint" id="passcode-hint">The reader must type it too. Five wrong tries destroy the note.</p>
  ${errorFor(error, 'passcode')}
  <label for="notification_email">E-mail me when it is read (optional)</label>
  <input id="notification_email" name="notification_email" type="email" autocomplete="email" maxlength="254" value="${values.notification_email ?? ''}"${described(error, 'notification_email', 'notification-hint')}>
  <p class="hint" id="notification-hint">The e-mail says when the note was read; never what it says.</p>
  ${errorFor(error, 'notification_email')}
  <label for="send_link_email">Send the link to (optional)</label>
  <input id="send_link_email" name="send_link_email" type="email" maxlength="254" value="${values.send_link_email ?? ''}"${described(error, 'send_link_email', 'send-link-hint')}>
  <p class="hint" id="send-link-hint">We e-mail the link to this address right away.</p>
  ${errorFor(error, 'send_link_email')}
  <label for="webhook_url">Webhook URL (optional)</label>
  <input id="webhook_url" name="webhook_url" type="url" maxlength="2048" value="${values.webhook_url ?? ''}"${described(error, 'webhook_url', 'webhook-hint')}>
  <p class="hint" id="webhook-hint">We POST a signed event there when the note is read, a passcode is wrong, or the note ends.</p>
  ${errorFor(error, 'webhook_url')}
  <p class="hint" id="sealing-hint" hidden>Your browser encrypts the note before sending it: we never see the text or its key.</p>
  <button type="submit">Create note</button>
</form>`);
}

export function destructionSummary(note: { expiryType: string; maxViews: number; currentViews?: number; expiresAt: Date }): string {
  const left = note.maxViews - (note.currentViews ?? 0);
  const views = `${left} more ${left === 1 ? 'view' : 'views'}`;
  const when = `${formatTimestamp(note.expiresAt)} UTC`;
  switch (note.expiryType) {
    case 'time':
      return `It will be destroyed at ${when}.`;
    case 'both':
      return `It will be destroyed after ${views} or at ${when}, whichever comes first.`;
    default:
      return `It will be destroyed after ${views}. Unread, it is deleted at ${when}.`;
  }
}

/** DECISIONS 13: the created page of a note sealed in the browser; the page's script adds the key it kept. */
function createdInBrowserPage(note: CreatedNote): string {
  return layout('Note created', html`
<h1>Your note is ready</h1>
<section class="card" aria-labelledby="link-heading" data-sealed-link="${note.url}">
  <h2 id="link-heading">Share this link</h2>
  <p class="link" id="note-link">${note.url}</p>
  <button type="button" class="secondary" data-copy-target="note-link" hidden>Copy link</button>
  <p>${destructionSummary(note)}${note.hasPasscode ? ' The reader also needs the passcode; send it another way.' : ''}</p>
  <p>Your browser encrypted this note: we never had its text or its key. The key is the part of the link after #.</p>
  <h3>The key on its own</h3>
  <p class="hint">To be safer still, send the link without the key, and the key through another channel.</p>
  <p class="link" id="note-key">(shown by your browser)</p>
  <button type="button" class="secondary" data-copy-target="note-key" hidden>Copy key</button>
  <p class="error" id="key-gone" hidden>This page was opened again: the key was shown once and is not kept anywhere, so the link above cannot open the note.</p>
  <p class="hint">This link is the only key to the note. We cannot show it to you again.</p>
</section>
${note.receiptUrl ? receiptSection(note.receiptUrl) : raw('')}
<p><a href="/">Write another note</a></p>`);
}

export function createdPage(note: CreatedNote, qrSvg: string, clientEncrypted = false): string {
  if (clientEncrypted) return createdInBrowserPage(note);
  return layout('Note created', html`
<h1>Your note is ready</h1>
<section class="card" aria-labelledby="link-heading">
  <h2 id="link-heading">Share this link</h2>
  <p class="link" id="note-link">${note.url}</p>
  <button type="button" class="secondary" data-copy-target="note-link" hidden>Copy link</button>
  <p>${destructionSummary(note)}${note.hasPasscode ? ' The reader also needs the passcode; send it another way.' : ''}</p>
  <p class="hint">This link is the only key to the note. We cannot show it to you again.</p>
  <p class="hint">This note was encrypted by the server: it had the text while sealing it, and has it again while it is shown. Notes written with JavaScript on (over HTTPS or on localhost) are encrypted in your browser instead.</p>
  <figure class="qr">${raw(qrSvg)}<figcaption class="hint">QR code of the link</figcaption></figure>
</section>
${note.receiptUrl ? receiptSection(note.receiptUrl) : raw('')}
${note.webhookSecret ? html`<section class="card" aria-labelledby="webhook-heading">
  <h2 id="webhook-heading">Webhook</h2>
  <p>Note reference: <code id="note-ref">${note.noteRef ?? ''}</code></p>
  <p>Signing secret (shown once): <code id="webhook-secret">${note.webhookSecret}</code></p>
</section>` : raw('')}
<p><a href="/">Write another note</a></p>`);
}

export function notePage(meta: NoteMetadata, token: string, error?: string): string {
  return layout('A note is waiting', html`
<h1>Someone sent you a note</h1>
<div class="card">
  <p>${destructionSummary(meta)}</p>
  <p>Opening it counts as a view. Make sure nobody is looking over your shoulder.</p>
  ${error ? html`<p class="error" role="alert" id="reveal-error">${error}</p>` : raw('')}
  ${meta.clientEncrypted ? html`<p class="error" role="alert" id="key-missing" hidden>${KEY_MISSING}</p>
  <noscript><p class="error">${NEEDS_SCRIPT}</p></noscript>` : raw('')}
  <form method="post"${raw(meta.clientEncrypted ? ' data-client-encrypted' : '')}>
    <input type="hidden" name="form_token" value="${token}">
    ${meta.clientEncrypted ? html`<input type="hidden" name="key_check" value="">` : raw('')}
    ${meta.hasPasscode ? html`<label for="passcode">Passcode</label>
    <input id="passcode" name="passcode" type="password" autocomplete="off" required maxlength="128"${raw(error ? ' aria-describedby="reveal-error" aria-invalid="true"' : '')}>` : raw('')}
    <button type="submit">Show the note</button>
  </form>
</div>`);
}

/** DECISIONS 13: what the note page says when its link lacks the key the note was sealed with. */
export const KEY_MISSING = 'This link is incomplete: the note was encrypted in the writer\'s browser, and its key is the part of the link after #. Ask the sender for the complete link. Nothing was shown and no view was counted.';
export const NEEDS_SCRIPT = 'This note was encrypted in the writer\'s browser and opens only with JavaScript, which is off here. Nothing is counted until you press the button with JavaScript on.';

/** `clientEncrypted`: content is the writer's envelope, which the page opens with the link's key. */
export function revealedPage(content: string, currentViews: number, maxViews: number, destroyed: boolean, clientEncrypted = false): string {
  const left = maxViews - currentViews;
  return layout('Your note', html`
<h1>Your note</h1>
<div class="card">
  ${clientEncrypted
    ? html`<pre class="content" id="note-content" data-envelope="${content}">Opening the note in your browser…</pre>`
    : html`<pre class="content" id="note-content">${content}</pre>`}
  <button type="button" class="secondary" data-copy-target="note-content" hidden>Copy text</button>
  <p>${destroyed ? 'This note has now been destroyed. Reloading this page will not show it again.' : `It can be shown ${left} more ${left === 1 ? 'time' : 'times'}; this view has been counted.`}</p>
</div>`);
}

export function notFoundPage(): string {
  return layout('Note not found', html`
<h1>This note does not exist</h1>
<div class="card">
  <p>It may never have existed, it may have been read already, or it may have expired. Notes cannot be recovered.</p>
  <p><a href="/">Write a new note</a></p>
</div>`);
}

export function forbiddenPage(): string {
  return layout('Request refused', html`
<h1>That request was refused</h1>
<div class="card">
  <p>The form was sent from another site, was sent twice, or is too old. Nothing was shown and no view was counted.</p>
  <p>Open the link again and use the button on the page.</p>
</div>`);
}

export function errorPage(message: string): string {
  return layout('Something went wrong', html`
<h1>Something went wrong</h1>
<div class="card"><p>${message}</p><p>No view was counted. Please try again in a moment.</p></div>`);
}

/** DECISIONS 12: the creator's receipt link, beside the note's link, shown once. */
function receiptSection(receiptUrl: string): Html {
  return html`<section class="card" aria-labelledby="receipt-heading">
  <h2 id="receipt-heading">Your receipt: keep this, do not share it</h2>
  <p class="link" id="receipt-link"><a href="${receiptUrl}">${receiptUrl}</a></p>
  <button type="button" class="secondary" data-copy-target="receipt-link" hidden>Copy receipt link</button>
  <p class="hint">Only for you: it shows whether the note was opened, by a person or a link preview, and lets you end it early. It never shows the note. Whoever has it can end the note, so do not send it with the link.</p>
</section>`;
}
