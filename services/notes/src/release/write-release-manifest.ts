import { RELEASE_MANIFEST_FILE, buildCommit, buildReleaseManifest, repositoryVersion, writeReleaseManifest } from './release-manifest';

/**
 * `node services/notes/dist/release/write-release-manifest.js [--out FILE]`: run by `npm run build`, the
 * Dockerfile and the CLI's prepack (DECISIONS 17). Writes the manifest of the assets this build serves.
 */
if (require.main === module) {
  const at = process.argv.indexOf('--out');
  const file = at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : RELEASE_MANIFEST_FILE;
  const manifest = buildReleaseManifest(repositoryVersion(), buildCommit());
  writeReleaseManifest(file, manifest);
  process.stdout.write(`release manifest: vanish ${manifest.version} (${manifest.commit}), ${Object.keys(manifest.assets).length} assets -> ${file}\n`);
}
