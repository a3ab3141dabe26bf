import { escapeHtml, html, raw } from './html';

describe('html', () => {
  it('when a value holds markup, then it is escaped', () => {
    expect(html`<p>${'<img src=x onerror=alert(1)>'}</p>`.value).toBe('<p>&lt;img src=x onerror=alert(1)&gt;</p>');
    expect(escapeHtml(`"'\`&`)).toBe('&quot;&#39;&#96;&amp;');
  });

  it('when fragments are nested or marked raw, then they are kept as they are', () => {
    const inner = html`<b>${'a&b'}</b>`;
    expect(html`<div>${inner}${[raw('<i>x</i>'), null, false, 3]}</div>`.value).toBe('<div><b>a&amp;b</b><i>x</i>3</div>');
  });
});
