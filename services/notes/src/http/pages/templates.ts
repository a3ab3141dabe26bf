import { THEMES, type Theme } from '@vanish/common';
import type { CreatedNote, NoteMetadata, RevealedFile, TimeControlsView } from '../../domain/notes';
import { ASSET_INTEGRITY } from './assets';
import { REQUEST_ASSET_INTEGRITY } from '../../requests/request-assets';
import type { ExpiryPreset } from './expiry-presets';
import { type Html, html, raw } from './html';
import type { Locale, Translator } from './i18n';

export { THEMES, type Theme } from '@vanish/common';

/** What every page needs besides its own data: the reader's language and theme (issue 20). */
export interface PageContext {
  t: Translator;
  theme: Theme;
  languages: ReadonlyArray<{ locale: Locale; name: string }>;
  /**
   * The language and theme switcher is a GET form to the page itself on pages that a GET shows again
   * (true). After a POST (created, revealed: shown once) it must not navigate away from what was shown
   * (false): the page's script saves the choice and applies the theme in place; without script, the
   * choice opens the create page in a new tab.
   */
  switcher: boolean;
  /**
   * Query parameters of the page itself that its switcher form must carry over, since a GET form replaces the
   * query: a receipt opened with `?as=creator` stays the receipt in another language (DECISIONS 16).
   */
  keepQuery?: ReadonlyArray<readonly [string, string]>;
}

/** The bounds the API enforces, said on the page (the validator is the authority). */
const CONTENT_MAX = 10_000;
const VIEWS_MIN = 1;
const VIEWS_MAX = 100;
const HOURS_MIN = 1;
const HOURS_MAX = 8760;
const PASSCODE_MAX = 128;
const WEBHOOK_URL_MAX = 2048;

function switcher(ctx: PageContext): Html {
  const { t } = ctx;
  const inPlace = ctx.switcher ? raw('') : raw(' action="/" target="_blank" data-in-place');
  return html`<form method="get" class="settings" aria-label="${t.t('settings.label')}" data-settings${inPlace}>
  <span><label for="settings-lang">${t.t('settings.language')}</label>
  <select id="settings-lang" name="lang">${ctx.languages.map(({ locale, name }) =>
    html`<option value="${locale}" lang="${locale}"${raw(locale === t.locale ? ' selected' : '')}>${name}</option>`)}</select></span>
  <span><label for="settings-theme">${t.t('settings.theme')}</label>
  <select id="settings-theme" name="theme">${THEMES.map((theme) =>
    html`<option value="${theme}"${raw(theme === ctx.theme ? ' selected' : '')}>${t.t(`settings.theme.${theme}`)}</option>`)}</select></span>
  ${ctx.switcher ? (ctx.keepQuery ?? []).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`) : raw('')}
  <button type="submit" class="secondary">${t.t('settings.apply')}</button>
  ${ctx.switcher ? raw('') : html`<p class="hint" role="status" data-saved hidden>${t.t('settings.savedForNext')}</p>`}
</form>`;
}

/**
 * `qr`: the page draws a QR code in the browser (the created page, and the create page that becomes it).
 * `upload`: the page uploads files with tus (the create page, DECISIONS 14). `requests`: a requests page
 * (DECISIONS 15) that seals or opens with the request's keys. `embedded`: the sender's form made to be framed
 * (no header, no footer, no links away).
 */
export function layout(ctx: PageContext, title: string, body: Html, options: { qr?: boolean; upload?: boolean; requests?: boolean; embedded?: boolean } = {}): string {
  const { t } = ctx;
  return html`<!doctype html>
<html lang="${t.locale}" dir="${t.dir}"${raw(ctx.theme === 'system' ? '' : ` data-theme="${ctx.theme}"`)}${raw(options.embedded ? ' data-embedded' : '')}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${title} · vanish</title>
<link rel="stylesheet" href="/assets/app.css" integrity="${ASSET_INTEGRITY.css}">
</head>
<body>
${options.embedded ? raw('') : html`<a class="skip" href="#main">${t.t('layout.skip')}</a>
<header><a href="/" class="brand">vanish</a>${switcher(ctx)}</header>`}
<main id="main">
${body}
</main>
${options.embedded ? raw('') : html`<footer><p>${t.t('layout.footer')}</p></footer>`}
<script src="/assets/envelope.js" integrity="${ASSET_INTEGRITY.envelope}" defer></script>
<script src="/assets/file-stream.js" integrity="${ASSET_INTEGRITY.fileStream}" defer></script>
${options.upload ? html`<script src="/assets/tus.js" integrity="${ASSET_INTEGRITY.tus}" defer></script>` : raw('')}
${options.requests || options.embedded ? html`<script src="/assets/request-seal.js" integrity="${REQUEST_ASSET_INTEGRITY.seal}" defer></script>
<script src="/assets/requests.js" integrity="${REQUEST_ASSET_INTEGRITY.requests}" defer></script>` : raw('')}
${options.qr ? html`<script src="/assets/qr.js" integrity="${ASSET_INTEGRITY.qr}" defer></script>` : raw('')}
<script src="/assets/wallet.js" integrity="${ASSET_INTEGRITY.wallet}" defer></script>
<script src="/assets/app.js" integrity="${ASSET_INTEGRITY.app}" defer></script>
</body>
</html>
`.value;
}

export interface CreateFormValues {
  content?: string;
  expiry_type?: string;
  expiry_preset?: string;
  expiry_time?: string;
  max_views?: string;
  notification_email?: string;
  send_link_email?: string;
  webhook_url?: string;
  /** DECISIONS 16. */
  shrink_after_first_view_minutes?: string;
  available_from?: string;
  release_after_silence_hours?: string;
}

export interface FormError {
  parameter: string | null;
  message: string;
}

const FIELD_PARAMETERS = [
  'content', 'expiry_type', 'expiry_preset', 'expiry_time', 'max_views', 'passcode', 'notification_email', 'send_link_email', 'webhook_url',
  'shrink_after_first_view_minutes', 'available_from', 'release_after_silence_hours',
];
/** DECISIONS 16's bounds, said on the page (the validator is the authority). */
const SHRINK_MAX = 525_600;
const SILENCE_MAX = 8760;

/** A refused form, said in the reader's language; the validator's English is for the API. */
export function formErrorMessage(t: Translator, parameter: string | null): string {
  switch (parameter) {
    case 'content': return t.t('create.error.content', { max: CONTENT_MAX });
    case 'expiry_type': return t.t('create.error.expiry_type');
    case 'expiry_preset': return t.t('create.error.expiry_preset');
    case 'expiry_time': return t.t('create.error.expiry_time', { min: HOURS_MIN, max: HOURS_MAX });
    case 'max_views': return t.t('create.error.max_views', { min: VIEWS_MIN, max: VIEWS_MAX });
    case 'passcode': return t.t('create.error.passcode', { max: PASSCODE_MAX });
    case 'notification_email':
    case 'send_link_email': return t.t('create.error.email');
    case 'webhook_url': return t.t('create.error.webhook_url', { max: WEBHOOK_URL_MAX });
    case 'shrink_after_first_view_minutes': return t.t('create.error.shrink', { min: 1, max: SHRINK_MAX });
    case 'available_from': return t.t('create.error.available_from');
    case 'release_after_silence_hours': return t.t('create.error.release_after_silence', { min: 1, max: SILENCE_MAX });
    case 'files': return t.t('create.error.files');
    default: return t.t('create.error.other');
  }
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

/** The preset selected when the form is new: a day when offered, else the first. */
export function defaultPreset(presets: readonly ExpiryPreset[]): string {
  return presets.find((preset) => preset.value === '1d')?.value ?? presets[0]?.value ?? 'custom';
}

function presetField(ctx: PageContext, presets: readonly ExpiryPreset[], values: CreateFormValues, error: FormError | undefined): Html {
  if (presets.length === 0) return raw('');
  const { t } = ctx;
  const current = values.expiry_preset ?? defaultPreset(presets);
  return html`<div id="expiry-preset-field">
      <label for="expiry_preset">${t.t('create.preset')}</label>
      <select id="expiry_preset" name="expiry_preset"${described(error, 'expiry_preset', 'expiry-preset-hint')}>
        ${presets.map((preset) => html`<option value="${preset.value}"${raw(current === preset.value ? ' selected' : '')}>${t.duration(preset.count, preset.unit)}</option>`)}
        <option value="custom"${raw(current === 'custom' ? ' selected' : '')}>${t.t('create.preset.custom')}</option>
      </select>
      <p class="hint" id="expiry-preset-hint">${t.t('create.presetHint')}</p>
      ${errorFor(error, 'expiry_preset')}
    </div>`;
}

/** DECISIONS 16: the creator's time controls, folded away unless one was given or refused. */
function timeControlsFields(ctx: PageContext, values: CreateFormValues, error: FormError | undefined): Html {
  const { t } = ctx;
  const names = ['shrink_after_first_view_minutes', 'available_from', 'release_after_silence_hours'] as const;
  const open = names.some((name) => (values[name] ?? '') !== '' || error?.parameter === name);
  return html`<details id="time-controls-fields"${raw(open ? ' open' : '')}>
    <summary>${t.t('create.controls.heading')}</summary>
    <label for="shrink_after_first_view_minutes">${t.t('create.shrink')}</label>
    <input id="shrink_after_first_view_minutes" name="shrink_after_first_view_minutes" type="number" inputmode="numeric" min="1" max="${SHRINK_MAX}" value="${values.shrink_after_first_view_minutes ?? ''}"${described(error, 'shrink_after_first_view_minutes', 'shrink-hint')}>
    <p class="hint" id="shrink-hint">${t.t('create.shrinkHint')}</p>
    ${errorFor(error, 'shrink_after_first_view_minutes')}
    <label for="available_from">${t.t('create.availableFrom')}</label>
    <input id="available_from" name="available_from" type="datetime-local" dir="ltr" value="${values.available_from ?? ''}"${described(error, 'available_from', 'available-from-hint')}>
    <p class="hint" id="available-from-hint">${t.t('create.availableFromHint')}</p>
    ${errorFor(error, 'available_from')}
    <label for="release_after_silence_hours">${t.t('create.silence')}</label>
    <input id="release_after_silence_hours" name="release_after_silence_hours" type="number" inputmode="numeric" min="1" max="${SILENCE_MAX}" value="${values.release_after_silence_hours ?? ''}"${described(error, 'release_after_silence_hours', 'silence-hint')}>
    <p class="hint" id="silence-hint">${t.t('create.silenceHint')}</p>
    ${errorFor(error, 'release_after_silence_hours')}
    <p class="hint">${t.t('controls.timeGate')}</p>
  </details>`;
}

/**
 * DECISIONS 14: files are offered only where the page's script can seal them (it shows the field and hides the
 * reason); without JavaScript or WebCrypto the reason stays. The input has no name: a form sent without the
 * script never carries a file.
 */
export function filesField(ctx: PageContext): Html {
  const { t } = ctx;
  return html`<p class="hint" id="files-unavailable">${t.t('create.filesUnavailable')}</p>
  <div id="files-field" hidden>
    <label for="files-input">${t.t('create.files')}</label>
    <div class="dropzone" id="files-drop">
      <input type="file" id="files-input" multiple aria-describedby="files-hint">
      <p class="hint" id="files-hint">${t.t('create.filesHint')}</p>
    </div>
    <ul class="files" id="files-list" data-remove="${t.t('create.filesRemove')}"></ul>
  </div>
  <div id="upload-progress" role="status" hidden data-uploading="${t.t('create.uploading', { name: '%s' })}">
    <p id="upload-status"></p>
    <progress id="upload-bar" max="100" value="0"></progress>
  </div>`;
}

/**
 * `sealedInBrowser`: the refused request carried an envelope (DECISIONS 13), so its text is not ours to show
 * again; the browser still has it one step back.
 */
export function createPage(ctx: PageContext, token: string, presets: readonly ExpiryPreset[] = [], values: CreateFormValues = {}, error?: FormError, sealedInBrowser = false, retentionDays = 30): string {
  const { t } = ctx;
  const general = error && !FIELD_PARAMETERS.includes(error.parameter ?? '')
    ? html`<p class="error" role="alert">${error.message}</p>` : raw('');
  return layout(ctx, t.t('create.title'), html`
<h1>${t.t('create.heading')}</h1>
${error ? html`<p class="error" role="alert" id="create-error">${t.t('create.notCreated', { reason: error.message })}${sealedInBrowser ? html` <span data-sealed-not-sent data-kept="${t.t('create.keptHere')}">${t.t('create.sealedNotSent')}</span>` : raw('')}</p>` : raw('')}
${general}
<p class="error" role="alert" id="create-refused" hidden></p>
<form method="post" action="/" class="card" novalidate data-create data-too-long="${t.t('create.tooLong', { max: CONTENT_MAX })}"
  data-refused-rate="${t.t('create.refused.rate')}" data-refused-token="${t.t('create.refused.token')}"
  data-refused-other="${t.t('create.refused.other')}" data-refused-network="${t.t('create.refused.network')}"
  data-refused-upload="${t.t('create.refused.upload')}">
  <input type="hidden" name="form_token" value="${token}">
  <label for="content">${t.t('create.content')}</label>
  <textarea id="content" name="content" maxlength="${CONTENT_MAX}" required${described(error, 'content', 'content-hint')}>${values.content ?? ''}</textarea>
  <p class="hint" id="content-hint">${t.t('create.contentHint', { max: CONTENT_MAX })}</p>
  ${errorFor(error, 'content')}
  <label for="expiry_type">${t.t('create.expiryType')}</label>
  <select id="expiry_type" name="expiry_type"${described(error, 'expiry_type', 'expiry-hint')}>
    <option value="view"${selected(values.expiry_type, 'view', 'view')}>${t.t('create.expiryType.view')}</option>
    <option value="time"${selected(values.expiry_type, 'time', 'view')}>${t.t('create.expiryType.time')}</option>
    <option value="both"${selected(values.expiry_type, 'both', 'view')}>${t.t('create.expiryType.both')}</option>
  </select>
  <p class="hint" id="expiry-hint">${t.t('create.expiryTypeExplained')} ${t.t('create.expiryTypeHint', { days: retentionDays })}</p>
  ${errorFor(error, 'expiry_type')}
  <div class="row">
    <div id="max-views-field">
      <label for="max_views">${t.t('create.maxViews')}</label>
      <input id="max_views" name="max_views" type="number" inputmode="numeric" min="${VIEWS_MIN}" max="${VIEWS_MAX}" value="${values.max_views ?? '1'}"${described(error, 'max_views', 'max-views-hint')}>
      <p class="hint" id="max-views-hint">${t.t('create.maxViewsHint', { min: VIEWS_MIN, max: VIEWS_MAX })}</p>
      ${errorFor(error, 'max_views')}
    </div>
    ${presetField(ctx, presets, values, error)}
    <div id="expiry-time-field">
      <label for="expiry_time">${t.t('create.expiryTime')}</label>
      <input id="expiry_time" name="expiry_time" type="number" inputmode="numeric" min="${HOURS_MIN}" max="${HOURS_MAX}" value="${values.expiry_time ?? '24'}"${described(error, 'expiry_time', 'expiry-time-hint')}>
      <p class="hint" id="expiry-time-hint">${t.t(presets.length > 0 ? 'create.expiryTimePresetHint' : 'create.expiryTimeHint', { min: HOURS_MIN, max: HOURS_MAX })}</p>
      ${errorFor(error, 'expiry_time')}
    </div>
  </div>
  <label for="passcode">${t.t('create.passcode')}</label>
  <input id="passcode" name="passcode" type="password" autocomplete="new-password" maxlength="${PASSCODE_MAX}"${described(error, 'passcode', 'passcode-hint')}>
  <p class="hint" id="passcode-hint">${t.t('create.passcodeHint')}</p>
  ${errorFor(error, 'passcode')}
  <label for="notification_email">${t.t('create.notify')}</label>
  <input id="notification_email" name="notification_email" type="email" autocomplete="email" maxlength="254" dir="ltr" value="${values.notification_email ?? ''}"${described(error, 'notification_email', 'notification-hint')}>
  <p class="hint" id="notification-hint">${t.t('create.notifyHint')}</p>
  ${errorFor(error, 'notification_email')}
  <label for="send_link_email">${t.t('create.sendLink')}</label>
  <input id="send_link_email" name="send_link_email" type="email" maxlength="254" dir="ltr" value="${values.send_link_email ?? ''}"${described(error, 'send_link_email', 'send-link-hint')}>
  <p class="hint" id="send-link-hint">${t.t('create.sendLinkHint')}</p>
  ${errorFor(error, 'send_link_email')}
  <label for="webhook_url">${t.t('create.webhook')}</label>
  <input id="webhook_url" name="webhook_url" type="url" maxlength="${WEBHOOK_URL_MAX}" dir="ltr" value="${values.webhook_url ?? ''}"${described(error, 'webhook_url', 'webhook-hint')}>
  <p class="hint" id="webhook-hint">${t.t('create.webhookHint')}</p>
  ${errorFor(error, 'webhook_url')}
  ${timeControlsFields(ctx, values, error)}
  <p class="hint" id="sealing-hint" hidden>${t.t('create.sealingHint')}</p>
  ${filesField(ctx)}
  <button type="submit">${t.t('create.submit')}</button>
</form>
<p><a href="/request" id="ask-for-a-secret">${t.t('request.make.title')}</a></p>`, { qr: true, upload: true });
}

export function destructionSummary(t: Translator, note: { expiryType: string; maxViews: number; currentViews?: number; expiresAt: Date }): string {
  const views = note.maxViews - (note.currentViews ?? 0);
  const when = t.dateUtc(note.expiresAt);
  switch (note.expiryType) {
    case 'time':
      return t.t('summary.time', { when });
    case 'both':
      return t.t('summary.both', { views, when });
    default:
      return t.t('summary.view', { views, when });
  }
}

export function copyButton(t: Translator, target: string, labelKey: string): Html {
  return html`<button type="button" class="secondary" data-copy-target="${target}" data-copied="${t.t('created.copied')}" hidden>${t.t(labelKey)}</button>`;
}

/**
 * DECISIONS 13: the created page of a note sealed in the browser. The page's script adds the key it kept,
 * and draws the QR code of the complete link (key included) in the browser: the server never has that link.
 */
function createdInBrowserPage(ctx: PageContext, note: CreatedNote): string {
  const { t } = ctx;
  return layout(ctx, t.t('created.title'), html`
<h1 tabindex="-1">${t.t('created.heading')}</h1>
<section class="card" aria-labelledby="link-heading" data-sealed-link="${note.url}">
  <h2 id="link-heading">${t.t('created.share')}</h2>
  <p class="link" id="note-link" dir="ltr">${note.url}</p>
  ${copyButton(t, 'note-link', 'created.copyLink')}
  <p>${destructionSummary(t, note)}${note.hasPasscode ? ` ${t.t('created.passcodeToo')}` : ''}</p>
  ${controlsSummary(t, note.controls, true)}
  <p>${t.t('created.browserEncrypted')}</p>
  <p class="error" id="key-gone" hidden>${t.t('created.keyGone')}</p>
  <p class="hint">${t.t('created.onlyKey')}</p>
  <figure class="qr" id="note-qr" hidden><div id="qr-code"></div><figcaption class="hint">${t.t('created.qrWithKey')}</figcaption></figure>
</section>
<section class="card" aria-labelledby="key-heading">
  <h2 id="key-heading">${t.t('created.keyHeading')}</h2>
  <p class="hint">${t.t('created.keyHint')}</p>
  <h3 id="bare-link-heading">${t.t('created.bareLink')}</h3>
  <p class="link" id="bare-link" dir="ltr">${note.url}</p>
  ${copyButton(t, 'bare-link', 'created.copyBareLink')}
  <h3 id="note-key-heading">${t.t('created.keyAlone')}</h3>
  <p class="link" id="note-key" dir="ltr">${t.t('created.keyPlaceholder')}</p>
  ${copyButton(t, 'note-key', 'created.copyKey')}
</section>
${note.receiptUrl ? receiptSection(t, note.receiptUrl) : raw('')}
${webhookSection(t, note)}
<p><a href="/">${t.t('created.another')}</a></p>
${uploadList(note)}`, { qr: true });
}

/**
 * DECISIONS 14 (the files contract): the upload addresses of a note created with files, in their order, for the
 * page's script, which uploads the sealed files there before it shows this page. Bearer secrets: never shown.
 */
function uploadList(note: CreatedNote): Html {
  if (!note.uploads || note.uploads.length === 0) return raw('');
  return html`<ol id="vanish-uploads" data-count="${String(note.uploads.length)}" hidden>${note.uploads.map((upload) =>
    html`<li data-upload="${upload.url}" data-size="${String(upload.size)}"></li>`)}</ol>`;
}

/** DECISIONS 11: the webhook's signing secret and the note's reference, shown once, however the note was sealed. */
function webhookSection(t: Translator, note: CreatedNote): Html {
  if (!note.webhookSecret) return raw('');
  return html`<section class="card" aria-labelledby="webhook-heading">
  <h2 id="webhook-heading">${t.t('created.webhookHeading')}</h2>
  <dl class="facts">
    <dt>${t.t('created.noteRef')}</dt><dd><code id="note-ref" dir="ltr">${note.noteRef ?? ''}</code></dd>
    <dt>${t.t('created.webhookSecret')}</dt><dd><code id="webhook-secret" class="link" dir="ltr">${note.webhookSecret}</code></dd>
  </dl>
  ${copyButton(t, 'webhook-secret', 'created.copySecret')}
  <p class="hint">${t.t('created.webhookHint')}</p>
</section>`;
}

export function createdPage(ctx: PageContext, note: CreatedNote, qrSvg: string, clientEncrypted = false): string {
  if (clientEncrypted) return createdInBrowserPage(ctx, note);
  const { t } = ctx;
  return layout(ctx, t.t('created.title'), html`
<h1 tabindex="-1">${t.t('created.heading')}</h1>
<section class="card" aria-labelledby="link-heading">
  <h2 id="link-heading">${t.t('created.share')}</h2>
  <p class="link" id="note-link" dir="ltr">${note.url}</p>
  ${copyButton(t, 'note-link', 'created.copyLink')}
  <p>${destructionSummary(t, note)}${note.hasPasscode ? ` ${t.t('created.passcodeToo')}` : ''}</p>
  ${controlsSummary(t, note.controls, true)}
  <p class="hint">${t.t('created.onlyKey')}</p>
  <p class="hint">${t.t('created.serverEncrypted')}</p>
  <figure class="qr">${raw(qrSvg)}<figcaption class="hint">${t.t('created.qr')}</figcaption></figure>
</section>
${note.receiptUrl ? receiptSection(t, note.receiptUrl) : raw('')}
${webhookSection(t, note)}
<p><a href="/">${t.t('created.another')}</a></p>`);
}

/**
 * DECISIONS 16: the creator's time controls in words (the created page; `forCreator` adds how to keep a
 * switch held and that this is a time gate on the server). Empty without controls.
 */
export function controlsSummary(t: Translator, controls: TimeControlsView | undefined, forCreator: boolean): Html {
  if (!controls) return raw('');
  const lines: string[] = [];
  if (controls.availableFrom) lines.push(t.t('controls.availableFrom', { when: t.dateUtc(controls.availableFrom) }));
  if (controls.releaseAfterSilenceHours) lines.push(t.t('controls.silence', { hours: controls.releaseAfterSilenceHours }));
  if (controls.shrinkAfterFirstViewMinutes) lines.push(t.t('controls.shrink', { minutes: controls.shrinkAfterFirstViewMinutes }));
  if (lines.length === 0) return raw('');
  const gated = Boolean(controls.availableFrom || controls.releaseAfterSilenceHours);
  return html`<p id="note-controls">${lines.join(' ')}</p>${forCreator && gated ? html`
  <p class="hint" id="time-gate-hint">${t.t('controls.timeGate')}</p>` : raw('')}`;
}

/**
 * DECISIONS 16: the note page of a note that is not open yet. No form: nothing here can consume a
 * view or count a passcode.
 */
export function notYetPage(ctx: PageContext, opensAt: Date | null): string {
  const { t } = ctx;
  return layout(ctx, t.t('note.notYet.title'), html`
<h1>${t.t('note.notYet.heading')}</h1>
<div class="card">
  <p id="note-opens">${opensAt ? t.t('note.notYet.scheduled', { when: t.dateUtc(opensAt) }) : t.t('note.notYet.held')}</p>
  <p class="hint">${t.t('note.notYet.nothingUsed')}</p>
</div>`);
}

/**
 * DECISIONS 14: while a file is still being uploaded the page says so; its button then answers the same
 * page again (409) and claims nothing, until every upload is complete.
 * `keyRefused`: the last reveal came without a matching key proof (DECISIONS 13), so nothing was claimed;
 * the page offers the field for the key again, whatever the link's fragment held.
 */
export function notePage(ctx: PageContext, meta: NoteMetadata, token: string, error?: string, keyRefused = false): string {
  const { t } = ctx;
  return layout(ctx, t.t('note.title'), html`
<h1>${t.t('note.heading')}</h1>
<div class="card"${raw(meta.uploading ? ` id="upload-pending" data-uploading data-file-count="${meta.fileCount ?? 0}"` : '')}>
  <p>${destructionSummary(t, meta)}</p>
  ${meta.uploading ? html`<p role="status">${t.t('note.uploading')}</p>` : raw('')}
  <p>${t.t('note.countsAsView')}</p>
  ${error ? html`<p class="error" role="alert" id="reveal-error">${error}</p>` : raw('')}
  ${meta.clientEncrypted ? html`<p class="error" role="alert" id="key-missing" hidden>${t.t('note.keyMissing')}</p>
  <noscript><p class="error">${t.t('note.needsScript')}</p></noscript>` : raw('')}
  <form method="post"${raw(meta.clientEncrypted ? ' data-client-encrypted' : '')}${raw(keyRefused ? ' data-key-refused' : '')}${raw(meta.fileCount ? ` data-files="${meta.fileCount}"` : '')}>
    <input type="hidden" name="form_token" value="${token}">
    ${meta.clientEncrypted ? html`<input type="hidden" name="key_check" value="">
    <div id="key-field" hidden>
      <label for="note-key-input">${t.t('note.keyLabel')}</label>
      <input id="note-key-input" type="text" autocomplete="off" autocapitalize="off" spellcheck="false" dir="ltr" aria-describedby="key-field-hint">
      <p class="hint" id="key-field-hint">${t.t('note.keyHint')}</p>
      <p class="error" id="key-malformed" hidden>${t.t('note.keyMalformed')}</p>
    </div>` : raw('')}
    ${meta.hasPasscode ? html`<label for="passcode">${t.t('note.passcode')}</label>
    <input id="passcode" name="passcode" type="password" autocomplete="off" required maxlength="${PASSCODE_MAX}"${raw(error ? ' aria-describedby="reveal-error" aria-invalid="true"' : '')}>` : raw('')}
    <button type="submit">${t.t('note.show')}</button>
  </form>
</div>`);
}

/**
 * DECISIONS 14: where the page's script lists a note's files, once it has opened the manifest (names and sizes
 * exist only in the browser). The download addresses are the server's `#vanish-files` list.
 */
export function revealedFilesSection(ctx: PageContext): Html {
  const { t } = ctx;
  return html`<section class="card" id="files-section" aria-labelledby="files-heading" hidden
  data-save="${t.t('revealed.save')}" data-saving="${t.t('revealed.saving')}" data-saved="${t.t('revealed.saved')}"
  data-failed="${t.t('revealed.fileFailed')}" data-missing="${t.t('revealed.filesMissing')}">
  <h2 id="files-heading">${t.t('revealed.files')}</h2>
  <p class="hint">${t.t('revealed.filesHint')}</p>
  <p class="hint" id="files-memory" hidden>${t.t('revealed.fileMemory')}</p>
  <ul class="files" id="files-opened"></ul>
</section>`;
}

/**
 * DECISIONS 14 (the files contract): the download addresses in the manifest's order, for the page's script,
 * `vanish open` and `vanish inbox`; names and sizes in clear come only from the sealed manifest, in the browser.
 */
export function downloadList(t: Translator, files: ReadonlyArray<RevealedFile>): Html {
  return files.length === 0 ? raw('') : html`
  <ol id="vanish-files" data-count="${String(files.length)}" aria-label="${t.t('revealed.files')}">${files.map((file) =>
    html`<li data-download="${file.url}" data-size="${String(file.size)}"></li>`)}</ol>`;
}

/** `clientEncrypted`: content is the writer's envelope, which the page opens with the link's key. */
export function revealedPage(
  ctx: PageContext, content: string, currentViews: number, maxViews: number, destroyed: boolean, clientEncrypted = false, files: ReadonlyArray<RevealedFile> = [],
): string {
  const { t } = ctx;
  const left = maxViews - currentViews;
  const fileList = downloadList(t, files);
  return layout(ctx, t.t('revealed.title'), html`
<h1 tabindex="-1">${t.t('revealed.heading')}</h1>
<div class="card">
  ${clientEncrypted
    ? html`<pre class="content" id="note-content" dir="auto" data-envelope="${content}" data-no-key="${t.t('revealed.noKey')}" data-wrong-key="${t.t('revealed.wrongKey')}">${t.t('revealed.opening')}</pre>`
    : html`<pre class="content" id="note-content" dir="auto">${content}</pre>`}
  ${copyButton(t, 'note-content', 'revealed.copyText')}${fileList}
  <p>${destroyed ? t.t('revealed.destroyed') : t.t('revealed.left', { left })}</p>
</div>
${clientEncrypted ? revealedFilesSection(ctx) : raw('')}`);
}

export function notFoundPage(ctx: PageContext): string {
  const { t } = ctx;
  return layout(ctx, t.t('notFound.title'), html`
<h1>${t.t('notFound.heading')}</h1>
<div class="card">
  <p>${t.t('notFound.body')}</p>
  <p><a href="/">${t.t('notFound.newNote')}</a></p>
</div>`);
}

export function forbiddenPage(ctx: PageContext): string {
  const { t } = ctx;
  return layout(ctx, t.t('forbidden.title'), html`
<h1>${t.t('forbidden.heading')}</h1>
<div class="card">
  <p>${t.t('forbidden.body')}</p>
  <p>${t.t('forbidden.again')}</p>
</div>`);
}

export function errorPage(ctx: PageContext, message: string): string {
  const { t } = ctx;
  return layout(ctx, t.t('error.title'), html`
<h1>${t.t('error.title')}</h1>
<div class="card"><p>${message}</p><p>${t.t('error.retry')}</p></div>`);
}

/** DECISIONS 12: the creator's receipt link, beside the note's link, shown once. */
function receiptSection(t: Translator, receiptUrl: string): Html {
  return html`<section class="card" aria-labelledby="receipt-heading">
  <h2 id="receipt-heading">${t.t('created.receiptHeading')}</h2>
  <p class="link" id="receipt-link" dir="ltr"><a href="${receiptUrl}">${receiptUrl}</a></p>
  ${copyButton(t, 'receipt-link', 'created.copyReceipt')}
  <p class="hint">${t.t('created.receiptHint')}</p>
  <div id="keep-receipt" data-receipt-url="${receiptUrl}" hidden>
    <button type="button" class="secondary" id="keep-receipt-button">${t.t('created.keep')}</button>
    <p class="hint">${t.t('created.keepHint')}</p>
    <p role="status" id="keep-receipt-kept" hidden>${t.t('created.kept')} <a href="/receipts">${t.t('created.walletLink')}</a></p>
    <p class="error" role="alert" id="keep-receipt-failed" hidden>${t.t('created.keepFailed')}</p>
  </div>
</section>`;
}
