import { ConfigError } from '@vanish/common';
import { createNotesService } from '../compose';
import { loadNotesConfig } from '../config';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The note uuid in what an abuse report quotes: the link (`https://host/<uuid>`, maybe with a
 * trailing slash, query or fragment) or the bare uuid. Null when it holds no note identifier.
 */
export function parseTakedownTarget(input: string): string | null {
  let text = input.trim();
  if (/^https?:\/\//i.test(text)) {
    try {
      text = new URL(text).pathname;
    } catch {
      return null;
    }
  }
  const last = text.split(/[?#]/)[0]!.split('/').filter((part) => part !== '').pop() ?? '';
  const uuid = last.toLowerCase();
  return UUID.test(uuid) ? uuid : null;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `npm run takedown -- <link-or-uuid>` (or the link on stdin, so it stays out of the process list
 * and shell history): destroys the note with the notes service's own configuration (the same
 * environment as main.ts). The row is deleted and `note.destroyed` (reason `takedown`) is written
 * to the outbox in one transaction; the running notes service relays it. Nothing here prints or
 * logs the uuid. Exit codes: 0 destroyed, 1 no such live note, 2 not a note link, 3 failure.
 */
async function main(): Promise<number> {
  const input = process.argv[2] ?? (await readStdin());
  const uuid = parseTakedownTarget(input);
  if (!uuid) {
    process.stderr.write('takedown: give the note link or uuid as the argument or on stdin\n');
    return 2;
  }
  const config = loadNotesConfig(process.env);
  const service = await createNotesService(config);
  try {
    const destroyed = await service.notes.takedown(uuid);
    process.stdout.write(destroyed ? 'takedown: the note was destroyed\n' : 'takedown: no such live note (never existed, already read, expired or taken down)\n');
    return destroyed ? 0 : 1;
  } finally {
    await service.knex.destroy();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`takedown failed: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
      process.exit(3);
    },
  );
}
