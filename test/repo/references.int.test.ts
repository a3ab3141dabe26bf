// The repository stands on its own: every relative link in its Markdown resolves to a tracked file
// (and heading), every "DECISIONS n" / "SPEC n" it cites is a section of docs/decisions.md /
// docs/contract.md, nothing points out of the repository with `../`, and no tracked file names a
// path of a development machine (a clone elsewhere has none of them).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SELF = relative(ROOT, __filename).split(sep).join('/');

function trackedFiles(): string[] {
  let out: string;
  try {
    out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    throw new Error(`the reference check reads the tracked files with \`git ls-files\`; run it in a git checkout (${(err as Error).message})`);
  }
  return out.split('\0').filter((file) => file !== '' && existsSync(join(ROOT, file)));
}

/** Text files only (no NUL byte), and not the lock file (registry URLs and hashes, nothing we wrote). */
function textFiles(): Array<{ file: string; text: string }> {
  return trackedFiles()
    .filter((file) => file !== 'package-lock.json' && statSync(join(ROOT, file)).size < 2_000_000)
    .map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }))
    .filter(({ text }) => !text.includes('\0'));
}

/** Markdown without its fenced code blocks and inline code (commands there are not links). */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const stripped = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of stripped.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function linksOf(markdown: string): string[] {
  const prose = proseOf(markdown);
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

const insideRepo = (absolute: string): boolean => absolute === ROOT || absolute.startsWith(ROOT + sep);

describe('the repository stands on its own', () => {
  const files = textFiles();
  const tracked = new Set(trackedFiles());
  const markdown = files.filter(({ file }) => file.endsWith('.md'));

  it('when tracked Markdown links to a relative path, then that file (and heading) is in the repository', () => {
    expect(markdown.length).toBeGreaterThan(10);
    const broken: string[] = [];
    let checked = 0;
    for (const { file, text } of markdown) {
      for (const link of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: ...
        checked += 1;
        const [target = '', fragment] = link.split('#');
        const absolute = target === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(target));
        const path = relative(ROOT, absolute).split(sep).join('/');
        if (!insideRepo(absolute)) {
          broken.push(`${file}: ${link} leaves the repository`);
        } else if (!(tracked.has(path) || [...tracked].some((t) => t.startsWith(`${path}/`)))) {
          broken.push(`${file}: ${link} (${path} is not a tracked file or directory)`);
        } else if (fragment && path.endsWith('.md') && !anchorsOf(readFileSync(absolute, 'utf8')).has(fragment.toLowerCase())) {
          broken.push(`${file}: ${link} (no heading #${fragment} in ${path})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('when code or docs cite "DECISIONS n" or "SPEC n", then docs/decisions.md or docs/contract.md has that section', () => {
    const sections = (doc: string): Set<string> => new Set(
      [...readFileSync(join(ROOT, doc), 'utf8').matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.?\s/gm)].map((m) => m[1]!),
    );
    const documents = { DECISIONS: sections('docs/decisions.md'), SPEC: sections('docs/contract.md') };
    const unresolved: string[] = [];
    let cited = 0;
    for (const { file, text } of files) {
      for (const match of text.matchAll(/\b(DECISIONS|SPEC) ?(?:§ ?)?(\d+(?:\.\d+)?(?:(?:, | and | or |\/)\d+(?:\.\d+)?)*)/g)) {
        const kind = match[1] as keyof typeof documents;
        for (const number of match[2]!.split(/, | and | or |\//)) {
          cited += 1;
          const major = number.split('.')[0]!;
          if (!documents[kind].has(major) || (number.includes('.') && !documents[kind].has(number))) {
            unresolved.push(`${file}: "${kind} ${number}" (${kind === 'SPEC' ? 'docs/contract.md' : 'docs/decisions.md'} has no such section)`);
          }
        }
      }
    }
    expect(cited).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
  });

  it('when a tracked file names a ../ path, then it stays inside the repository', () => {
    // Code snippets that a test places in another file (the layering check's examples live in packages/common/src).
    const snippetsOfOtherFiles = new Set(['test/deploy/layering.int.test.ts']);
    const escaping: string[] = [];
    for (const { file, text } of files) {
      if (file === SELF || snippetsOfOtherFiles.has(file)) continue;
      for (const match of text.matchAll(/(?<![\w.])(?:\.\.\/)+[\w@.-]*(?:\/[\w@.-]+)*/g)) {
        const absolute = resolve(ROOT, dirname(file), match[0]);
        const path = relative(ROOT, absolute).split(sep).join('/');
        // A document named by a relative path (in a comment, say) must be one of ours.
        const missingDocument = /\.md$/.test(path) && !tracked.has(path);
        if (!insideRepo(absolute) || missingDocument) escaping.push(`${file}: ${match[0]}${missingDocument ? ` (${path} is not in the repository)` : ' (leaves the repository)'}`);
      }
    }
    expect(escaping).toEqual([]);
  });

  it('when a tracked file names an absolute path, then it is not one of a development machine (paths inside the images are)', () => {
    // Container images, the manifests that run them and the tests of both name the images' own file
    // systems: DATA_DIR=/tmp/vanish and the /tmp tmpfs of the read-only-root containers, /root/.npm
    // cleaned up in a Dockerfile.
    const inImage = (file: string): boolean => /(^|\/)Dockerfile[^/]*$/.test(file) || /^(deploy|test\/containers|test\/deploy)\//.test(file)
      || /^docker-compose[^/]*\.ya?ml$/.test(file);
    const imagePathsInDocs: Record<string, string[]> = { 'docs/operations.md': ['/tmp/vanish', '/tmp'] };
    // A leak detector: answers must not show a server's file paths, whatever machine it runs on.
    const leakPatterns = new Set(['test/http/odd-paths.int.test.ts']);
    const found: string[] = [];
    for (const { file, text } of files) {
      if (file === SELF || inImage(file) || leakPatterns.has(file)) continue;
      // Not after `//` (mysql://root@...) nor inside a word or a relative path.
      for (const match of text.matchAll(/(?<![\w.~$})\/:-])\/(?:work|root|home|Users|tmp)(?:\/[\w.@-]*)*/g)) {
        if ((imagePathsInDocs[file] ?? []).includes(match[0])) continue;
        const line = text.slice(0, match.index).split('\n').length;
        found.push(`${file}:${line}: ${match[0]}`);
      }
    }
    expect(found).toEqual([]);
  });
});
