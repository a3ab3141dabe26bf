import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, EnvReader, type Env } from '@vanish/common';
import { parseDatabaseUrl } from '@vanish/database';
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

/** Where an operator command looks for the notes database, said the way the operator set it. */
export interface NotesDatabaseTarget {
  /** e.g. `the notes database /srv/vanish/data/notes.db (DATA_DIR=/srv/vanish/data)`; never a password. */
  described: string;
  /** The SQLite file, when the database is one; null for MySQL. */
  sqliteFile: string | null;
}

/**
 * The notes database the service's own configuration names (DATABASE_URL, else notes.db in DATA_DIR),
 * read without loading the rest of the configuration: loading it first would generate keys into an
 * empty folder, and opening SQLite would create an empty database there.
 */
export function notesDatabaseTarget(env: Env): NotesDatabaseTarget {
  const dataDir = resolve(env.DATA_DIR ?? './data');
  const given = new EnvReader(env).str('DATABASE_URL');
  const url = given ?? `sqlite:${resolve(dataDir, 'notes.db')}`;
  let location;
  try {
    location = parseDatabaseUrl(url, 'notes');
  } catch {
    throw new OperatorCommandRefusal('DATABASE_URL is not a database URL (sqlite:PATH or mysql://…)');
  }
  if (location.dialect === 'sqlite') {
    const source = given === undefined ? `DATA_DIR=${dataDir}` : `DATABASE_URL=sqlite:${location.filename}`;
    return { described: `the notes database ${location.filename} (${source})`, sqliteFile: location.filename };
  }
  return { described: `the notes database ${location.database} at ${location.host}:${location.port} (DATABASE_URL=mysql://${location.user}@${location.host}:${location.port}/${location.database})`, sqliteFile: null };
}

/** Refusals an operator can act on: printed as they are (they name no note and no secret). */
export class OperatorCommandRefusal extends Error {}

/**
 * What a failure may print: our own refusals and configuration problems as they are; anything else (a
 * database error, whose message quotes the SQL with its bound values, the note's lookup hash among them)
 * only by its name and code. The lookup hash is derived from the note's bearer id: a secret too.
 */
export function describeFailure(err: unknown): string {
  if (err instanceof OperatorCommandRefusal || err instanceof ConfigError) return err.message;
  if (!(err instanceof Error)) return 'an unexpected failure';
  const code = (err as { code?: unknown }).code;
  return `${err.name}${typeof code === 'string' ? ` (${code})` : ''}; run it again with the server's own DATA_DIR or DATABASE_URL`;
}

/**
 * `npm run takedown -- <link-or-uuid>` (or the link on stdin, so it stays out of the process list
 * and shell history): destroys the note with the notes service's own configuration (the same
 * environment as main.ts). It refuses, creating nothing, when that configuration names no notes
 * database (a folder other than the server's DATA_DIR), and says which one it looked at. The row is
 * deleted and `note.destroyed` (reason `takedown`) is written to the outbox in one transaction; the
 * running notes service relays it. The note's files (DECISIONS 14) are deleted from the store before it exits. Nothing here prints or logs the uuid or anything derived from it.
 * Exit codes: 0 destroyed, 1 no such live note, 2 not a note link, 3 failure (no notes database included).
 */
async function main(): Promise<number> {
  const input = process.argv[2] ?? (await readStdin());
  const uuid = parseTakedownTarget(input);
  if (!uuid) {
    process.stderr.write('takedown: give the note link or uuid as the argument or on stdin\n');
    return 2;
  }
  const target = notesDatabaseTarget(process.env);
  if (target.sqliteFile !== null && !existsSync(target.sqliteFile)) {
    throw new OperatorCommandRefusal(`${target.described} does not exist. Run takedown with the server's own DATA_DIR or DATABASE_URL; nothing was created.`);
  }
  const config = loadNotesConfig(process.env);
  const service = await createNotesService(config);
  try {
    if (!(await service.knex.schema.hasTable('notes'))) {
      throw new OperatorCommandRefusal(`${target.described} holds no notes table. Run takedown with the server's own DATA_DIR or DATABASE_URL.`);
    }
    const destroyed = await service.notes.takedown(uuid);
    // DECISIONS 14: its files go with it, now (no reveal holds them: a takedown is no download window).
    if (destroyed) await service.fileSweeper.reapEnded();
    process.stdout.write(destroyed ? 'takedown: the note was destroyed\n' : 'takedown: no such live note (never existed, already read, expired or taken down)\n');
    return destroyed ? 0 : 1;
  } finally {
    await service.knex.destroy();
    await service.files.storage.close();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`takedown failed: ${describeFailure(err)}\n`);
      process.exit(3);
    },
  );
}
