import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ASSET_INTEGRITY, DOWNLOAD_SW_JS } from '../http/pages/assets';
import { REQUEST_ASSET_INTEGRITY } from '../requests/request-assets';
import { canonicalJson } from '../receipts/receipt-signer';
import { buildCommit, buildReleaseManifest, loadReleaseManifest, manifestText, releaseDigest, sha384Integrity, writeReleaseManifest } from './release-manifest';

/** DECISIONS 17: the manifest names exactly the integrity values the pages carry, and its bytes are canonical. */
describe('the release manifest', () => {
  it('when it is built, then it lists every script and stylesheet a page loads with the integrity value the page asks for', () => {
    const manifest = buildReleaseManifest('9.9.9', 'a'.repeat(40));
    expect(manifest).toEqual({
      format: 'vanish-release/1', name: 'vanish', version: '9.9.9', commit: 'a'.repeat(40),
      assets: {
        '/assets/app.css': ASSET_INTEGRITY.css, '/assets/app.js': ASSET_INTEGRITY.app, '/assets/envelope.js': ASSET_INTEGRITY.envelope,
        '/assets/qr.js': ASSET_INTEGRITY.qr, '/assets/wallet.js': ASSET_INTEGRITY.wallet,
        // DECISIONS 14: the file format, tus and the download worker (registered by the page, not a <script>).
        '/assets/file-stream.js': ASSET_INTEGRITY.fileStream, '/assets/tus.js': ASSET_INTEGRITY.tus,
        '/assets/download-sw.js': sha384Integrity(DOWNLOAD_SW_JS),
        // DECISIONS 15: the requests' pages.
        '/assets/request-seal.js': REQUEST_ASSET_INTEGRITY.seal, '/assets/requests.js': REQUEST_ASSET_INTEGRITY.requests,
        '/assets/embed.js': REQUEST_ASSET_INTEGRITY.embed,
      },
    });
  });

  it('when it is written and read back, then the bytes are canonical JSON and the digest is the SHA-256 of those bytes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vanish-release-'));
    try {
      const manifest = buildReleaseManifest('9.9.9', 'unknown');
      writeReleaseManifest(join(dir, 'm.json'), manifest);
      const loaded = loadReleaseManifest(join(dir, 'm.json'));
      expect(loaded.text).toBe(canonicalJson(manifest));
      expect(loaded.text).toBe(manifestText(manifest));
      expect(loaded.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(loaded.digest).toBe(releaseDigest(loaded.text));
      // Without the build's file (run from the sources), the same assets are described, commit unknown.
      expect(loadReleaseManifest(join(dir, 'absent.json')).manifest.assets).toEqual(manifest.assets);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the commit is given, then only a commit-shaped value is taken; otherwise git is asked, or it is unknown', () => {
    expect(buildCommit('0123456789abcdef0123456789abcdef01234567')).toBe('0123456789abcdef0123456789abcdef01234567');
    expect(buildCommit('0123456', tmpdir())).toBe('0123456');
    expect(buildCommit('unknown', tmpdir())).toBe('unknown');
    expect(buildCommit('$(rm -rf /)', tmpdir())).toBe('unknown');
  });
});
