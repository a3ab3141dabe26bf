'use strict';
/*
 * vanish verify-site URL (DECISIONS 17): fetches the site's pages and every script and stylesheet they load
 * (and every asset a known release lists), hashes each with SHA-384, and says whether the site serves exactly
 * the assets of a release this vanish knows: the manifest it ships (lib/release-manifest.json, written when the
 * CLI was packed) or those given with --manifest. It names each file that differs. It checks what was served
 * to this machine, now: docs/security.md says what that proves and what it cannot.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Refusal, UsageError, shown } = require('./errors');
const { send } = require('./http');
const { serverOrigin } = require('./links');

const SHIPPED = join(__dirname, 'release-manifest.json');
/** Pages anyone can fetch without a secret; the note, receipt and created pages use the same layout. */
const PAGES = ['/', '/receipts'];
const MANIFEST_PATH = '/.well-known/vanish-release.json';

function readManifest(file) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read the release manifest ${file}: ${err.code ?? err.message}`);
  }
  if (manifest?.format !== 'vanish-release/1' || typeof manifest.assets !== 'object' || manifest.assets === null) throw new UsageError(`${file} is not a vanish release manifest`);
  return manifest;
}

function knownReleases(options) {
  const files = options.manifest ?? [];
  if (files.length > 0) return files.map(readManifest);
  try {
    return [readManifest(SHIPPED)];
  } catch {
    throw new UsageError('this copy of vanish ships no release manifest (it was not packed from a release): give --manifest FILE, the vanish-release.json of a release you trust');
  }
}

/** The scripts and stylesheets a page loads, with the integrity each tag asks for. */
function pageAssets(html) {
  const found = [];
  for (const [tag] of html.matchAll(/<(?:script|link)\b[^>]*>/gi)) {
    const isScript = /^<script/i.test(tag);
    if (!isScript && !/\brel="?stylesheet"?/i.test(tag)) continue;
    const src = /\b(?:src|href)="([^"]*)"/i.exec(tag)?.[1];
    if (isScript && src === undefined) {
      found.push({ inline: true });
      continue;
    }
    found.push({ path: src, integrity: /\bintegrity="([^"]*)"/i.exec(tag)?.[1] ?? null });
  }
  return found;
}

function sha384(buffer) {
  return `sha384-${createHash('sha384').update(buffer).digest('base64')}`;
}

/** The answer's bytes exactly as served (hashed as they are, never decoded first), at most 5 MB. */
async function fetchBytes(url, origin) {
  const response = await send(url, { headers: {} }, origin);
  const chunks = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (;;) {
    const { done, value } = reader ? await reader.read() : { done: true };
    if (done) break;
    size += value.byteLength;
    if (size > 5_000_000) { await reader.cancel(); throw new Refusal(`${url} answered over 5 MB: not a vanish page or asset`); }
    chunks.push(value);
  }
  const bytes = Buffer.concat(chunks);
  return { status: response.status, bytes, text: bytes.toString('utf8') };
}

async function verifySite(options, site, io) {
  if (!site) throw new UsageError('vanish verify-site needs the site\'s address, such as https://vanish.example');
  const origin = serverOrigin(site);
  const releases = knownReleases(options);
  const problems = [];
  const served = new Map();

  // What the pages load.
  for (const page of PAGES) {
    const answer = await fetchBytes(`${origin}${page}`, origin);
    if (answer.status !== 200 && page === '/') throw new Refusal(`${origin}/ answered HTTP ${answer.status}: is this a vanish site?`);
    if (answer.status !== 200) { problems.push(`${page}: answered HTTP ${answer.status} (every release this vanish knows has that page)`); continue; }
    for (const asset of pageAssets(answer.text)) {
      if (asset.inline) { problems.push(`${page}: an inline script, which no release has`); continue; }
      let url;
      try { url = new URL(asset.path, `${origin}${page}`); } catch { problems.push(`${page}: a script or stylesheet at an unreadable address ${shown(asset.path)}`); continue; }
      if (url.origin !== origin) { problems.push(`${page}: loads ${shown(url.href)} from another site`); continue; }
      const entry = served.get(url.pathname) ?? { integrity: new Set(), pages: new Set() };
      entry.pages.add(page);
      entry.integrity.add(asset.integrity);
      served.set(url.pathname, entry);
    }
  }
  // Every asset a known release lists is fetched too (some load only on pages that need a secret to see).
  for (const release of releases) for (const path of Object.keys(release.assets)) if (!served.has(path)) served.set(path, { integrity: new Set(), pages: new Set() });
  const hashes = new Map();
  for (const path of [...served.keys()].sort()) {
    const answer = await fetchBytes(`${origin}${path}`, origin);
    hashes.set(path, answer.status === 200 ? sha384(answer.bytes) : `HTTP ${answer.status}`);
  }

  // The release whose assets match best (the one the site names first, on a tie).
  const claimed = await fetchBytes(`${origin}${MANIFEST_PATH}`, origin).then((answer) => {
    try { return answer.status === 200 ? JSON.parse(answer.text) : null; } catch { return null; }
  });
  const differences = (release) => {
    const differ = [];
    for (const [path, entry] of served) {
      const expected = release.assets[path];
      if (entry.pages.size > 0 && expected === undefined) differ.push(`${path}: loaded by ${[...entry.pages].join(', ')} but not part of release ${release.version}`);
      else if (expected !== undefined && hashes.get(path) !== expected) differ.push(`${path}: served ${hashes.get(path)}, release ${release.version} has ${expected}`);
      for (const integrity of entry.integrity) {
        if (expected !== undefined && integrity !== expected) differ.push(`${path}: a page asks for integrity ${integrity ?? '(none)'}, release ${release.version} has ${expected}`);
      }
    }
    return differ;
  };
  const ranked = releases
    .map((release) => ({ release, differ: differences(release) }))
    .sort((a, b) => a.differ.length - b.differ.length || Number(b.release.version === claimed?.version) - Number(a.release.version === claimed?.version));
  const best = ranked[0];
  const all = [...problems, ...best.differ];
  const name = `vanish ${best.release.version} (commit ${best.release.commit})`;
  if (claimed && claimed.version !== best.release.version) io.stdout.write(`the site says it runs vanish ${shown(claimed.version)}\n`);
  if (claimed && best.differ.length === 0 && canonicalAssets(claimed.assets) !== canonicalAssets(best.release.assets)) all.push(`${MANIFEST_PATH}: the site's own manifest lists other assets than ${name}`);
  if (all.length === 0) {
    io.stdout.write(`OK: ${origin} serves exactly the assets of ${name}: ${served.size} files, each the same SHA-384\n`);
    return;
  }
  io.stdout.write(`DIFFERENT: ${origin} does not serve exactly the assets of ${name}\n`);
  for (const line of all) io.stdout.write(`  ${line}\n`);
  throw new Refusal(`${all.length} difference${all.length === 1 ? '' : 's'} from the closest release this vanish knows`);
}

function canonicalAssets(assets) {
  return JSON.stringify(Object.keys(assets ?? {}).sort().map((path) => [path, assets[path]]));
}

module.exports = { verifySite, pageAssets };
