/**
 * JSON.parse, refusing what JSON.parse lets through: a key twice in one object (JSON.parse keeps
 * the last; many log pipelines keep the first or drop the line). Keys are compared unescaped, so
 * `"a"` and `"\u0061"` are the same key.
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
        if (keys.has(key)) throw new SyntaxError(`duplicate key ${JSON.stringify(key)} in ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`);
        keys.add(key);
      }
      i = end;
    }
    i += 1;
  }
  return value;
}

/**
 * Every line of a process's output as a strictly parsed JSON object; throws naming the first line
 * that is not one (bare text, a broken line, a duplicate key). Empty lines count as bare text too,
 * except the nothing after the final newline.
 */
export function parseJsonLines(output: string): Array<Record<string, unknown>> {
  const lines = output.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, index) => {
    let value: unknown;
    try {
      value = parseStrictJson(line);
    } catch (err) {
      throw new Error(`line ${index + 1} is not one strict JSON object (${(err as Error).message}): ${JSON.stringify(line)}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new Error(`line ${index + 1} is JSON but not an object: ${JSON.stringify(line)}`);
    }
    return value as Record<string, unknown>;
  });
}
