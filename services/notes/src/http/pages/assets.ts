import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
select { max-inline-size: 100%; text-overflow: ellipsis; }
.row > div, .settings span { min-inline-size: 0; }
h2 { font-size: 1.25rem; }
h3 { font-size: 1rem; margin-block: 1rem .25rem; }
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
a.button { display: inline-block; font-weight: 600; padding: .6rem 1.2rem; border-radius: .25rem; background: var(--accent); color: var(--on-accent); text-decoration: none; min-block-size: 44px; }
a.button.danger { background: var(--danger); }
table.wallet { inline-size: 100%; border-collapse: collapse; font-size: .875rem; }
table.wallet th, table.wallet td { text-align: start; padding: .4rem .25rem; border-block-end: 1px solid var(--border); vertical-align: top; }
table.wallet button { margin: 0 0 .25rem; padding: .25rem .6rem; min-block-size: 2rem; }
table.wallet a { display: inline-block; padding-block: .5rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.dropzone { border: 2px dashed var(--border); border-radius: .5rem; padding: .75rem; }
.dropzone.dragging { border-color: var(--accent); background: var(--card); }
ul.files { list-style: none; padding: 0; margin: .5rem 0 0; }
ul.files li { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem 1rem; padding: .25rem 0; border-block-end: 1px solid var(--border); }
ul.files li .name { font-weight: 600; overflow-wrap: anywhere; }
ul.files li .size { color: var(--muted); font-size: .875rem; }
ul.files li button { margin-block-start: 0; }
progress { inline-size: 100%; }
.check { display: flex; align-items: center; gap: .5rem; margin-block: .75rem 0; }
.check input { inline-size: 1.25rem; block-size: 1.25rem; margin: 0; }
.check label { margin: 0; }
`;

// Progressive enhancement only: every page works without it.
export const APP_JS = `
(function () {
  if (window.vanishPages) return;
  window.vanishPages = true;
  var envelope = window.vanishEnvelope;
  var byId = function (id) { return document.getElementById(id); };
  var canSeal = Boolean(envelope && window.isSecureContext && window.crypto && crypto.subtle);

  var copyButtons = function () {
    document.querySelectorAll('[data-copy-target]').forEach(function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        var target = byId(button.getAttribute('data-copy-target'));
        if (!target || !navigator.clipboard) return;
        navigator.clipboard.writeText(target.textContent.trim()).then(function () {
          var label = button.textContent;
          button.textContent = button.getAttribute('data-copied') || label;
          setTimeout(function () { button.textContent = label; }, 1500);
        });
      });
    });
  };

  var settings = function () {
    document.querySelectorAll('form[data-settings]').forEach(function (form) {
      if (!form.hasAttribute('data-in-place')) {
        // The switcher's GET keeps the link's #key (a redirect carries the fragment along).
        form.addEventListener('submit', function () { form.action = location.pathname + location.hash; });
        return;
      }
      // A page shown once (created, revealed): save the choice without leaving it; the theme applies here
      // and now, the language from the next page on (this one cannot be asked for again).
      form.removeAttribute('target');
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        var lang = form.elements.lang.value;
        var theme = form.elements.theme.value;
        var query = new URLSearchParams({ lang: lang, theme: theme }).toString();
        fetch('/?' + query, { credentials: 'same-origin', redirect: 'manual' }).then(function () {
          if (theme === 'system') document.documentElement.removeAttribute('data-theme');
          else document.documentElement.setAttribute('data-theme', theme);
          form.querySelector('[data-saved]').hidden = lang === document.documentElement.lang;
        }, function () { /* offline: nothing saved, the page stays as it is */ });
      });
    });
  };

  var expiryFields = function () {
    var expiry = byId('expiry_type');
    if (!expiry) return;
    var preset = byId('expiry_preset');
    var sync = function () {
      var type = expiry.value;
      var custom = !preset || preset.value === 'custom';
      if (preset) byId('expiry-preset-field').hidden = type === 'view';
      byId('expiry-time-field').hidden = type === 'view' || !custom;
      byId('max-views-field').hidden = type === 'time';
    };
    expiry.addEventListener('change', sync);
    if (preset) preset.addEventListener('change', sync);
    sync();
  };

  // DECISIONS 13: a note sealed on its writer's machine. The key is the link's fragment, which no request
  // carries, or is pasted into the page's field (sent separately); the reveal posts only its proof
  // (key_check), and the text is opened here. A key that does not match claims nothing.
  var validKey = function (key) { return envelope && envelope.parseKey(key) && window.crypto && crypto.subtle ? key : null; };
  var pastedKey = function (value) {
    var text = value.trim();
    return text.indexOf('#') >= 0 ? text.slice(text.lastIndexOf('#') + 1) : text;
  };
  var revealForm = function () {
    var form = document.querySelector('form[data-client-encrypted]');
    if (!form) return;
    var button = form.querySelector('button');
    var field = byId('key-field');
    var input = byId('note-key-input');
    var refused = form.hasAttribute('data-key-refused');
    // The refused key stays out of the address (a reload or the switcher would offer it again).
    if (refused && location.hash) history.replaceState(null, '', location.pathname + location.search);
    var ready = Promise.resolve();
    var use = function (key) {
      form.elements.key_check.value = '';
      button.disabled = !key;
      // The key travels to the revealed page in the fragment of the form's address, never in its body.
      form.action = location.pathname + (key ? '#' + key : '');
      ready = key ? envelope.keyCheck(key).then(function (check) { form.elements.key_check.value = check; }) : Promise.resolve();
    };
    // On load, and again when the fragment changes in place (a key pasted after the #): no reload happens then.
    var prepare = function () {
      var fromLink = refused ? null : validKey(location.hash.replace(/^#/, ''));
      byId('key-missing').hidden = Boolean(fromLink) || refused;
      field.hidden = Boolean(fromLink);
      byId('key-malformed').hidden = true;
      use(fromLink || validKey(pastedKey(input.value)));
    };
    input.addEventListener('input', function () {
      var typed = pastedKey(input.value);
      var key = validKey(typed);
      byId('key-malformed').hidden = Boolean(key) || typed === '';
      use(key);
    });
    prepare();
    window.addEventListener('hashchange', function () { refused = false; prepare(); });
    form.addEventListener('submit', function (event) {
      if (form.elements.key_check.value) return;
      event.preventDefault();
      ready.then(function () { if (form.elements.key_check.value) form.submit(); });
    });
  };

  // The created page of a note sealed here: the link with its key, the key alone, and the QR code of the
  // complete link, all from the key this script still holds (it was never stored anywhere).
  var createdPage = function (key) {
    var sealedLink = document.querySelector('[data-sealed-link]');
    if (!sealedLink) return;
    if (!key || !validKey(key)) {
      byId('key-gone').hidden = false;
      byId('note-key').textContent = '';
      return;
    }
    var link = sealedLink.getAttribute('data-sealed-link') + '#' + key;
    byId('note-link').textContent = link;
    byId('note-key').textContent = key;
    if (window.vanishQr) {
      var svg = new DOMParser().parseFromString(window.vanishQr.svg(link), 'image/svg+xml').documentElement;
      svg.setAttribute('role', 'img');
      svg.setAttribute('aria-labelledby', 'qr-caption');
      byId('qr-code').appendChild(document.importNode(svg, true));
      byId('note-qr').querySelector('figcaption').id = 'qr-caption';
      byId('note-qr').hidden = false;
    }
  };

  // The create page posts with fetch, so that a refusal (a limit, an expired form, a network error) leaves
  // the page and its text as they are. It seals the text here when it can (a secure context with WebCrypto);
  // otherwise it sends the text and the created page says that the server encrypted it.
  // DECISIONS 14: files are sealed here (file-stream.js) and sent with tus (tus.js), one 8 MiB request at a
  // time, each resumed where the server says it stopped. Only where this browser can seal them.
  var files = window.vanishFileStream;
  var canAttach = Boolean(canSeal && files && window.tus && window.tus.isSupported && window.TransformStream && window.Blob);
  var UPLOAD_CHUNK_BYTES = 8 * 1024 * 1024;
  var RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10000, 20000, 30000, 60000];
  var attached = [];

  var humanSize = function (bytes) {
    var units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'];
    var value = bytes;
    var unit = 0;
    while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
    return new Intl.NumberFormat(document.documentElement.lang || undefined, { style: 'unit', unit: units[unit], unitDisplay: 'short', maximumFractionDigits: unit === 0 ? 0 : 1 }).format(value);
  };

  // A name of at most 255 bytes of UTF-8 (the format's limit), cut in its middle so that the extension stays.
  var shortName = function (name) {
    var chars = Array.from(name || 'file');
    while (new TextEncoder().encode(chars.join('')).length > 255) chars.splice(Math.floor(chars.length / 2), 1);
    return chars.join('');
  };

  var entryOf = function (file) { return files.newFileEntry(shortName(file.name), (file.type || '').slice(0, 255), file.size); };

  var fileField = function (form) {
    var field = byId('files-field');
    if (!field || !canAttach) return;
    byId('files-unavailable').hidden = true;
    field.hidden = false;
    var input = byId('files-input');
    var list = byId('files-list');
    var drop = byId('files-drop');
    var render = function () {
      list.textContent = '';
      attached.forEach(function (file, i) {
        var item = document.createElement('li');
        var name = document.createElement('span');
        name.className = 'name';
        name.textContent = file.name;
        var size = document.createElement('span');
        size.className = 'size';
        size.textContent = humanSize(file.size);
        var remove = document.createElement('button');
        remove.type = 'button';
        remove.className = 'secondary';
        remove.textContent = list.getAttribute('data-remove');
        remove.setAttribute('aria-label', list.getAttribute('data-remove') + ': ' + file.name);
        remove.addEventListener('click', function () { attached.splice(i, 1); render(); });
        item.appendChild(name);
        item.appendChild(size);
        item.appendChild(remove);
        list.appendChild(item);
      });
      form.elements.content.required = attached.length === 0;
    };
    var add = function (chosen) {
      Array.prototype.forEach.call(chosen || [], function (file) { attached.push(file); });
      render();
    };
    input.addEventListener('change', function () { add(input.files); input.value = ''; });
    ['dragenter', 'dragover'].forEach(function (type) {
      drop.addEventListener(type, function (event) { event.preventDefault(); drop.classList.add('dragging'); });
    });
    ['dragleave', 'drop'].forEach(function (type) {
      drop.addEventListener(type, function () { drop.classList.remove('dragging'); });
    });
    drop.addEventListener('drop', function (event) {
      event.preventDefault();
      if (event.dataTransfer) add(event.dataTransfer.files);
    });
    render();
  };

  // tus-js-client's source for one file: any range of its sealed stream, sealed from the file's bytes as they are
  // read (the same key and nonce always give the same bytes, so a resumed range is the one that was lost).
  var sealedSource = function (file, entry, aesKey) {
    return {
      openFile: function () {
        var total = files.sealedSize(entry.size);
        var readPlain = function (offset, length) {
          return file.slice(offset, offset + length).arrayBuffer().then(function (buffer) { return new Uint8Array(buffer); });
        };
        return Promise.resolve({
          size: total,
          slice: function (start, end) {
            var stop = Math.min(end, total);
            var parts = [];
            var range = files.sealRange(aesKey, entry.size, start, stop, readPlain);
            var step = function () {
              return range.next().then(function (next) {
                if (next.done) return { value: new Blob(parts), done: stop >= total };
                parts.push(next.value);
                return step();
              });
            };
            return step();
          },
          close: function () {},
        });
      },
    };
  };

  var uploadFile = function (file, entry, key, url, progress) {
    return files.fileKey(key, entry.nonce).then(function (aesKey) {
      return new Promise(function (resolve, reject) {
        new window.tus.Upload(file, {
          uploadUrl: url,
          uploadSize: files.sealedSize(entry.size),
          fileReader: sealedSource(file, entry, aesKey),
          chunkSize: UPLOAD_CHUNK_BYTES,
          retryDelays: RETRY_DELAYS_MS,
          // The upload address is a bearer secret: it is never written to the browser's storage.
          storeFingerprintForResuming: false,
          removeFingerprintOnSuccess: true,
          onProgress: progress,
          onError: reject,
          onSuccess: resolve,
        }).start();
      });
    });
  };

  // urls: the upload addresses the server answered, one per chosen file in their order.
  var uploadAll = function (urls, chosen, entries, key) {
    if (urls.length !== chosen.length) return Promise.reject(new Error('the server answered ' + urls.length + ' upload addresses'));
    var box = byId('upload-progress');
    var status = byId('upload-status');
    var bar = byId('upload-bar');
    var total = entries.reduce(function (sum, entry) { return sum + files.sealedSize(entry.size); }, 0);
    var before = 0;
    box.hidden = false;
    return chosen.reduce(function (ready, file, i) {
      return ready.then(function () {
        status.textContent = box.getAttribute('data-uploading').replace('%s', file.name);
        return uploadFile(file, entries[i], key, urls[i], function (sent) {
          bar.value = total === 0 ? 100 : Math.floor(((before + sent) / total) * 100);
        }).then(function () { before += files.sealedSize(entries[i].size); });
      });
    }, Promise.resolve()).then(function () { box.hidden = true; }, function (error) { box.hidden = true; throw error; });
  };

  var createForm = function () {
    var form = document.querySelector('form[data-create]');
    if (!form) return;
    if (canSeal) byId('sealing-hint').hidden = false;
    fileField(form);
    var textBox = form.elements.content;
    var problem = byId('create-refused');
    var busy = false;
    var refuse = function (kind, retryAfter) {
      busy = false;
      problem.textContent = form.getAttribute('data-refused-' + kind);
      problem.hidden = false;
      problem.scrollIntoView({ block: 'center' });
      // A refused form may have used its single-use token: fetch a fresh one for the next try.
      fetch('/', { credentials: 'same-origin' }).then(function (res) { return res.ok ? res.text() : ''; }).then(function (html) {
        var fresh = new DOMParser().parseFromString(html, 'text/html').querySelector('form[data-create] input[name="form_token"]');
        if (fresh) form.elements.form_token.value = fresh.value;
      }, function () { /* still offline: the next try says so again */ });
    };
    var show = function (html, key, text) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var again = doc.querySelector('form[data-create]');
      document.title = doc.title;
      document.documentElement.lang = doc.documentElement.lang;
      document.documentElement.dir = doc.documentElement.dir;
      document.body.replaceWith(document.importNode(doc.body, true));
      enhance(key);
      if (again) {
        // Refused by the server's checks: the text was sealed and never sent, so it is put back here.
        byId('content').value = text;
        document.querySelectorAll('[data-sealed-not-sent]').forEach(function (span) { span.textContent = span.getAttribute('data-kept'); });
        var alert = byId('create-error');
        if (alert) alert.scrollIntoView({ block: 'center' });
      } else {
        window.scrollTo(0, 0);
        var heading = document.querySelector('h1');
        if (heading) heading.focus();
      }
    };
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (busy) return;
      var text = textBox.value;
      if (Array.from(text).length > 10000) {
        textBox.setCustomValidity(form.getAttribute('data-too-long'));
        textBox.reportValidity();
        textBox.setCustomValidity('');
        return;
      }
      busy = true;
      problem.hidden = true;
      var body = new URLSearchParams();
      new FormData(form).forEach(function (value, name) { if (name !== 'content') body.append(name, value); });
      var key = canSeal ? envelope.newKey() : null;
      var chosen = canAttach ? attached.slice() : [];
      // DECISIONS 14: with files, the envelope carries the manifest (names, sizes, nonces) and the text, if any.
      var entries = chosen.map(entryOf);
      var sealedText = !key ? null : entries.length > 0 ? files.sealManifest(text.trim() === '' ? '' : text, entries, key) : envelope.seal(text, key);
      var sealed = key ? Promise.all([sealedText, envelope.keyCheck(key)]) : Promise.resolve(null);
      sealed.then(function (parts) {
        // Sealed: the text box is never sent; only the envelope and the proof of its key are.
        if (parts) {
          body.append('content', text.trim() === '' && entries.length === 0 ? '' : parts[0]);
          body.append('client_encrypted', 'true');
          body.append('key_check', parts[1]);
          if (entries.length > 0) body.append('files', JSON.stringify(entries.map(function (entry) { return { size: files.sealedSize(entry.size) }; })));
        } else {
          body.append('content', text);
        }
        return fetch(form.action, { method: 'POST', body: body, credentials: 'same-origin', headers: { Accept: 'text/html' } });
      }).then(function (res) {
        var page = (res.headers.get('content-type') || '').indexOf('text/html') === 0;
        if (res.status === 200 && page && entries.length > 0) {
          // The note is readable once every file is uploaded: the link is shown only then.
          return res.text().then(function (html) {
            var doc = new DOMParser().parseFromString(html, 'text/html');
            if (doc.querySelector('form[data-create]')) { show(html, null, text); return; }
            var urls = Array.prototype.map.call(doc.querySelectorAll('#vanish-uploads li[data-upload]'), function (item) { return item.getAttribute('data-upload'); });
            return uploadAll(urls, chosen, entries, key).then(function () {
              attached.length = 0;
              show(html, key, text);
            }, function () { refuse('upload'); });
          });
        }
        if (res.status === 200 && page) return res.text().then(function (html) { show(html, key, text); });
        if ((res.status === 400 || res.status === 413) && page) {
          return res.text().then(function (html) {
            if (html.indexOf('data-create') >= 0) show(html, null, text);
            else refuse('other');
          });
        }
        refuse(res.status === 429 ? 'rate' : res.status === 403 ? 'token' : 'other');
      }).catch(function () { refuse('network'); });
    });
  };

  var revealedPage = function () {
    var sealedText = document.querySelector('[data-envelope]');
    if (!sealedText) return;
    var shown = function (text, opened) {
      sealedText.textContent = text;
      sealedText.removeAttribute('data-envelope');
      sealedText.setAttribute('data-opened', opened ? 'yes' : 'no');
    };
    var openKey = validKey(location.hash.replace(/^#/, ''));
    // The messages come translated from the page (issue 20), never from this script.
    if (!openKey) { shown(sealedText.getAttribute('data-no-key'), false); return; }
    var opening = files ? files.openNote(sealedText.getAttribute('data-envelope'), openKey)
      : envelope.open(sealedText.getAttribute('data-envelope'), openKey).then(function (text) { return { text: text, files: null }; });
    opening.then(function (note) {
      shown(note.text, true);
      if (note.files) {
        if (note.text === '') sealedText.hidden = true;
        openedFiles(note.files, openKey);
      }
    }, function () {
      shown(sealedText.getAttribute('data-wrong-key'), false);
    });
  };

  // DECISIONS 14: the revealed note's files, listed from its manifest (only this browser knows the names). Each
  // downloads as it is asked for (resumed with Range when the connection breaks), opens as it streams, and goes to
  // disk through the download service worker where the browser allows it; elsewhere it is held in memory until
  // complete (docs/security.md).
  var downloadWorker = null;
  var workerFor = function () {
    if (downloadWorker) return downloadWorker;
    if (!('serviceWorker' in navigator) || !window.isSecureContext || !window.MessageChannel) return (downloadWorker = Promise.resolve(null));
    downloadWorker = navigator.serviceWorker.register('/assets/download-sw.js', { scope: '/assets/dl/' }).then(function (registration) {
      var worker = registration.active || registration.waiting || registration.installing;
      if (!worker) return null;
      if (worker.state === 'activated') return worker;
      return new Promise(function (resolve) {
        worker.addEventListener('statechange', function () {
          if (worker.state === 'activated') resolve(worker);
          if (worker.state === 'redundant') resolve(null);
        });
      });
    }).catch(function () { return null; });
    return downloadWorker;
  };

  // The sealed bytes of one download as a stream; a broken connection resumes from the bytes received.
  var sealedDownload = function (url, total) {
    var received = 0;
    var tries = 0;
    var reader = null;
    var fetchFrom = function () {
      var headers = received > 0 ? { Range: 'bytes=' + received + '-' } : {};
      return fetch(url, { headers: headers, credentials: 'same-origin', cache: 'no-store', redirect: 'error' }).then(function (res) {
        if (res.status !== (received > 0 ? 206 : 200)) {
          var refused = new Error('HTTP ' + res.status);
          refused.final = true;
          throw refused;
        }
        reader = res.body.getReader();
      });
    };
    return new ReadableStream({
      pull: function (controller) {
        var step = function () {
          var at = received;
          return (reader ? Promise.resolve() : fetchFrom()).then(function () { return reader.read(); }).then(function (next) {
            if (!next.done) {
              received += next.value.length;
              controller.enqueue(next.value);
              return;
            }
            reader = null;
            if (received >= total) { controller.close(); return; }
            if (received === at) tries += 1;
            if (tries > 5) throw new Error('the download stops at byte ' + received);
            return step();
          }, function (error) {
            reader = null;
            tries += 1;
            if (error.final || tries > 5) throw error;
            return new Promise(function (resolve) { setTimeout(resolve, 1000 * tries); }).then(step);
          });
        };
        return step();
      },
    });
  };

  var saveThroughWorker = function (worker, stream, name, size) {
    var id = Array.from(crypto.getRandomValues(new Uint8Array(16)), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
    var channel = new MessageChannel();
    var reader = stream.getReader();
    return new Promise(function (resolve, reject) {
      channel.port1.onmessage = function (event) {
        if (event.data === 'ready') {
          // A navigation the worker answers as an attachment: the browser saves it, and this page stays.
          var link = document.createElement('a');
          link.href = '/assets/dl/' + id;
          document.body.appendChild(link);
          link.click();
          link.remove();
        } else if (event.data === 'pull') {
          reader.read().then(function (next) {
            if (next.done) {
              channel.port1.postMessage({ done: true });
              resolve();
              return;
            }
            var chunk = next.value.byteOffset === 0 && next.value.byteLength === next.value.buffer.byteLength ? next.value : next.value.slice();
            channel.port1.postMessage({ chunk: chunk }, [chunk.buffer]);
          }, function (error) {
            channel.port1.postMessage({ error: String(error && error.message) });
            reject(error);
          });
        } else if (event.data === 'cancel') {
          reader.cancel();
          reject(new Error('cancelled'));
        }
      };
      worker.postMessage({ type: 'vanish-download', id: id, name: name, size: size }, [channel.port2]);
    });
  };

  var saveInMemory = function (stream, name) {
    var chunks = [];
    var reader = stream.getReader();
    var step = function () {
      return reader.read().then(function (next) {
        if (!next.done) { chunks.push(next.value); return step(); }
        var url = URL.createObjectURL(new Blob(chunks, { type: 'application/octet-stream' }));
        chunks = [];
        var link = document.createElement('a');
        link.href = url;
        link.download = name;
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
      });
    };
    return step();
  };

  var openedFiles = function (entries, key) {
    var section = byId('files-section');
    var offered = document.querySelectorAll('#vanish-files li[data-download]');
    if (!section) return;
    var server = byId('vanish-files');
    if (server) server.hidden = true;
    section.hidden = false;
    var list = byId('files-opened');
    if (offered.length !== entries.length) {
      var missing = document.createElement('li');
      missing.className = 'error';
      missing.textContent = section.getAttribute('data-missing');
      list.appendChild(missing);
      return;
    }
    workerFor().then(function (worker) { byId('files-memory').hidden = Boolean(worker); });
    entries.forEach(function (entry, i) {
      var url = offered[i].getAttribute('data-download');
      var item = document.createElement('li');
      var name = document.createElement('span');
      name.className = 'name';
      name.textContent = entry.name;
      name.setAttribute('dir', 'auto');
      var size = document.createElement('span');
      size.className = 'size';
      size.textContent = humanSize(entry.size);
      var button = document.createElement('button');
      button.type = 'button';
      button.textContent = section.getAttribute('data-save');
      button.setAttribute('aria-label', section.getAttribute('data-save') + ': ' + entry.name);
      var status = document.createElement('span');
      status.setAttribute('role', 'status');
      var sane = Number(offered[i].getAttribute('data-size')) === files.sealedSize(entry.size);
      button.addEventListener('click', function () {
        button.disabled = true;
        status.className = '';
        status.textContent = section.getAttribute('data-saving');
        var plain = sealedDownload(url, files.sealedSize(entry.size)).pipeThrough(files.openTransform(key, entry.nonce, entry.size));
        workerFor().then(function (worker) {
          return worker ? saveThroughWorker(worker, plain, entry.name, entry.size) : saveInMemory(plain, entry.name);
        }).then(function () {
          status.textContent = section.getAttribute('data-saved');
          item.setAttribute('data-saved', '');
        }, function (error) {
          button.disabled = false;
          status.className = 'error';
          status.textContent = section.getAttribute('data-failed') + (error && error.code ? ' (' + error.code + ')' : '');
          item.setAttribute('data-failed', error && error.code ? error.code : 'network');
        });
      });
      if (!sane) {
        button.disabled = true;
        status.className = 'error';
        status.textContent = section.getAttribute('data-missing');
      }
      item.appendChild(name);
      item.appendChild(size);
      item.appendChild(button);
      item.appendChild(status);
      list.appendChild(item);
    });
  };

  // DECISIONS 15: the requests' pages (requests.js) attach, seal, upload and save an answer's files with this same
  // code: the sender's form offers the picker, the inbox's opened answer the files to save.
  window.vanishFilesUi = {
    canAttach: canAttach,
    field: fileField,
    chosen: function () { return canAttach ? attached.slice() : []; },
    clear: function () { attached.length = 0; },
    entryOf: entryOf,
    uploadAll: uploadAll,
    openedFiles: openedFiles,
  };

  var enhance = function (createdKey) {
    copyButtons();
    settings();
    expiryFields();
    revealForm();
    createForm();
    createdPage(createdKey);
    revealedPage();
    // The receipt wallet (DECISIONS 16) lives in its own script; it enhances the page that was just shown.
    if (window.vanishWallet) window.vanishWallet.enhance();
  };
  enhance(null);
})();
`;

/**
 * The QR code of a link that only the browser knows (a note sealed there: the server never has its key),
 * drawn by the same library the server uses for its own QR codes (qrcode's core and SVG renderer). Its
 * CommonJS modules are wrapped here into one script, the way a bundler would, so the build needs no bundler
 * and the served bytes are the library's own.
 */
function bundleQrCode(): string {
  const modules: Array<{ source: string; deps: Record<string, number> }> = [];
  const ids = new Map<string, number>();
  const add = (file: string): number => {
    const known = ids.get(file);
    if (known !== undefined) return known;
    const id = modules.length;
    const module = { source: readFileSync(file, 'utf8'), deps: {} as Record<string, number> };
    ids.set(file, id);
    modules.push(module);
    for (const [, request] of module.source.matchAll(/require\('([^']+)'\)/g)) {
      const target = request!.startsWith('.') ? join(dirname(file), request!) : request!;
      module.deps[request!] = add(require.resolve(target, { paths: [dirname(file)] }));
    }
    return id;
  };
  const core = add(require.resolve('qrcode/lib/core/qrcode'));
  const svg = add(require.resolve('qrcode/lib/renderer/svg-tag'));
  const definitions = modules.map((module) => `function (module, exports, require) {\n${module.source}\n}`).join(',\n');
  return `(function () {
var definitions = [
${definitions}
];
var dependencies = ${JSON.stringify(modules.map((module) => module.deps))};
var loaded = [];
function load(id) {
  if (loaded[id]) return loaded[id].exports;
  var module = { exports: {} };
  loaded[id] = module;
  definitions[id](module, module.exports, function (name) { return load(dependencies[id][name]); });
  return module.exports;
}
var core = load(${core});
var svg = load(${svg});
window.vanishQr = { svg: function (text) { return svg.render(core.create(text, { errorCorrectionLevel: 'M' }), { margin: 1 }); } };
})();
`;
}

export const QR_JS = bundleQrCode();

export { WALLET_JS } from './wallet-script';
import { WALLET_JS } from './wallet-script';

/** tus-js-client's own browser build, byte for byte (it defines `window.tus`): the page's resumable uploads. */
export const TUS_JS = readFileSync(join(dirname(require.resolve('tus-js-client/package.json')), 'dist', 'tus.min.js'), 'utf8');

/**
 * DECISIONS 14: the download service worker (scope /assets/dl/). The revealed page opens a file as it downloads
 * and hands the plaintext to this worker a chunk at a time over a MessageChannel; the worker answers a navigation
 * to /assets/dl/<random id> with that stream as an attachment, so the browser writes it to disk as it comes and
 * no whole file is held in memory. It fetches nothing, and the id is random: no name or byte goes to the network.
 */
export const DOWNLOAD_SW_JS = `'use strict';
var pending = new Map();
self.addEventListener('install', function () { self.skipWaiting(); });
self.addEventListener('activate', function (event) { event.waitUntil(self.clients.claim()); });
self.addEventListener('message', function (event) {
  var data = event.data;
  var port = event.ports && event.ports[0];
  if (!data || data.type !== 'vanish-download' || !port || !/^[0-9a-f]{32}$/.test(data.id)) return;
  pending.set(data.id, { port: port, name: String(data.name), size: Number(data.size) });
  port.postMessage('ready');
});
self.addEventListener('fetch', function (event) {
  var match = /^\\/assets\\/dl\\/([0-9a-f]{32})$/.exec(new URL(event.request.url).pathname);
  if (!match) return;
  var download = pending.get(match[1]);
  if (!download) { event.respondWith(new Response('', { status: 404 })); return; }
  pending.delete(match[1]);
  var port = download.port;
  var waiting = null;
  port.onmessage = function (message) { var answer = waiting; waiting = null; if (answer) answer(message.data); };
  var stream = new ReadableStream({
    pull: function (controller) {
      return new Promise(function (resolve) { waiting = resolve; port.postMessage('pull'); }).then(function (data) {
        if (data.error) controller.error(new Error(data.error));
        else if (data.done) controller.close();
        else controller.enqueue(data.chunk);
      });
    },
    cancel: function () { port.postMessage('cancel'); },
  }, { highWaterMark: 0 });
  var encoded = encodeURIComponent(download.name).replace(/['()*]/g, function (c) { return '%' + c.charCodeAt(0).toString(16).toUpperCase(); });
  event.respondWith(new Response(stream, { headers: {
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': "attachment; filename*=UTF-8''" + encoded,
    'Content-Length': String(download.size),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  } }));
});
`;

export const ENVELOPE_JS = readFileSync(require.resolve('@vanish/envelope'), 'utf8');

/** DECISIONS 14: the file format, the same bytes the CLI ships as lib/file-stream.js (docs/file-format.md). */
export const FILE_STREAM_JS = readFileSync(join(dirname(require.resolve('@vanish/envelope')), 'file-stream.js'), 'utf8');

function integrity(text: string): string {
  return `sha384-${createHash('sha384').update(text, 'utf8').digest('base64')}`;
}

/** The SRI value of each asset, for the tags that load them. */
export const ASSET_INTEGRITY = {
  css: integrity(APP_CSS),
  app: integrity(APP_JS),
  envelope: integrity(ENVELOPE_JS),
  fileStream: integrity(FILE_STREAM_JS),
  qr: integrity(QR_JS),
  wallet: integrity(WALLET_JS),
  tus: integrity(TUS_JS),
} as const;

/**
 * Every script and stylesheet a page may load, by the path it is served at: what the release manifest
 * lists (DECISIONS 17) and what the notes service serves under /assets.
 */
export const PAGE_ASSETS: ReadonlyArray<{ path: string; type: 'css' | 'js'; body: string; cacheControl?: string }> = [
  { path: '/assets/app.css', type: 'css', body: APP_CSS },
  { path: '/assets/app.js', type: 'js', body: APP_JS },
  { path: '/assets/envelope.js', type: 'js', body: ENVELOPE_JS },
  { path: '/assets/file-stream.js', type: 'js', body: FILE_STREAM_JS },
  { path: '/assets/qr.js', type: 'js', body: QR_JS },
  { path: '/assets/tus.js', type: 'js', body: TUS_JS },
  { path: '/assets/wallet.js', type: 'js', body: WALLET_JS },
  // The download worker's scope is /assets/dl/ (under its own folder): it controls no page. A browser
  // checks a worker's script for updates itself, so it is never served from a cache.
  { path: '/assets/download-sw.js', type: 'js', body: DOWNLOAD_SW_JS, cacheControl: 'no-cache' },
];
