import { request } from 'node:http';

/** A raw form POST with headers a browser would never let a page set, as an attacker's tool would send. */
export function rawPost(base: string, path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const body = new URLSearchParams(form).toString();
  return new Promise((done, fail) => {
    const req = request(`${base}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body), ...headers },
    }, (res) => {
      let text = '';
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => done({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** A fresh single-use reveal token, read off the note page as a browser would get it. */
export async function formToken(base: string, uuid: string): Promise<string> {
  const html = await (await fetch(`${base}/${uuid}`)).text();
  const match = /name="form_token" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('the note page has no form token');
  return match[1]!;
}
