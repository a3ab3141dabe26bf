// docs/configuration.md cannot drift from the code. The variables the code reads are found twice:
// statically (configuration-reads.ts: every variable-shaped name in the files that read an environment)
// and by running every program's config loader over a recording environment. The reference must list
// exactly those variables, each under exactly the programs that read it, with every default the code
// falls back to; its lists of variables without a NAME_FILE form and of those the all-in-one sets per
// service must be the code's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PER_SERVICE } from '../../services/all-in-one/src/config';
import { ROOT, PROGRAMS, isStatable, namesInCode, readsOfEveryProgram, type Program, type Reads } from './configuration-reads';

interface Row { name: string; readBy: string[]; defaults: string; line: number }

const DOC = 'docs/configuration.md';

function rowsOf(markdown: string): Row[] {
  const rows: Row[] = [];
  markdown.split('\n').forEach((text, index) => {
    const cells = text.split('|').slice(1, -1).map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? '')?.[1];
    if (cells.length !== 4 || name === undefined) return;
    rows.push({ name, readBy: cells[1]!.split(',').map((p) => p.trim()), defaults: cells[2]!, line: index + 1 });
  });
  return rows;
}

/** The backticked names after an HTML comment marker, up to the end of that sentence. */
function listAfter(markdown: string, marker: string): string[] {
  const start = markdown.indexOf(`<!-- ${marker} -->`);
  if (start < 0) throw new Error(`${DOC} has no <!-- ${marker} --> list`);
  const rest = markdown.slice(start);
  const sentence = rest.slice(0, rest.search(/\.(\s|$)/));
  return [...sentence.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!).sort();
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

/** The value as a whole word of the text (`10` is not in `100`). */
function mentions(text: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^0-9A-Za-z])${escaped}($|[^0-9A-Za-z])`).test(text);
}

describe('docs/configuration.md against the code', () => {
  let doc: string;
  let rows: Row[];
  let reads: Reads;
  let readByAnyone: Set<string>;

  beforeAll(async () => {
    doc = readFileSync(join(ROOT, DOC), 'utf8');
    rows = rowsOf(doc);
    reads = await readsOfEveryProgram();
    readByAnyone = new Set([...reads.byProgram.values()].flatMap((set) => [...set]));
  });

  it('when the variable-shaped names of the code are collected, then a program\'s loader reads every one of them (the scenarios reach every read)', () => {
    const unreached = [...namesInCode()].filter(([name]) => !readByAnyone.has(name)).map(([name, files]) => `${name} (${files.join(', ')})`);
    // A name here is either a new variable no scenario of configuration-reads.ts reaches (add one), or a
    // literal that is not a variable (add it to NOT_VARIABLES there).
    expect(unreached).toEqual([]);
  });

  it('when the reference is read, then it lists every variable the code reads, once', () => {
    const listed = rows.map((row) => row.name);
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([]);
    const code = sorted([...readByAnyone, ...namesInCode().keys()]);
    expect(code.filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name) => !code.includes(name)).sort()).toEqual([]);
  });

  it('when each row names the programs that read it, then those are exactly the programs whose loaders read it', () => {
    const wrong = rows.flatMap((row) => {
      const actual = PROGRAMS.filter((program) => reads.byProgram.get(program)!.has(row.name));
      const unknown = row.readBy.filter((p) => !(PROGRAMS as readonly string[]).includes(p));
      return unknown.length > 0 || sorted(row.readBy).join() !== sorted(actual).join()
        ? [`${DOC}:${row.line} ${row.name}: says ${row.readBy.join(', ')}; read by ${actual.join(', ')}`] : [];
    });
    expect(wrong).toEqual([]);
  });

  it('when a loader falls back to a value of its own, then that value is in the row\'s default', () => {
    const missing: string[] = [];
    for (const row of rows) {
      for (const [program, fallbacks] of reads.fallbacks.get(row.name) ?? new Map<Program, unknown[]>()) {
        for (const fallback of fallbacks.filter(isStatable)) {
          if (!mentions(row.defaults, String(fallback))) missing.push(`${DOC}:${row.line} ${row.name}: ${program} falls back to ${String(fallback)}; the row says ${row.defaults}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('when the reference names the variables without a NAME_FILE form, then they are the ones read only directly', () => {
    expect(listAfter(doc, 'no-file-form')).toEqual(sorted(reads.withoutFileForm));
  });

  it('when the reference names what the all-in-one sets per service, then it is the all-in-one\'s own list', () => {
    expect(listAfter(doc, 'set-per-service')).toEqual(sorted(PER_SERVICE));
  });

  it('when the README\'s Configuration section names a variable, then it is one the reference lists', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Configuration\n'), readme.indexOf('\n## ', readme.indexOf('\n## Configuration\n') + 1));
    expect(section).toContain('(docs/configuration.md)');
    const listed = new Set(rows.map((row) => row.name));
    const named = [...section.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]*|PORT|HOST)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((name) => !listed.has(name) && !(name.endsWith('_FILE') && listed.has(name.slice(0, -5))) && name !== 'NAME_FILE')).toEqual([]);
  });

  it('when a row is wrong, then the checks see it (they are not no-ops)', () => {
    const broken = rowsOf(doc.replace('| `MAIL_FROM` | mailer | `notes@localhost` |', '| `MAIL_FROM` | notes | `notes@example` |'));
    const row = broken.find((r) => r.name === 'MAIL_FROM')!;
    expect(row.readBy).toEqual(['notes']);
    expect(reads.byProgram.get('notes')!.has('MAIL_FROM')).toBe(false);
    expect(mentions(row.defaults, String(reads.fallbacks.get('MAIL_FROM')!.get('mailer')![0]))).toBe(false);
    expect(mentions('`100`', '10')).toBe(false);
    expect(mentions('gateway `10`, notes', '10')).toBe(true);
    expect(rowsOf(doc.replace(/^\| `MAIL_FROM` .*$/m, '')).some((r) => r.name === 'MAIL_FROM')).toBe(false);
  });
});
