// A dry run of .github/workflows/release.yml: every step that publishes nothing, run here as the workflow
// writes it. The images: each of the matrix's services built with podman for linux/amd64 from the file,
// context and build arguments of the workflow's build step (buildx builds arm64 too, under QEMU, which this
// machine cannot run). The SBOM step's script, and the predicate file the attest step names for each image.
// The CLI: the version check against a tag, and the publish command with --dry-run. Not run here: the push,
// cosign (no registry, no OIDC identity) and the real publish. The workflow's own checks (actionlint, pins,
// permissions) are test/deploy/release-workflow.int.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { buildImage, must, preparePodman, ROOT, run } from './podman';

jest.setTimeout(60 * 60_000);

interface Step { uses?: string; run?: string; name?: string; with?: Record<string, string>; 'working-directory'?: string }
interface Workflow { jobs: { images: { strategy: { matrix: { service: string[] } }; steps: Step[] }; cli: { steps: Step[] } } }

const workflow = YAML.parse(readFileSync(path.join(ROOT, '.github/workflows/release.yml'), 'utf8')) as Workflow;
const services = workflow.jobs.images.strategy.matrix.service;
const imageStep = (match: (s: Step) => boolean) => workflow.jobs.images.steps.find(match)!;
const cliStep = (match: (s: Step) => boolean) => workflow.jobs.cli.steps.find(match)!;
const forService = (template: string, service: string) => template.replace('${{ matrix.service }}', service).replace('${SERVICE}', service);

describe('the release workflow, every step that publishes nothing', () => {
  beforeAll(async () => {
    await preparePodman();
  });

  it.each(services)('when the build step runs for %s (linux/amd64), then podman builds the image from the same file, context and arguments', async (service) => {
    const build = imageStep((s) => s.uses?.startsWith('docker/build-push-action@') === true).with!;
    const buildArgs = Object.fromEntries(build['build-args']!.split('\n').filter(Boolean).map((line) => {
      const [name, ...value] = forService(line, service).split('=');
      return [name!, value.join('=')];
    }));
    expect(build.platforms!.split(',')).toContain('linux/amd64');
    const tag = `localhost/vanish-release-dry-run-${service}:amd64`;
    try {
      const seconds = await buildImage(service, tag, { file: build.file, context: build.context, buildArgs, platform: 'linux/amd64' });
      console.log(`release dry run: ${service} built for linux/amd64 in ${seconds.toFixed(0)} s`);
      const [image] = JSON.parse(await must('podman', ['image', 'inspect', tag])) as [{ Architecture: string; Os: string; Config: { Env: string[] } }];
      expect({ os: image.Os, architecture: image.Architecture }).toEqual({ os: 'linux', architecture: 'amd64' });
      // The image SERVICE named, with the entry point it starts.
      expect(image.Config.Env).toContain(`SERVICE=${service}`);
      const entry = service === 'all-in-one' ? 'services/all-in-one/dist/main.js' : 'main.js';
      expect((await must('podman', ['run', '--rm', '--entrypoint', 'node', tag, '-e', `require('fs').accessSync(${JSON.stringify(entry)})`])).trim()).toBe('');
    } finally {
      await run('podman', ['rmi', '-f', tag]);
    }
  });

  it('when the SBOM step\'s script runs, then the CycloneDX file each image\'s attest step names is there', () => {
    const attest = imageStep((s) => s.run?.includes('cosign attest') === true).run!;
    const script = attest.split('\n').find((line) => line.startsWith('bash scripts/release-sbom.sh'))!;
    const out = mkdtempSync(path.join(tmpdir(), 'vanish-release-sbom-'));
    try {
      // The workflow writes into `sbom/` of its checkout; here into a scratch folder, the script's one argument.
      const result = spawnSync('bash', [script.split(' ')[1]!, out], { cwd: ROOT, encoding: 'utf8' });
      expect({ code: result.status, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      const predicate = /--predicate "sbom\/([^"]+)"/.exec(attest)![1]!;
      for (const service of services) {
        const sbom = JSON.parse(readFileSync(path.join(out, forService(predicate, service)), 'utf8')) as { bomFormat: string; metadata: { component: { name: string } } };
        expect({ service, format: sbom.bomFormat }).toEqual({ service, format: 'CycloneDX' });
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('when the CLI\'s version check runs, then the tag of its own version passes and another tag stops the job', () => {
    const check = cliStep((s) => s.run?.includes('GITHUB_REF_NAME') === true).run!;
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string };
    const withTag = (tag: string) => spawnSync('bash', ['-c', check], { cwd: ROOT, env: { ...process.env, GITHUB_REF_NAME: tag }, encoding: 'utf8' });
    expect(withTag(`v${version}`).status).toBe(0);
    const wrong = withTag('v999.0.0');
    expect(wrong.status).toBe(1);
    expect(wrong.stdout).toContain(`tag v999.0.0 but packages/cli/package.json says v${version}`);
  });

  it('when the publish step runs with --dry-run, then npm packs the CLI and would publish it with provenance and public access', async () => {
    const publish = cliStep((s) => s.run?.startsWith('npm publish') === true);
    const { name, version } = JSON.parse(readFileSync(path.join(ROOT, publish['working-directory']!, 'package.json'), 'utf8')) as { name: string; version: string };
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    for (const key of Object.keys(env)) if (/^npm_/i.test(key) || key === 'NODE_AUTH_TOKEN') delete env[key];
    const result = spawnSync('bash', ['-c', `${publish.run} --dry-run`], { cwd: path.join(ROOT, publish['working-directory']!), env, encoding: 'utf8', timeout: 180_000 });
    const output = result.stdout + result.stderr;
    expect({ code: result.status, output }).toEqual({ code: 0, output: expect.stringContaining(`+ ${name}@${version}`) });
    expect(output).toContain('with tag latest and public access (dry-run)');
    expect(output).toMatch(/total files: +\d+/);
  });
});
