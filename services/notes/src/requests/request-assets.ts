import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The requests' sealing (DECISIONS 15): the @vanish/envelope file itself, the same bytes the CLI runs. */
export const REQUEST_SEAL_JS = readFileSync(require.resolve('@vanish/envelope/request-seal'), 'utf8');

/**
 * The requests' pages script: /request makes the key pair here and shows both links; /q/{id} and /embed/q/{id}
 * seal the answer here to the request's public key and submit only the envelope; /i/{id} proves and opens each
 * answer with the private key of the link's fragment, which no request carries. Messages come translated from
 * the page's data attributes, never from this script. Files (DECISIONS 14) go through the pages script's own code
 * (window.vanishFilesUi: the picker, tus uploads, the download worker), sealed under the answer's note key K.
 */
export const REQUESTS_JS = `
(function () {
  if (window.vanishRequests) return;
  window.vanishRequests = true;
  var seal = window.vanishRequestSeal;
  var envelope = window.vanishEnvelope;
  var files = window.vanishFileStream;
  // Defined by app.js, which runs after this script: looked up when a page is set up (DOMContentLoaded).
  var filesUi = function () { return window.vanishFilesUi && files ? window.vanishFilesUi : null; };
  var byId = function (id) { return document.getElementById(id); };
  var json = function (res) { return res.json().then(function (body) { return { status: res.status, body: body }; }, function () { return { status: res.status, body: null }; }); };
  var ready = function () { return seal && window.isSecureContext && window.crypto && crypto.subtle ? seal.supported() : Promise.resolve(false); };

  var makePage = function () {
    var form = document.querySelector('form[data-make-request]');
    if (!form) return;
    var problem = byId('make-refused');
    ready().then(function (ok) {
      if (!ok) { byId('make-no-crypto').hidden = false; form.querySelector('button').disabled = true; return; }
      form.hidden = false;
    });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      problem.hidden = true;
      var value = function (name) { return form.elements[name].value.trim(); };
      seal.newKeyPair().then(function (pair) {
        var body = {
          public_key: pair.publicKey,
          label: form.elements.label.value,
          max_submissions: Number(value('max_submissions')),
          open_days: Number(value('open_days')),
          max_views: Number(value('max_views')),
          allow_files: form.elements.allow_files.checked,
          lang: document.documentElement.lang
        };
        if (value('notification_email')) body.notification_email = value('notification_email');
        if (value('webhook_url')) body.webhook_url = value('webhook_url');
        var origins = value('allowed_origins').split(/\\s+/).filter(Boolean);
        if (origins.length) body.allowed_origins = origins;
        return fetch('/api/request.php', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) })
          .then(json).then(function (answer) {
            if (answer.status !== 200 || !answer.body || !answer.body.success) {
              var reason = answer.status === 429 ? form.getAttribute('data-refused-rate') : (answer.body && answer.body.error) || form.getAttribute('data-refused-other');
              problem.textContent = form.getAttribute('data-refused').replace('{reason}', reason);
              problem.hidden = false;
              return;
            }
            // The private key goes into the inbox link's fragment here, and nowhere else.
            var inbox = answer.body.inbox_url + '#' + pair.privateKey;
            form.hidden = true;
            byId('made').hidden = false;
            byId('request-link').textContent = answer.body.request_url;
            byId('inbox-link').textContent = inbox;
            byId('inbox-link-a').href = inbox;
            if (answer.body.webhook_secret) {
              var secret = byId('webhook-secret');
              secret.textContent = secret.getAttribute('data-template').replace('{secret}', answer.body.webhook_secret);
              secret.hidden = false;
            }
            if (body.allowed_origins) {
              var snippet = byId('embed-snippet');
              snippet.textContent = snippet.getAttribute('data-template').replace('{request}', answer.body.request_url);
              byId('embed').hidden = false;
            }
            byId('made-heading').focus();
          });
      }).catch(function () {
        problem.textContent = form.getAttribute('data-refused').replace('{reason}', form.getAttribute('data-refused-other'));
        problem.hidden = false;
      });
    });
  };

  var sendPage = function () {
    var form = document.querySelector('form[data-send-request]');
    if (!form) return;
    var problem = byId('send-refused');
    var busy = false;
    var ui = filesUi();
    // DECISIONS 14: where the request allows files (the page has the field), the create page's picker.
    if (ui && byId('files-field')) ui.field(form);
    ready().then(function (ok) { if (ok) form.hidden = false; else byId('send-no-crypto').hidden = false; });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (busy) return;
      var text = form.elements.content.value;
      var chosen = ui && byId('files-field') ? ui.chosen() : [];
      if (text.trim() === '' && chosen.length === 0) return;
      busy = true;
      problem.hidden = true;
      var entries = chosen.map(function (file) { return ui.entryOf(file); });
      seal.newNoteKeyTo(form.getAttribute('data-public-key')).then(function (noteKey) {
        // The note under K: the text, or (with files) the manifest of the files and the text, as a note's.
        var note = entries.length > 0 ? files.sealManifest(text.trim() === '' ? '' : text, entries, noteKey.key) : envelope.seal(text, noteKey.key);
        return Promise.all([note, envelope.keyCheck(noteKey.key)]).then(function (parts) {
          // Only the envelope, the proof of its key and the files' sealed sizes leave this page; the text box is never sent.
          var body = { content: seal.requestEnvelope(noteKey.ephemeralPublicKey, parts[0]), key_check: parts[1] };
          if (entries.length > 0) body.files = entries.map(function (entry) { return { size: files.sealedSize(entry.size) }; });
          return fetch(form.getAttribute('data-submit'), { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) })
            .then(json).then(function (answer) {
              if (entries.length === 0 || answer.status !== 200 || !answer.body || !answer.body.success) return answer;
              // The answer opens once every file is uploaded: "Sent" is said only then.
              var urls = (answer.body.uploads || []).map(function (upload) { return upload.url; });
              return ui.uploadAll(urls, chosen, entries, noteKey.key).then(function () { ui.clear(); return answer; }, function () { return { status: 0, upload: true }; });
            });
        });
      }).then(function (answer) {
        busy = false;
        if (answer.status === 200 && answer.body && answer.body.success) {
          form.elements.content.value = '';
          form.hidden = true;
          byId('sent').hidden = false;
          if (answer.body.receipt_url) {
            var link = byId('receipt-link');
            link.textContent = answer.body.receipt_url;
            link.href = answer.body.receipt_url;
            byId('sent-receipt').hidden = false;
          }
          byId('sent-heading').focus();
          return;
        }
        problem.textContent = form.getAttribute(answer.upload ? 'data-refused-upload' : answer.status === 429 ? 'data-refused-rate' : answer.status === 410 ? 'data-refused-closed' : 'data-refused-other');
        problem.hidden = false;
      }).catch(function () {
        busy = false;
        problem.textContent = form.getAttribute('data-refused-other');
        problem.hidden = false;
      });
    });
  };

  var privateKey = function () {
    var key = location.hash.replace(/^#/, '');
    return seal && seal.isKeyText(key) ? key : null;
  };

  var inboxPage = function () {
    var list = document.querySelector('[data-inbox]');
    if (!list) return;
    var key = privateKey();
    var missing = function () { byId('inbox-key-missing').hidden = false; };
    if (!key) { missing(); return; }
    ready().then(function (ok) {
      if (!ok) { missing(); return; }
      // A key that is not this inbox's own opens nothing here: said at once, and nothing is posted.
      return seal.publicKeyOf(key).then(function (publicKey) {
        if (publicKey !== list.getAttribute('data-public-key')) { missing(); return; }
        document.querySelectorAll('form[data-open-submission]').forEach(function (form) {
          form.action = location.pathname + location.hash;
          var button = form.querySelector('button');
          button.disabled = true;
          seal.keyCheckFor(key, form.getAttribute('data-ephemeral-key')).then(function (check) {
            form.elements.key_check.value = check;
            button.disabled = false;
          });
        });
        document.querySelectorAll('form[data-keep-key]').forEach(function (form) { form.action = form.getAttribute('action') + location.hash; });
      });
    });
  };

  var openedPage = function () {
    var sealed = document.querySelector('[data-request-envelope]');
    if (!sealed) return;
    var shown = function (text, opened) {
      sealed.textContent = text;
      sealed.setAttribute('data-opened', opened ? 'yes' : 'no');
    };
    var back = byId('inbox-back');
    if (back) back.href = back.getAttribute('href') + location.hash;
    var key = privateKey();
    if (!key) { shown(sealed.getAttribute('data-no-key'), false); return; }
    var ui = filesUi();
    seal.noteKeyFor(key, sealed.getAttribute('data-ephemeral-key')).then(function (noteKey) {
      var noteEnvelope = sealed.getAttribute('data-request-envelope');
      // DECISIONS 14: an answer with files carries their manifest; they are saved with the note page's own code.
      var opening = files ? files.openNote(noteEnvelope, noteKey) : envelope.open(noteEnvelope, noteKey).then(function (text) { return { text: text, files: null }; });
      return opening.then(function (note) {
        shown(note.text, true);
        if (note.files && ui) {
          if (note.text === '') sealed.hidden = true;
          ui.openedFiles(note.files, noteKey);
        }
      });
    }).then(null, function () { shown(sealed.getAttribute('data-wrong-key'), false); });
  };

  // The embedded form tells its frame's parent only how tall it is, nothing else.
  var embedded = function () {
    if (!document.documentElement.hasAttribute('data-embedded') || window.parent === window) return;
    var tell = function () { window.parent.postMessage({ vanishEmbedHeight: document.documentElement.scrollHeight }, '*'); };
    if (window.ResizeObserver) new ResizeObserver(tell).observe(document.body);
    tell();
  };

  // After every deferred script (app.js among them) has run: this one runs before app.js, while the document is
  // 'interactive' and DOMContentLoaded has not fired yet.
  var done = false;
  var setUp = function () {
    if (done) return;
    done = true;
    makePage();
    sendPage();
    inboxPage();
    openedPage();
    embedded();
  };
  if (document.readyState === 'complete') setUp();
  else {
    document.addEventListener('DOMContentLoaded', setUp);
    window.addEventListener('load', setUp);
  }
})();
`;

/**
 * The script a site includes to embed a request's form (DECISIONS 15): it puts a frame of /embed/q/{id} where
 * `<div data-vanish-request="REQUEST_LINK">` stands, and sizes it from the frame's height messages. The secret is
 * typed inside the frame, on vanish's origin: this script and the page around it never see it.
 */
export const EMBED_JS = `
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || !script.src) return;
  var origin = new URL(script.src).origin;
  var frames = [];
  document.querySelectorAll('[data-vanish-request]').forEach(function (slot) {
    var link;
    try { link = new URL(slot.getAttribute('data-vanish-request'), origin); } catch (e) { return; }
    var match = /^\\/q\\/([A-Za-z0-9_-]{43})$/.exec(link.pathname);
    if (link.origin !== origin || !match) return;
    var frame = document.createElement('iframe');
    frame.src = origin + '/embed/q/' + match[1];
    frame.title = slot.getAttribute('data-title') || 'vanish';
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.setAttribute('loading', 'lazy');
    frame.style.cssText = 'width:100%;max-width:42rem;height:28rem;border:0;display:block';
    slot.replaceChildren(frame);
    frames.push(frame);
  });
  window.addEventListener('message', function (event) {
    if (event.origin !== origin || !event.data || typeof event.data.vanishEmbedHeight !== 'number') return;
    frames.forEach(function (frame) {
      if (frame.contentWindow === event.source) frame.style.height = Math.min(Math.max(event.data.vanishEmbedHeight, 200), 2000) + 'px';
    });
  });
})();
`;

function integrity(text: string): string {
  return `sha384-${createHash('sha384').update(text, 'utf8').digest('base64')}`;
}

export const REQUEST_ASSET_INTEGRITY = {
  seal: integrity(REQUEST_SEAL_JS),
  requests: integrity(REQUESTS_JS),
  embed: integrity(EMBED_JS),
} as const;

/** The requests' scripts by the path they are served at (request-routes.ts): listed in the release manifest. */
export const REQUEST_PAGE_ASSETS: ReadonlyArray<{ path: string; body: string }> = [
  { path: '/assets/request-seal.js', body: REQUEST_SEAL_JS },
  { path: '/assets/requests.js', body: REQUESTS_JS },
  { path: '/assets/embed.js', body: EMBED_JS },
];
