/**
 * The receipt wallet (DECISIONS 16): kept receipts live in this browser's localStorage (key
 * `vanish.receipts`, a list of `{id, kept_at, last}`, `last` the latest signed receipt read), never on the server.
 * An ended receipt no longer changes: it is shown from `last` without asking again (each receipt read counts
 * against the gateway's view limit), and a receipt that cannot be read now falls back to `last`. The created page's "Keep this receipt"
 * adds one; `/receipts` reads each one's signed JSON (the same GET a receipt link allows), shows its state,
 * ends one or all after a confirmation (through the receipt's own confirmation page and its single-use form
 * token), and exports the signed receipts as one canonical JSON file (docs/receipts.md, "The wallet's
 * export"). Every message comes translated from the page's data attributes, never from this script.
 */
export const WALLET_JS = `
(function () {
  var STORE = 'vanish.receipts';
  var ID = /^[A-Za-z0-9_-]{43}$/;
  var byId = function (id) { return document.getElementById(id); };

  var read = function () {
    try {
      var list = JSON.parse(localStorage.getItem(STORE) || '[]');
      return Array.isArray(list) ? list.filter(function (entry) { return entry && ID.test(entry.id); }) : [];
    } catch (e) { return []; }
  };
  var write = function (list) { localStorage.setItem(STORE, JSON.stringify(list)); };

  // RFC 8785 for what receipts hold (strings, integers, booleans, null, arrays, objects): keys sorted by
  // UTF-16 code units, no whitespace. The same bytes the service signs.
  var canonical = function (value) {
    if (value === null || typeof value !== 'object') return JSON.stringify(value);
    if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
    return '{' + Object.keys(value).sort().map(function (key) { return JSON.stringify(key) + ':' + canonical(value[key]); }).join(',') + '}';
  };

  var keep = function () {
    var box = byId('keep-receipt');
    if (!box || box.hasAttribute('data-ready')) return;
    box.setAttribute('data-ready', '');
    var id = (box.getAttribute('data-receipt-url') || '').split('/').pop();
    if (!ID.test(id)) return;
    box.hidden = false;
    var kept = function () { byId('keep-receipt-button').hidden = true; byId('keep-receipt-kept').hidden = false; };
    try { if (read().some(function (entry) { return entry.id === id; })) kept(); } catch (e) { /* shown as not kept */ }
    byId('keep-receipt-button').addEventListener('click', function () {
      try {
        var list = read().filter(function (entry) { return entry.id !== id; });
        list.push({ id: id, kept_at: new Date().toISOString() });
        write(list);
        kept();
      } catch (e) {
        byId('keep-receipt-failed').hidden = false;
      }
    });
  };

  // What the list says of a receipt: ended, read, previewed by a bot, waiting (or a state the service names).
  var stateOf = function (receipt) {
    if (receipt.status === 'ended') return 'ended';
    if (receipt.status !== 'active') return receipt.status;
    if (receipt.views_used > 0) return 'read';
    var previewed = (receipt.timeline || []).some(function (entry) { return entry.event === 'page_fetch' && entry.client === 'link_preview_bot'; });
    return previewed ? 'previewed' : 'waiting';
  };

  var fromCopy = function (entry) {
    var last = entry.last;
    return last && last.receipt && last.signature ? { id: entry.id, state: stateOf(last.receipt), signed: last } : { id: entry.id, state: 'unreachable' };
  };
  var remember = function (id, signed) {
    try {
      write(read().map(function (entry) { return entry.id === id ? { id: entry.id, kept_at: entry.kept_at, last: signed } : entry; }));
    } catch (e) { /* storage full or off: shown all the same */ }
  };
  var fetchReceipt = function (entry, again) {
    var id = entry.id;
    if (!again && entry.last && entry.last.receipt && entry.last.receipt.status === 'ended') return Promise.resolve(fromCopy(entry));
    return fetch('/api/receipt/' + id + '.php', { credentials: 'same-origin', headers: { Accept: 'application/json' } }).then(function (res) {
      if (res.status === 404) return { id: id, state: 'gone', signed: entry.last && entry.last.receipt ? entry.last : undefined };
      if (!res.ok) return fromCopy(entry);
      return res.json().then(function (answer) {
        var signed = { receipt: answer.receipt, signature: answer.signature };
        remember(id, signed);
        return { id: id, state: stateOf(signed.receipt), signed: signed };
      });
    }, function () { return fromCopy(entry); });
  };

  // Ending goes through the receipt's own confirmation page: its single-use token, the same-origin POST.
  var endNote = function (id) {
    return fetch('/r/' + id + '?end=confirm', { credentials: 'same-origin' }).then(function (res) { return res.text(); }).then(function (html) {
      var input = new DOMParser().parseFromString(html, 'text/html').querySelector('#confirm-end input[name="form_token"]');
      if (!input) return null;
      var body = new URLSearchParams({ form_token: input.value });
      return fetch('/r/' + id, { method: 'POST', body: body, credentials: 'same-origin', redirect: 'manual' });
    });
  };

  var wallet = function () {
    var root = byId('wallet');
    if (!root || root.hasAttribute('data-ready')) return;
    root.setAttribute('data-ready', '');
    root.hidden = false;
    var say = function (name) { return root.getAttribute('data-' + name) || name; };
    var dates = new Intl.DateTimeFormat(document.documentElement.lang, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
    var numbers = new Intl.NumberFormat(document.documentElement.lang);
    var rows = byId('wallet-rows');
    var problem = byId('wallet-problem');
    var shown = [];
    var endable = function (item) { return Boolean(item.signed) && item.state !== 'ended' && item.state !== 'gone'; };

    var cell = function (row, text) { var td = document.createElement('td'); td.textContent = text; row.appendChild(td); return td; };
    var button = function (parent, text, kind, onClick) {
      var b = document.createElement('button');
      b.type = 'button';
      b.className = kind;
      b.textContent = text;
      b.addEventListener('click', onClick);
      parent.appendChild(b);
      return b;
    };
    var render = function () {
      rows.textContent = '';
      byId('wallet-empty').hidden = shown.length > 0;
      byId('wallet-table').hidden = shown.length === 0;
      byId('wallet-end-all').disabled = !shown.some(endable);
      byId('wallet-export').disabled = !shown.some(function (item) { return item.signed; });
      shown.forEach(function (item) {
        var row = document.createElement('tr');
        row.setAttribute('data-state', item.state);
        var receipt = item.signed && item.signed.receipt;
        var created = receipt ? new Date(receipt.created_at.replace(' ', 'T') + 'Z') : null;
        cell(row, created && !isNaN(created) ? dates.format(created) + ' UTC' : '');
        var state = cell(row, say('state-' + item.state));
        state.className = 'state';
        cell(row, receipt ? numbers.format(receipt.views_used) + ' / ' + numbers.format(receipt.max_views) : '');
        var actions = cell(row, '');
        var open = document.createElement('a');
        open.href = '/r/' + item.id;
        open.textContent = say('open');
        actions.appendChild(open);
        actions.appendChild(document.createElement('br'));
        if (endable(item)) {
          button(actions, say('end'), 'danger', function () {
            if (!window.confirm(say('confirm-end'))) return;
            endAll([item]);
          });
        }
        button(actions, say('forget'), 'secondary', function () {
          write(read().filter(function (entry) { return entry.id !== item.id; }));
          shown = shown.filter(function (other) { return other !== item; });
          render();
        });
        rows.appendChild(row);
      });
      root.setAttribute('data-loaded', String(shown.length));
    };
    var load = function (again) {
      var kept = read();
      return Promise.all(kept.map(function (entry) { return fetchReceipt(entry, again && again.indexOf(entry.id) >= 0); })).then(function (items) { shown = items; render(); });
    };
    var endAll = function (items) {
      problem.hidden = true;
      var open = items.filter(endable);
      return open.reduce(function (done, item) {
        return done.then(function () {
          return endNote(item.id).then(function (res) { if (!res) problem.hidden = false; }, function () { problem.hidden = false; });
        });
      }, Promise.resolve()).then(function () { return load(open.map(function (item) { return item.id; })); });
    };
    byId('wallet-end-all').addEventListener('click', function () {
      if (!window.confirm(say('confirm-end-all'))) return;
      endAll(shown);
    });
    byId('wallet-export').addEventListener('click', function () {
      var signed = shown.filter(function (item) { return item.signed; }).map(function (item) { return item.signed; });
      var text = canonical({ format: 'vanish-receipts/1', receipts: signed });
      var link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      link.download = 'vanish-receipts-' + new Date().toISOString().slice(0, 10) + '.json';
      document.body.appendChild(link);
      link.click();
      link.remove();
    });
    load([]);
  };

  window.vanishWallet = { enhance: function () { keep(); wallet(); } };
})();
`;
