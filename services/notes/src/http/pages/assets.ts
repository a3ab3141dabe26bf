import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The pages' only CSS and scripts, served from /assets by the notes service itself (no third
 * party, CSP `'self'`), each tag carrying its Subresource Integrity hash. CSS and app.js are kept as
 * strings so the build ships them without a copy step; envelope.js is the @vanish/envelope file itself,
 * the same bytes the CLI runs (DECISIONS 13).
 */
export const APP_CSS = `
:root { color-scheme: light; --fg: #1a1a1a; --bg: #fafafa; --muted: #555; --accent: #0b5cad; --on-accent: #fff; --danger: #a4161a; --card: #fff; --border: #767676; --focus: #0b5cad; }
:root[data-theme="dark"] { color-scheme: dark; --fg: #eee; --bg: #121212; --muted: #b5b5b5; --accent: #7db7ff; --on-accent: #121212; --danger: #ff8a8a; --card: #1d1d1d; --border: #8a8a8a; --focus: #7db7ff; }
@media (prefers-color-scheme: dark) { :root:not([data-theme="light"]) { color-scheme: dark; --fg: #eee; --bg: #121212; --muted: #b5b5b5; --accent: #7db7ff; --on-accent: #121212; --danger: #ff8a8a; --card: #1d1d1d; --border: #8a8a8a; --focus: #7db7ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", "Noto Sans CJK JP", sans-serif; color: var(--fg); background: var(--bg); overflow-wrap: anywhere; }
header, main, footer { max-inline-size: 42rem; margin-inline: auto; padding: 1rem; }
header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem 1rem; }
header .brand { color: var(--fg); text-decoration: none; font-weight: 700; font-size: 1.25rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; inset-inline-start: -100vw; }
.skip:focus { position: static; display: block; padding: .5rem 1rem; }
.settings { display: flex; flex-wrap: wrap; align-items: end; gap: .25rem .5rem; font-size: .875rem; }
.settings label { margin: 0; font-weight: 600; }
.settings select { inline-size: auto; padding: .25rem; }
.settings span { display: flex; flex-direction: column; }
.settings button { margin-block-start: 0; padding: .25rem .75rem; min-block-size: 2rem; }
h1 { font-size: 1.5rem; margin-block: .5rem 1rem; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: .5rem; padding: 1rem; margin-block-end: 1rem; }
label { display: block; font-weight: 600; margin-block: .75rem .25rem; }
.hint { color: var(--muted); font-size: .875rem; margin-block: .25rem 0; }
textarea, input, select { inline-size: 100%; font: inherit; padding: .5rem; border: 1px solid var(--border); border-radius: .25rem; background: var(--bg); color: var(--fg); }
textarea { min-block-size: 10rem; resize: vertical; }
.row { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: 0 1rem; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; margin-block-start: 1rem; border: 0; border-radius: .25rem; background: var(--accent); color: var(--on-accent); cursor: pointer; min-block-size: 44px; }
button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--accent); }
button:disabled { cursor: not-allowed; opacity: .75; }
.error { color: var(--danger); font-weight: 600; }
.link { word-break: break-all; font-family: ui-monospace, monospace; text-align: start; }
pre.content { white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; background: var(--bg); border: 1px solid var(--border); padding: .75rem; border-radius: .25rem; }
.qr { margin-inline: 0; }
.qr svg { width: 12rem; height: 12rem; background: #fff; padding: .5rem; }
footer { color: var(--muted); font-size: .875rem; }
[hidden] { display: none !important; }
button.danger { background: var(--danger); }
ol.timeline { padding-inline-start: 1.25rem; margin: .5rem 0 0; }
ol.timeline li { margin: .25rem 0; }
ol.timeline time { font-size: .875rem; color: var(--muted); margin-inline-end: .5rem; }
dl.facts { display: grid; grid-template-columns: fit-content(50%) 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
`;

// Progressive enhancement only: every page works without it.
export const APP_JS = `
(function () {
  document.querySelectorAll('[data-copy-target]').forEach(function (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      var target = document.getElementById(button.getAttribute('data-copy-target'));
      if (!target || !navigator.clipboard) return;
      navigator.clipboard.writeText(target.textContent).then(function () {
        var label = button.textContent;
        button.textContent = button.getAttribute('data-copied') || label;
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });
  // The switcher's GET keeps the link's #key (a redirect carries the fragment along).
  document.querySelectorAll('form[data-settings]').forEach(function (form) {
    form.addEventListener('submit', function () { form.action = location.pathname + location.hash; });
  });
  var expiry = document.getElementById('expiry_type');
  if (expiry) {
    var preset = document.getElementById('expiry_preset');
    var sync = function () {
      var type = expiry.value;
      var custom = !preset || preset.value === 'custom';
      if (preset) document.getElementById('expiry-preset-field').hidden = type === 'view';
      document.getElementById('expiry-time-field').hidden = type === 'view' || !custom;
      document.getElementById('max-views-field').hidden = type === 'time';
    };
    expiry.addEventListener('change', sync);
    if (preset) preset.addEventListener('change', sync);
    sync();
  }

  // DECISIONS 13: a note sealed in its writer's browser. The key is the link's fragment, which no
  // request carries; the reveal posts only its proof (key_check), and the text is opened here.
  var envelope = window.vanishEnvelope;
  var fragmentKey = function () {
    var key = location.hash.replace(/^#/, '');
    return envelope && envelope.parseKey(key) && window.crypto && crypto.subtle ? key : null;
  };
  var revealForm = document.querySelector('form[data-client-encrypted]');
  if (revealForm) {
    var button = revealForm.querySelector('button');
    var ready = Promise.resolve();
    // On load, and again when the fragment changes in place (a key pasted after the #): no reload happens then.
    var prepareReveal = function () {
      var key = fragmentKey();
      revealForm.elements.key_check.value = '';
      document.getElementById('key-missing').hidden = Boolean(key);
      button.disabled = !key;
      ready = key ? envelope.keyCheck(key).then(function (check) { revealForm.elements.key_check.value = check; }) : Promise.resolve();
    };
    prepareReveal();
    window.addEventListener('hashchange', prepareReveal);
    revealForm.addEventListener('submit', function (event) {
      if (revealForm.elements.key_check.value) return;
      event.preventDefault();
      ready.then(function () { if (revealForm.elements.key_check.value) revealForm.submit(); });
    });
  }
  // The create page seals the text here when it can (a secure context with WebCrypto); otherwise the form
  // posts the text as before and the created page says that the server encrypted it.
  var KEY_SLOT = 'vanish-new-note-key';
  var forget = function () { try { sessionStorage.removeItem(KEY_SLOT); } catch (e) { /* storage off */ } };
  var createForm = document.querySelector('form[data-create]');
  if (createForm && envelope && window.isSecureContext && window.crypto && crypto.subtle) {
    forget();
    document.getElementById('sealing-hint').hidden = false;
    var textBox = createForm.elements.content;
    var sealing = false;
    // Back from an error page may restore this page as it was when sent: undo the sealing, so that an
    // edited text is sealed again rather than the old envelope sent.
    var unseal = function () {
      createForm.querySelectorAll('input[data-sealed-field]').forEach(function (input) { input.remove(); });
      textBox.setAttribute('name', 'content');
      createForm.removeAttribute('data-sealed');
      sealing = false;
    };
    window.addEventListener('pageshow', unseal);
    createForm.addEventListener('submit', function (event) {
      if (createForm.hasAttribute('data-sealed')) return;
      event.preventDefault();
      if (sealing) return;
      var text = textBox.value;
      if (Array.from(text).length > 10000) {
        textBox.setCustomValidity(createForm.getAttribute('data-too-long'));
        textBox.reportValidity();
        textBox.setCustomValidity('');
        return;
      }
      sealing = true;
      var key = envelope.newKey();
      Promise.all([envelope.seal(text, key), envelope.keyCheck(key)]).then(function (parts) {
        var add = function (name, value) {
          var input = document.createElement('input');
          input.type = 'hidden';
          input.name = name;
          input.value = value;
          input.setAttribute('data-sealed-field', '');
          createForm.appendChild(input);
        };
        // The text box is never sent; only the envelope and the proof of its key are.
        textBox.removeAttribute('name');
        add('content', text.trim() === '' ? '' : parts[0]);
        add('client_encrypted', 'true');
        add('key_check', parts[1]);
        try { sessionStorage.setItem(KEY_SLOT, key); } catch (e) { /* the created page will say the key is gone */ }
        createForm.setAttribute('data-sealed', '');
        createForm.submit();
      }, unseal);
    });
  }
  var sealedLink = document.querySelector('[data-sealed-link]');
  if (sealedLink) {
    var kept = null;
    try { kept = sessionStorage.getItem(KEY_SLOT); } catch (e) { kept = null; }
    forget();
    if (kept && envelope && envelope.parseKey(kept)) {
      document.getElementById('note-link').textContent = sealedLink.getAttribute('data-sealed-link') + '#' + kept;
      document.getElementById('note-key').textContent = kept;
    } else {
      document.getElementById('key-gone').hidden = false;
      document.getElementById('note-key').textContent = '';
    }
  }
  var sealedText = document.querySelector('[data-envelope]');
  if (sealedText) {
    var shown = function (text, opened) {
      sealedText.textContent = text;
      sealedText.removeAttribute('data-envelope');
      sealedText.setAttribute('data-opened', opened ? 'yes' : 'no');
    };
    var openKey = fragmentKey();
    // The messages come translated from the page (issue 20), never from this script.
    if (!openKey) shown(sealedText.getAttribute('data-no-key'), false);
    else envelope.open(sealedText.getAttribute('data-envelope'), openKey).then(function (text) { shown(text, true); }, function () {
      shown(sealedText.getAttribute('data-wrong-key'), false);
    });
  }
})();
`;

export const ENVELOPE_JS = readFileSync(require.resolve('@vanish/envelope'), 'utf8');

function integrity(text: string): string {
  return `sha384-${createHash('sha384').update(text, 'utf8').digest('base64')}`;
}

/** The SRI value of each asset, for the tags that load them. */
export const ASSET_INTEGRITY = {
  css: integrity(APP_CSS),
  app: integrity(APP_JS),
  envelope: integrity(ENVELOPE_JS),
} as const;
