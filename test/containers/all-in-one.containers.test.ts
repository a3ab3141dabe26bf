// The one-container image as a user runs a release: built from the Dockerfile (`--build-arg
// SERVICE=all-in-one`), then `podman run -p PORT:8080 -v VOLUME:/data IMAGE` (plus --read-only with no
// writable tmpfs at all, as `docker run --read-only` has none). A note is created through the API and
// revealed on the page; the container is stopped and a new one started on the same volume: the notes and
// the keys survive (the first note's metadata answers, a note made before the restart is revealed after it,
// no key is generated twice). Build time, image size and start-up time are printed (docs/operations.md).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { npmStartNodeFlags } from '@vanish/testkit/npm-start';
import { buildImage, must, preparePodman, run } from './podman';

// A cold build compiles better-sqlite3 on two shared cores; the bound only catches hangs.
jest.setTimeout(30 * 60_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const KEY_WARNING = /is not set: generated a key into \/data\/keys\//;

describe('the all-in-one image: one `docker run` and one volume', () => {
  const suffix = randomBytes(4).toString('hex');
  // One tag for every run, kept afterwards: its layers are the next build's cache (as the services' images).
  const image = 'localhost/vanish:containers-test';
  const volume = `vanish-data-${suffix}`;
  const containers: string[] = [];
  let port: number;
  let gateway: string;
  let current: string;
  const timings: Record<string, string> = {};

  /** `docker run -p ...:8080 -v VOLUME:/data IMAGE`, read-only root; returns the seconds until it answers. */
  async function start(): Promise<number> {
    const name = `vanish-aio-${suffix}-${containers.length + 1}`;
    const startedAt = Date.now();
    await must('podman', ['run', '-d', '--name', name, '--read-only', '--read-only-tmpfs=false', '-p', `127.0.0.1:${port}:8080`, '-v', `${volume}:/data`, image]);
    containers.push(name);
    current = name;
    await waitFor(async () => (await fetch(`${gateway}/api/stats.php`).catch(() => undefined))?.status === 200 || undefined, { timeoutMs: 90_000, intervalMs: 100 })
      .catch(async (err: Error) => {
        const logs = await run('podman', ['logs', '--tail', '40', name]);
        throw new Error(`the all-in-one container never answered (${err.message}):\n${logs.stdout}${logs.stderr}`);
      });
    return (Date.now() - startedAt) / 1000;
  }

  const logs = async (name: string) => { const result = await run('podman', ['logs', name]); return result.stdout + result.stderr; };

  async function create(content: string, maxViews = 1): Promise<{ uuid: string; url: string }> {
    const answer = await fetch(`${gateway}/api/create.php`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content, max_views: maxViews }) });
    expect(answer.status).toBe(200);
    const note = (await answer.json()) as { uuid: string; url: string };
    expect(note.uuid).toMatch(UUID);
    return note;
  }

  /** The reveal form, as a browser posts it: the page for its token, then the POST. */
  async function reveal(uuid: string): Promise<{ status: number; page: string }> {
    const form = await fetch(`${gateway}/${uuid}`);
    expect(form.status).toBe(200);
    const formToken = /name="form_token" value="([^"]+)"/.exec(await form.text())?.[1];
    expect(formToken).toBeDefined();
    const revealed = await fetch(`${gateway}/${uuid}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: gateway },
      body: new URLSearchParams({ form_token: formToken! }).toString(),
    });
    return { status: revealed.status, page: await revealed.text() };
  }

  beforeAll(async () => {
    await preparePodman();
    timings.build = `${(await buildImage('all-in-one', image)).toFixed(0)} s`;
    const [inspected] = JSON.parse(await must('podman', ['image', 'inspect', image])) as [{ Size: number }];
    timings.size = `${(inspected.Size / 1e6).toFixed(0)} MB`;
    port = await freePort();
    gateway = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const name of containers) await run('podman', ['rm', '-f', '-t', '0', name]);
    await run('podman', ['volume', 'rm', '-f', volume]);
    console.log(`all-in-one image: built in ${timings.build}, ${timings.size}; started (run to first answer) in ${timings.firstStart} on an empty volume, ${timings.restart} on the same volume after a restart; stopped in ${timings.stop}`);
  });

  it('when the image is inspected, then it runs as node under tini, keeps /data as its volume, has a HEALTHCHECK and is not in production mode', async () => {
    const [config] = JSON.parse(await must('podman', ['image', 'inspect', image])) as [{ Config: { User: string; Env: string[]; Entrypoint: string[]; Cmd: string[]; Volumes: Record<string, unknown>; ExposedPorts: Record<string, unknown> }; Healthcheck?: { Test: string[] } }];
    expect(config.Config.User).toBe('node');
    expect(config.Config.Entrypoint).toEqual(['/usr/bin/tini', '--']);
    // The node flags `npm start` gives it: the image runs the same process with the same memory settings.
    const startFlags = npmStartNodeFlags(join(__dirname, '../..'));
    expect(startFlags.length).toBeGreaterThan(0);
    expect(config.Config.Cmd).toEqual(['node', ...startFlags, 'services/all-in-one/dist/main.js']);
    expect(Object.keys(config.Config.Volumes)).toEqual(['/data']);
    expect(Object.keys(config.Config.ExposedPorts)).toEqual(['8080/tcp']);
    expect(config.Config.Env).toContain('DATA_DIR=/data');
    expect(config.Config.Env.some((line) => line.startsWith('NODE_ENV='))).toBe(false);
    expect(config.Healthcheck?.Test.join(' ')).toContain('/healthz');
  });

  it('when asked for production mode, then it refuses with the reason and where the production images are', async () => {
    const refused = await run('podman', ['run', '--rm', '--read-only', '-e', 'NODE_ENV=production', image], { timeoutMs: 60_000 });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('the all-in-one process runs every service on embedded defaults');
  });

  let beforeRestart: { read: { uuid: string; url: string }; waiting: { uuid: string; url: string } };

  it('when started with only a port and a volume on a read-only root, then it answers, generates its keys once into the volume and is healthy', async () => {
    timings.firstStart = `${(await start()).toFixed(1)} s`;
    const firstLogs = await logs(current);
    expect(firstLogs).toMatch(KEY_WARNING);
    // tini is PID 1 (signals work without --init); the process runs as uid 1000 and writes only /data.
    expect((await must('podman', ['exec', current, 'cat', '/proc/1/comm'])).trim()).toBe('tini');
    expect((await must('podman', ['exec', current, 'id', '-u'])).trim()).toBe('1000');
    const data = await must('podman', ['exec', current, 'ls', '-ln', '/data', '/data/keys']);
    expect(data).toMatch(/notes\.db/);
    for (const line of data.split('\n').filter((l) => /^[-d]/.test(l))) expect(line.split(/\s+/).slice(2, 4)).toEqual(['1000', '1000']);
    const health = await run('podman', ['healthcheck', 'run', current]);
    expect({ code: health.code, out: health.stdout.trim() }).toEqual({ code: 0, out: expect.stringMatching(/^(healthy)?$/) });
  });

  it('when a note is created through the API and revealed on the page, then the text comes back once', async () => {
    // Two views: after one reveal it is still there, so its metadata can answer after the restart.
    const read = await create('made in the one container', 2);
    expect((await fetch(`${gateway}/api/view/${read.uuid}.php`)).status).toBe(200);
    expect(await reveal(read.uuid)).toEqual({ status: 200, page: expect.stringContaining('made in the one container') });
    const waiting = await create('made before the restart, read after it');
    beforeRestart = { read, waiting };
  });

  it('when the container is stopped and a new one runs on the same volume, then the notes and keys survive', async () => {
    const stoppedAt = Date.now();
    await must('podman', ['stop', '-t', '10', current], { timeoutMs: 30_000 });
    timings.stop = `${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`;
    // 0: SIGTERM reached node through tini and it drained (podman's SIGKILL after 10 s would make it 137).
    expect((await must('podman', ['inspect', '-f', '{{.State.ExitCode}}', current])).trim()).toBe('0');
    await must('podman', ['rm', current]);

    timings.restart = `${(await start()).toFixed(1)} s`;
    // The same keys: none generated again.
    expect(await logs(current)).not.toMatch(KEY_WARNING);
    // The note read before the restart: its metadata still answers, with its view counted.
    const metadata = await fetch(`${gateway}/api/view/${beforeRestart.read.uuid}.php`);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ note: { uuid: beforeRestart.read.uuid, current_views: 1 } });
    // A note sealed before the restart opens after it (the master keys survived).
    expect(await reveal(beforeRestart.waiting.uuid)).toEqual({ status: 200, page: expect.stringContaining('made before the restart, read after it') });
    // And a new note works end to end.
    const after = await create('made after the restart');
    expect(await reveal(after.uuid)).toEqual({ status: 200, page: expect.stringContaining('made after the restart') });
  });
});
