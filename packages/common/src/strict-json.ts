/**
 * JSON.parse, refusing what JSON.parse lets through: a key twice in one object, at any depth.
 * JSON.parse keeps the last copy; other readers (a viewer, a log pipeline, another language's
 * parser) keep the first, so a signed document with a repeated key could verify while showing
 * something else. Keys are compared unescaped, so `"a"` and `"\u0061"` are the same key. The error
 * names the key only, never the text (which may be a receipt or a log line).
 */
export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  // JSON.parse accepted the text, so a scan only has to tell keys from values: a string followed by
  // a colon is a key of the innermost open object.
  const open: Array<Set<string> | undefined> = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '{') open.push(new Set());
    else if (char === '[') open.push(undefined);
    else if (char === '}' || char === ']') open.pop();
    else if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (text[next] === ' ' || text[next] === '\t' || text[next] === '\n' || text[next] === '\r') next += 1;
      const keys = open.at(-1);
      if (text[next] === ':' && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) throw new SyntaxError(`duplicate key ${JSON.stringify(key)}`);
        keys.add(key);
      }
      i = end;
    }
    i += 1;
  }
  return value;
}
