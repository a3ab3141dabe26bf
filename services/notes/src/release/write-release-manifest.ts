import { RELEASE_MANIFEST_FILE, buildCommit, buildReleaseManifest, repositoryVersion, writeReleaseManifest } from './release-manifest';

/**
 * `node services/notes/dist/release/write-release-manifest.js [--out FILE] [--commit SHA]`: run by `npm run build`,
 * the Dockerfile (--commit from its VANISH_COMMIT build argument) and the CLI's prepack (DECISIONS 17). Writes
 * the manifest of the assets this build serves.
 */
if (require.main === module) {
  const option = (name: string): string | undefined => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
  };
  const file = option('--out') ?? RELEASE_MANIFEST_FILE;
  const manifest = buildReleaseManifest(repositoryVersion(), buildCommit(option('--commit')));
  writeReleaseManifest(file, manifest);
  process.stdout.write(`release manifest: vanish ${manifest.version} (${manifest.commit}), ${Object.keys(manifest.assets).length} assets -> ${file}\n`);
}
