import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { background, sleep, type System } from '../../resilience/support/system';

/** A create slower than this counts as hung. */
const HANG_BOUND_MS = 15_000;

/**
 * Notes' write path through a database fault: creates run one after another through the gateway while
 * `fault` takes notes' database away and gives it (or its replacement) back, then 4 s more. Holds what
 * docs/scaling.md promises: every create answers 200 or 503 in the error shape, none hangs, creates
 * succeed again after the fault, and every 200 is revealed afterwards with its content (nothing
 * acknowledged was lost); stats counts at least every 200 (a 503 may have committed: its answer was
 * lost with the connection). Prints `fault`'s figures with the run's (never asserted).
 */
export async function expectCreatesSurviveDatabaseFault(sys: System, measured: string, fault: () => Promise<Record<string, number>>): Promise<void> {
  const answers: Array<{ status: number; ms: number; body: unknown }> = [];
  const ok: Array<{ uuid: string; content: string }> = [];
  let n = 0;
  const traffic = background(async () => {
    n += 1;
    const content = `${measured} ${n}`;
    const created = await sys.create({ content, max_views: 1 });
    answers.push({ status: created.status, ms: created.ms, body: created.body });
    if (created.status === 200) ok.push({ uuid: created.body.uuid, content });
  }, 20);
  await sleep(2_000);
  sys.allow5xx = true; // 503s are the expected answer while the database is away (checked below)
  const figures = await fault();
  // Until creates succeed again through re-established connections.
  const recoveredFrom = answers.length;
  await sleep(4_000);
  await traffic.stop();
  sys.allow5xx = false;

  const wrong = answers.filter((a) => a.status !== 200 && a.status !== 503);
  if (wrong.length > 0) {
    // Which database error became this answer is in notes' log, not in the answer: keep the services' output.
    const file = path.join(tmpdir(), `${sys.tag}-services.log`);
    writeFileSync(file, sys.logs());
    process.stdout.write(`${JSON.stringify({ measured, wrongAnswers: wrong.length, serviceLogs: file })}\n`);
  }
  expect(wrong).toEqual([]);
  for (const failed of answers.filter((a) => a.status === 503)) {
    expect(failed.body).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: expect.any(String) } });
  }
  expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(HANG_BOUND_MS);
  expect(answers.slice(recoveredFrom).some((a) => a.status === 200)).toBe(true);
  expect(answers.some((a) => a.status === 503)).toBe(true);

  for (const note of ok) {
    const shown = await sys.reveal(note.uuid);
    expect({ uuid: note.uuid, status: shown.status, content: shown.content }).toEqual({ uuid: note.uuid, status: 200, content: note.content });
  }
  await sys.checkInvariants({ exactTotal: false, timeoutMs: 120_000 });
  process.stdout.write(`${JSON.stringify({
    measured, ...figures, creates: answers.length, ok: ok.length,
    unavailable: answers.filter((a) => a.status === 503).length, slowestMs: Math.max(...answers.map((a) => a.ms)),
  })}\n`);
}
