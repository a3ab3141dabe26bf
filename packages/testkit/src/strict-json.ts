import { parseStrictJson as parseStrict } from '@vanish/common';

/**
 * @vanish/common's strict JSON.parse (a key twice in one object is refused), with the text quoted in
 * the error so a failing test shows the line it could not read.
 */
export function parseStrictJson(text: string): unknown {
  try {
    return parseStrict(text);
  } catch (err) {
    if (!(err instanceof SyntaxError) || !err.message.startsWith('duplicate key')) throw err;
    throw new SyntaxError(`${err.message} in ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`);
  }
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
