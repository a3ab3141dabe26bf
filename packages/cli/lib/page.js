'use strict';
/*
 * What `vanish open` reads of the web pages (DECISIONS 13): the note page's reveal form, and the revealed page's
 * envelope. Only the few elements the page's own script reads are looked at (the form's fields, #note-content and
 * its data-envelope, #reveal-error), by name and id, so the layout around them may change freely.
 */

const NAMED = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}

/** The attributes of a start tag's inside (`name="value" other='x' flag`), names lowercased, values decoded. */
function attributes(inside) {
  const found = {};
  const pattern = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (let match = pattern.exec(inside); match; match = pattern.exec(inside)) {
    const name = match[1].toLowerCase();
    if (!(name in found)) found[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return found;
}

function startTags(html, tagName) {
  const tags = [];
  const pattern = new RegExp(`<${tagName}\\b([^>]*)>`, 'gi');
  for (let match = pattern.exec(html); match; match = pattern.exec(html)) tags.push({ index: match.index, end: pattern.lastIndex, attrs: attributes(match[1]) });
  return tags;
}

/** The text inside the element with this id (tags removed, entities decoded), or null. */
function elementById(html, id) {
  const pattern = /<([a-z][a-z0-9]*)\b([^>]*)>/gi;
  for (let match = pattern.exec(html); match; match = pattern.exec(html)) {
    const attrs = attributes(match[2]);
    if (attrs.id !== id) continue;
    const close = html.toLowerCase().indexOf(`</${match[1].toLowerCase()}>`, pattern.lastIndex);
    const inner = close === -1 ? '' : html.slice(pattern.lastIndex, close);
    return { attrs, inner };
  }
  return null;
}

function textOf(inner) {
  return decodeEntities(inner.replace(/<[^>]*>/g, '')).replace(/\s+/g, ' ').trim();
}

/**
 * The note page's reveal form: its single-use token, whether it takes a key proof (a note sealed on its
 * writer's machine) and a passcode. Null when the page has no such form.
 */
function revealForm(html) {
  for (const form of startTags(html, 'form')) {
    if ((form.attrs.method ?? 'get').toLowerCase() !== 'post') continue;
    const close = html.toLowerCase().indexOf('</form>', form.end);
    const body = html.slice(form.end, close === -1 ? html.length : close);
    const fields = new Map(startTags(body, 'input').filter((input) => input.attrs.name !== undefined).map((input) => [input.attrs.name, input.attrs.value ?? '']));
    const token = fields.get('form_token');
    if (!token) continue;
    // DECISIONS 14: a note with files says how many on its reveal form, so that nothing is consumed without --out.
    const files = /^\d{1,4}$/.test(form.attrs['data-files'] ?? '') ? Number(form.attrs['data-files']) : 0;
    return { formToken: token, takesKeyCheck: fields.has('key_check'), takesPasscode: fields.has('passcode'), files };
  }
  return null;
}

/** The revealed page's note: the writer's envelope (to open here), or the text the server opened. Null when absent. */
function revealedNote(html) {
  const element = elementById(html, 'note-content');
  if (!element) return null;
  if (element.attrs['data-envelope'] !== undefined) return { envelope: element.attrs['data-envelope'] };
  return { text: decodeEntities(element.inner) };
}

/**
 * The revealed page's download addresses (DECISIONS 14), in the manifest's order:
 * `<ol id="vanish-files" data-count="N"><li data-download="URL" data-size="BYTES"></li>…</ol>`. Null when absent.
 */
function fileDownloads(html) {
  const list = elementById(html, 'vanish-files');
  if (!list) return null;
  const items = startTags(list.inner, 'li').map((item) => ({
    url: item.attrs['data-download'] ?? '',
    size: /^\d{1,16}$/.test(item.attrs['data-size'] ?? '') ? Number(item.attrs['data-size']) : null,
  }));
  const count = list.attrs['data-count'];
  if (count !== undefined && Number(count) !== items.length) return items.slice(0, 0);
  return items;
}

/** Whether the note page says that the note's files are still being uploaded (it cannot be read yet). */
function uploadIncomplete(html) {
  return elementById(html, 'upload-pending') !== null || elementById(html, 'upload-incomplete') !== null;
}

/** What the page says went wrong (#reveal-error), or null. */
function pageError(html) {
  const element = elementById(html, 'reveal-error');
  return element ? textOf(element.inner) : null;
}

/** DECISIONS 16: what a note page that is not open yet says (#note-opens), or null. */
function notOpenYet(html) {
  const element = elementById(html, 'note-opens');
  return element ? textOf(element.inner) : null;
}

module.exports = { decodeEntities, attributes, revealForm, revealedNote, fileDownloads, uploadIncomplete, pageError, notOpenYet };
