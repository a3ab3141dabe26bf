/**
 * The pages' only CSS and script, served from /assets by the notes service itself (no third
 * party, CSP `'self'`). Kept as strings so the build ships them without a copy step.
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
})();
`;
