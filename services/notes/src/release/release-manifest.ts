import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PAGE_ASSETS } from '../http/pages/assets';
import { REQUEST_PAGE_ASSETS } from '../requests/request-assets';
import { canonicalJson } from '../receipts/receipt-signer';

/**
 * The release manifest (DECISIONS 17): which release this is, and the SHA-384 of every script and stylesheet
 * a page loads, by the path it is served at. The build writes it (`npm run build`, the Dockerfile) beside the
 * notes service's code; the service serves exactly those bytes at /.well-known/vanish-release.json, and the
 * SHA-256 of those bytes is the release digest a receipt records for each reveal. Its text is canonical JSON
 * (RFC 8785), so the digest of the served bytes is the digest of the manifest itself.
 */
export interface ReleaseManifest {
  format: 'vanish-release/1';
  name: 'vanish';
  /** The repository's version (the root package.json): the CLI of the same version ships this manifest. */
  version: string;
  /** The git commit built (`-dirty` when the tree had changes), or `unknown` (e.g. a build without .git). */
  commit: string;
  /** Path → `sha384-<base64>`, the value a page's integrity attribute carries. */
  assets: Record<string, string>;
}

export const RELEASE_MANIFEST_PATH = '/.well-known/vanish-release.json';
/** Where the build writes it: services/notes/dist/release/ (and src/release/ when run from the sources). */
export const RELEASE_MANIFEST_FILE = join(__dirname, 'vanish-release.json');
const ROOT_PACKAGE = join(__dirname, '..', '..', '..', '..', 'package.json');

export function sha384Integrity(body: string | Buffer): string {
  return `sha384-${createHash('sha384').update(body).digest('base64')}`;
}

export function buildReleaseManifest(version: string, commit: string): ReleaseManifest {
  const assets: Record<string, string> = {};
  // DECISIONS 17: every script and stylesheet a page may load, the requests' pages (DECISIONS 15) included.
  for (const asset of [...PAGE_ASSETS, ...REQUEST_PAGE_ASSETS]) assets[asset.path] = sha384Integrity(Buffer.from(asset.body, 'utf8'));
  return { format: 'vanish-release/1', name: 'vanish', version, commit, assets };
}

export function manifestText(manifest: ReleaseManifest): string {
  return canonicalJson(manifest);
}

/** `sha256:<hex>` of the manifest's bytes as served (what `curl … | sha256sum` prints). */
export function releaseDigest(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

export function repositoryVersion(file = ROOT_PACKAGE): string {
  try {
    return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** `given` (the Dockerfile's VANISH_COMMIT build argument, passed as --commit) when it is a commit, else git's HEAD, else `unknown`. */
export function buildCommit(given?: string, cwd = dirname(ROOT_PACKAGE)): string {
  if (given && /^[0-9a-f]{7,40}(-dirty)?$/.test(given)) return given;
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return /^[0-9a-f]{40}$/.test(head) ? `${head}${dirty ? '-dirty' : ''}` : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** What the service serves: the build's file; run from the sources without one, the same built in memory. */
export function loadReleaseManifest(file = RELEASE_MANIFEST_FILE): { text: string; manifest: ReleaseManifest; digest: string } {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : manifestText(buildReleaseManifest(repositoryVersion(), 'unknown'));
  return { text, manifest: JSON.parse(text) as ReleaseManifest, digest: releaseDigest(text) };
}

export function writeReleaseManifest(file: string, manifest: ReleaseManifest): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, manifestText(manifest));
}
