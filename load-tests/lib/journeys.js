// What users do. An iteration of a load scenario is one journey picked by weight (or all of them when
// MIX=all, as in CI's one-iteration run):
//  - share: a sender creates a note (view-once), checks its metadata, the recipient opens the page and
//    reveals it, and the note is gone (metadata 404). With a passcode for some of the notes.
//  - check: a sender looks at the metadata of notes created earlier (seeded by setup()).
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
 * check: metadata reads of notes made by setup().
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
 * setup() of the load scenarios: notes whose metadata the `check` journey reads. They are time notes
 * (24 hours), so metadata reads never end them.
 * @param {number} [count]
 * @returns {{ seeds: string[] }}
 */
export function seedNotes(count = SEED_NOTES) {
  /** @type {string[]} */
  const seeds = [];
  for (let i = 0; i < count; i += 1) {
    const created = createNote({ content: `seed note ${i}`, expiry_type: 'time', expiry_time: 24 });
    if (created) seeds.push(created.uuid);
  }
  if (seeds.length === 0) throw new Error('setup could not create any note: is BASE_URL right and the create limit raised?');
  return { seeds };
}

/**
 * One iteration of a load scenario.
 * @param {{ seeds: string[] }} data
 * @param {string} [mix] `all` or `weighted` (default: the MIX setting)
 */
export function userMix(data, mix = MIX) {
  if (mix === 'all') {
    shareNote({});
    shareNote({ passcode: 'correct horse battery staple' });
    checkNotes(data.seeds);
    statsJourney();
    return;
  }
  const pick = Math.random() * 100;
  if (pick < WEIGHTS.share) shareNote({});
  else if (pick < WEIGHTS.share + WEIGHTS.sharePasscode) shareNote({ passcode: 'correct horse battery staple' });
  else if (pick < WEIGHTS.share + WEIGHTS.sharePasscode + WEIGHTS.check) checkNotes(data.seeds);
  else statsJourney();
  think();
}
