// Every k6 command line the repository runs or documents turns k6's usage report off. By default each
// `k6 run` sends a report to Grafana over the internet: a user running our load tests against their own
// deployment would tell a third party that they did, and where our tests run the call leaves the machine.
// The switch is `--no-usage-report` on the command line or `K6_NO_USAGE_REPORT=true` in its environment.
// This reads every tracked text file (tests, scripts, README and docs, package.json, yaml) and finds k6
// command lines in two forms: a shell line (`k6 run ... script.js`, also inside code comments and
// Markdown), and a program call whose program is 'k6' with 'run' as its first argument (spawn, execFile).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SELF = relative(ROOT, __filename).split(sep).join('/');

interface K6CommandLine { file: string; line: number; text: string; reportOff: boolean }

function trackedTextFiles(): Array<{ file: string; text: string }> {
  let out: string;
  try {
    out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    throw new Error(`this check reads the tracked files with \`git ls-files\`; run it in a git checkout (${(err as Error).message})`);
  }
  return out.split('\0')
    .filter((file) => file !== '' && file !== 'package-lock.json' && existsSync(join(ROOT, file)))
    .filter((file) => statSync(join(ROOT, file)).size < 2_000_000)
    .map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }))
    .filter(({ text }) => !text.includes('\0'));
}

const REPORT_OFF = /--no-usage-report\b|K6_NO_USAGE_REPORT\s*[=:]\s*['"]?true\b/;
// `k6 run` (or `k6 cloud run`) followed on the same line by an option or a script: a command, not prose
// such as "a stand-in for `k6 run`".
const SHELL_FORM = /\bk6\s+(?:cloud\s+)?run\b(?=[^\n]*?(?:\s-|\.[cm]?[jt]s\b))/g;
// A program call: 'k6' as the program and 'run' as its first argument, up to the end of the call.
const CALL_FORM = /['"`]k6['"`]\s*,\s*\[\s*['"`](?:cloud['"`]\s*,\s*['"`])?run['"`][\s\S]*?\)\s*[;,\n]/g;

/** Every k6 command line of one file, and whether it turns the usage report off. */
export function k6CommandLines(file: string, text: string): K6CommandLine[] {
  const found: K6CommandLine[] = [];
  const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
  // A shell command continued with a backslash is one command line.
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    let command = lines[i];
    for (let j = i; /\\\s*$/.test(lines[j]) && j + 1 < lines.length; j += 1) command += ` ${lines[j + 1]}`;
    for (const _match of command.matchAll(SHELL_FORM)) {
      found.push({ file, line: i + 1, text: lines[i].trim(), reportOff: REPORT_OFF.test(command) });
    }
  }
  for (const match of text.matchAll(CALL_FORM)) {
    found.push({ file, line: lineOf(match.index ?? 0), text: match[0].split('\n')[0].trim(), reportOff: REPORT_OFF.test(match[0]) });
  }
  return found;
}

describe('k6 usage report', () => {
  it('when the detector reads command lines with and without the switch, then it tells them apart', () => {
    // Built at run time so that this file holds no k6 command line of its own.
    const k6run = ['k6', 'run'].join(' ');
    const sample = [
      `${k6run} -e BASE_URL=https://example.org load-tests/smoke.js`,
      `${k6run} --no-usage-report -e BASE_URL=https://example.org load-tests/smoke.js`,
      `K6_NO_USAGE_REPORT=true ${k6run} load-tests/smoke.js`,
      `${k6run} \\`,
      '  --no-usage-report load-tests/average.js',
      `a stand-in for \`${k6run}\` where the binary is missing`,
      `spawnSync('k6', ['run', '--quiet', script], { env });`,
      `spawnSync('k6', ['run', '--no-usage-report', script], { env });`,
      `spawnSync('k6', ['version'], { encoding: 'utf8' });`,
    ].join('\n');
    const lines = k6CommandLines('sample', sample);
    expect(lines.map((l) => [l.line, l.reportOff])).toEqual([
      [1, false], [2, true], [3, true], [4, true], [7, false], [8, true],
    ]);
  });

  it('when any k6 command line in the repository runs or documents k6, then it turns the usage report off', () => {
    const lines = trackedTextFiles().filter(({ file }) => file !== SELF).flatMap(({ file, text }) => k6CommandLines(file, text));
    // The check must really find command lines: the README's six, the scripts' headers, the e2e test's call.
    const files = new Set(lines.map((l) => l.file));
    expect(files).toContain('load-tests/README.md');
    expect(files).toContain('load-tests/smoke.js');
    expect(files).toContain('test/load/k6-scripts.e2e.test.ts');
    expect(lines.length).toBeGreaterThanOrEqual(12);
    const leaking = lines.filter((l) => !l.reportOff).map((l) => `${l.file}:${l.line}: ${l.text}`);
    expect(leaking).toEqual([]);
  });
});
