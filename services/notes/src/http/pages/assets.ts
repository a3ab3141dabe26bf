import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The pages' only CSS and scripts, served from /assets by the notes service itself (no third
 * party, CSP `'self'`), each tag carrying its Subresource Integrity hash. CSS and app.js are kept as
 * strings so the build ships them without a copy step; envelope.js is the @vanish/envelope file itself,
 * the same bytes the CLI runs (DECISIONS 13).
 */
export const APP_CSS = `
:root { color-scheme: light dark; --fg: #1a1a1a; --bg: #fafafa; --muted: #555; --accent: #0b5cad; --danger: #a4161a; --card: #fff; --border: #c8c8c8; }
@media (prefers-color-scheme: dark) { :root { --fg: #eee; --bg: #121212; --muted: #b5b5b5; --accent: #7db7ff; --danger: #ff8a8a; --card: #1d1d1d; --border: #444; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { max-width: 42rem; margin: 0 auto; padding: 1rem; }
header a { color: var(--fg); text-decoration: none; font-weight: 700; font-size: 1.25rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: .5rem; padding: 1rem; margin-bottom: 1rem; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
.hint { color: var(--muted); font-size: .875rem; margin: .25rem 0 0; }
textarea, input, select { width: 100%; font: inherit; padding: .5rem; border: 1px solid var(--border); border-radius: .25rem; background: var(--bg); color: var(--fg); }
textarea { min-height: 10rem; resize: vertical; }
.row { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: 0 1rem; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; margin-top: 1rem; border: 0; border-radius: .25rem; background: var(--accent); color: #fff; cursor: pointer; min-height: 44px; }
button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--accent); }
.error { color: var(--danger); font-weight: 600; }
.link { word-break: break-all; font-family: ui-monospace, monospace; }
pre.content { white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; background: var(--bg); border: 1px solid var(--border); padding: .75rem; border-radius: .25rem; }
.qr svg { width: 12rem; height: 12rem; background: #fff; padding: .5rem; }
footer { color: var(--muted); font-size: .875rem; }
[hidden] { display: none !important; }
button.danger { background: var(--danger); }
ol.timeline { padding-left: 1.25rem; margin: .5rem 0 0; }
ol.timeline li { margin: .25rem 0; }
ol.timeline time { font-family: ui-monospace, monospace; font-size: .875rem; color: var(--muted); margin-right: .5rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
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
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });
  var expiry = document.getElementById('expiry_type');
  if (expiry) {
    var sync = function () {
      var type = expiry.value;
      document.getElementById('expiry-time-field').hidden = type === 'view';
      document.getElementById('max-views-field').hidden = type === 'time';
    };
    expiry.addEventListener('change', sync);
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
        textBox.setCustomValidity('The note is longer than 10,000 characters.');
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
    if (!openKey) shown('This note was encrypted in the writer’s browser, and this page has no key to open it: open the complete link, with the part after #.', false);
    else envelope.open(sealedText.getAttribute('data-envelope'), openKey).then(function (text) { shown(text, true); }, function () {
      shown('The key in this link does not open this note.', false);
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
