// What the container suites share: podman run as a child process, and the images built from the one
// Dockerfile exactly as a user builds them, on a machine with no registry (docs/operations.md, "Images").
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
// Made by scripts/container-base-image.sh from this machine's Node 24 (no registry here to pull the pinned image).
export const BASE_IMAGE_STAND_IN = 'docker.io/library/node:24-bookworm-slim';

export interface Result { code: number | null; stdout: string; stderr: string }

export function run(command: string, args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    child.stdin.end(options.input ?? '');
  });
}

export async function must(command: string, args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${(result.stdout + result.stderr).split('\n').slice(-40).join('\n')}`);
  }
  return result.stdout;
}

/** podman present, and the local stand-in for the official node base image made (once per machine). */
export async function preparePodman(): Promise<void> {
  await run('podman', ['--version']).catch(() => {
    throw new Error('podman is not installed: apt-get install -y podman runc catatonit (docs/testing.md)');
  });
  await must('bash', [path.join(ROOT, 'scripts/container-base-image.sh')], { timeoutMs: 15 * 60_000 });
}

export interface BuildOptions {
  /** The Dockerfile and context, as the release workflow names them. */
  file?: string;
  context?: string;
  /** --build-arg NAME=value, besides NODE_IMAGE (the stand-in). */
  buildArgs?: Record<string, string>;
  platform?: string;
}

/**
 * One image from the repository's Dockerfile, as the README and the release workflow build it
 * (`--build-arg SERVICE=...` from the repository root), plus what this machine needs: the base stand-in as
 * NODE_IMAGE and the machine's CA bundle for npm, mounted for the build only. Returns the seconds it took.
 */
export async function buildImage(service: string, tag: string, options: BuildOptions = {}): Promise<number> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'vanish-build-'));
  const npmrc = path.join(scratch, 'build-npmrc');
  writeFileSync(npmrc, 'cafile=/etc/ssl/certs/ca-certificates.crt\n');
  const buildArgs = { SERVICE: service, ...options.buildArgs, NODE_IMAGE: BASE_IMAGE_STAND_IN };
  const startedAt = Date.now();
  try {
    await must('podman', [
      'build', '--format', 'docker',
      ...(options.platform ? ['--platform', options.platform] : []),
      '-v', '/etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro',
      '-v', `${npmrc}:/usr/local/etc/npmrc:ro`,
      ...Object.entries(buildArgs).flatMap(([name, value]) => ['--build-arg', `${name}=${value}`]),
      '-t', tag, '-f', options.file ?? 'Dockerfile', options.context ?? '.',
    ], { timeoutMs: 25 * 60_000 });
    return (Date.now() - startedAt) / 1000;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
