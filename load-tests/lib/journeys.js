// What users do. An iteration of a load scenario is one journey picked by weight (or all of them when
// MIX=all, as in CI's one-iteration run):
//  - share: a sender creates a note (view-once), checks its metadata, the recipient opens the page and
//    reveals it, and the note is gone (metadata 404). With a passcode for some of the notes.
//  - check: a sender looks at the metadata of notes created earlier (each VU's seed notes, made on its first
//    iteration).
//  - stats: someone reads the statistics.
import { group, sleep } from 'k6';
import exec from 'k6/execution';
import { MIX, SEED_NOTES, THINK_TIME, WEB_PAGES } from './config.js';
import { createNote, readMetadata, readMetadataGone, readStats, reveal, viewPage } from './api.js';

/** Weights of the journeys in a weighted mix (they sum to 100). */
export const WEIGHTS = { share: 45, sharePasscode: 15, check: 25, stats: 15 };

/** A pause of about THINK_TIME seconds (uniform 0.5x to 1.5x). */
export function think() {
  if (THINK_TIME > 0) sleep(THINK_TIME * (0.5 + Math.random()));
}

/** Text unique to this VU and iteration, plain ASCII so that the revealed page contains it verbatim. */
export function uniqueContent() {
  const random = Math.random().toString(36).slice(2, 10);
  return `load-test note vu${exec.vu.idInTest} it${exec.vu.iterationInScenario} ${random}`;
}

/**
 * share: create, metadata, page, reveal, gone.
 * @param {{ passcode?: string }} options
 */
export function shareNote(options) {
  group(options.passcode ? 'share a note with a passcode' : 'share a note', () => {
    const content = uniqueContent();
    const created = createNote({ content, expiry_type: 'view', max_views: 1, passcode: options.passcode });
    if (!created) return;
    think();
    readMetadata(created.uuid, { currentViews: 0 });
    if (WEB_PAGES === 'off') return;
    think();
    const form = viewPage(created.uuid);
    if (!form) return;
    readMetadata(created.uuid, { currentViews: 0 }); // the page did not consume the view
    think();
    if (reveal(form, content, options.passcode)) readMetadataGone(created.uuid, 'metadata after the last view');
  });
}

/**
 * check: metadata reads of this VU's seed notes.
 * @param {string[]} seeds
 */
export function checkNotes(seeds) {
  group('check notes', () => {
    for (let i = 0; i < 3 && seeds.length > 0; i += 1) {
      readMetadata(seeds[Math.floor(Math.random() * seeds.length)], { currentViews: 0, expiryHours: 24 });
      think();
    }
  });
}

export function statsJourney() {
  group('read statistics', () => {
    readStats();
  });
}

/**
 * The notes this VU's `check` journey reads. Module scope: each k6 VU runs its own copy of the script, so
 * this list lives in one VU's memory and nowhere else.
 * @type {string[] | undefined}
 */
let seedsOfThisVu;

/**
 * The seed notes of this VU, made on its first iteration: time notes (24 hours), so metadata reads never
 * end them. Not made in setup(): k6 writes whatever setup() returns into the `setup_data` of
 * `--summary-export` (and hands it to handleSummary), and a note's uuid is a bearer secret that must not
 * end up in a report file. When none can be made (BASE_URL wrong, the create limit not raised) the whole
 * test stops at once (k6 exits 108).
 * @param {number} count
 * @returns {string[]}
 */
export function seedNotes(count) {
  if (seedsOfThisVu !== undefined) return seedsOfThisVu;
  /** @type {string[]} */
  const seeds = [];
  group('seed notes', () => {
    for (let i = 0; i < count; i += 1) {
      const created = createNote({ content: `seed note ${i}`, expiry_type: 'time', expiry_time: 24 }, 'create_seed');
      if (created) seeds.push(created.uuid);
    }
  });
  if (count > 0 && seeds.length === 0) {
    exec.test.abort('could not create any seed note: is BASE_URL right and the create limit raised? (load-tests/README.md)');
  }
  seedsOfThisVu = seeds;
  return seeds;
}

/**
 * One iteration of a load scenario. The first iteration of each VU makes its seed notes first.
 * @param {{ mix?: string, seedNotes?: number }} [settings] `mix`: `all` or `weighted` (default: the MIX
 *   setting); `seedNotes`: how many notes this VU makes for the `check` journey (default: SEED_NOTES)
 */
export function userMix(settings = {}) {
  const mix = settings.mix ?? MIX;
  const seeds = seedNotes(settings.seedNotes ?? SEED_NOTES);
  if (mix === 'all') {
    shareNote({});
    shareNote({ passcode: 'correct horse battery staple' });
    checkNotes(seeds);
    statsJourney();
    return;
  }
  const pick = Math.random() * 100;
  if (pick < WEIGHTS.share) shareNote({});
  else if (pick < WEIGHTS.share + WEIGHTS.sharePasscode) shareNote({ passcode: 'correct horse battery staple' });
  else if (pick < WEIGHTS.share + WEIGHTS.sharePasscode + WEIGHTS.check) checkNotes(seeds);
  else statsJourney();
  think();
}
