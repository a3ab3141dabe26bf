import type { OutgoingMessage } from '@vanish/common';
import { noteEventMessage } from './note-events';
import type { NoteWebhooks } from './note-webhooks';
import type { NoteState, NoteTimeControls, NoteTransaction } from './ports';
import type { ReleaseState, TimeControlsView } from './notes';

const HOUR_MS = 3_600_000;

/** DECISIONS 16: true while the note may not be opened at `now` (its release time has not come). */
export function isHeldAt(controls: NoteTimeControls | undefined, now: Date): boolean {
  const at = controls?.releaseAt;
  return Boolean(at && at.getTime() > now.getTime());
}

export function releaseStateAt(controls: NoteTimeControls | undefined, now: Date): ReleaseState | undefined {
  if (!controls?.releaseAt) return undefined;
  if (!isHeldAt(controls, now)) return 'released';
  return controls.silenceHours ? 'held' : 'scheduled';
}

/** What may be said about the controls to anyone holding the link: a switch's next deadline is the creator's. */
export function controlsView(controls: NoteTimeControls | undefined, now: Date): TimeControlsView | undefined {
  if (!controls || (controls.shrinkMinutes === null && controls.releaseAt === null)) return undefined;
  const state = releaseStateAt(controls, now);
  return {
    ...(controls.shrinkMinutes !== null ? { shrinkAfterFirstViewMinutes: controls.shrinkMinutes } : {}),
    ...(controls.releaseAt && !controls.silenceHours ? { availableFrom: controls.releaseAt } : {}),
    ...(controls.silenceHours ? { releaseAfterSilenceHours: controls.silenceHours } : {}),
    ...(state ? { releaseState: state } : {}),
  };
}

/** The next deadline of a dead-man's switch after a check-in at `now`. */
export function nextSilenceDeadline(silenceHours: number, now: Date): Date {
  return new Date(now.getTime() + silenceHours * HOUR_MS);
}

/**
 * Announces a due release inside the caller's transaction (DECISIONS 16): marks it (a conditional
 * UPDATE, so among replicas and concurrent reveals exactly one transaction does it), then enqueues
 * the link e-mail kept since creation and `note.released`, and records it on the receipt. Returns the
 * messages, or null when there was nothing to announce.
 */
export async function announceRelease(
  tx: NoteTransaction, lookup: string, state: NoteState, now: Date, webhooks: Pick<NoteWebhooks, 'attach'> | undefined,
): Promise<OutgoingMessage[] | null> {
  const controls = state.controls;
  if (!controls?.releaseAt || controls.releasedAt || controls.releaseAt.getTime() > now.getTime()) return null;
  if (state.expiresAt.getTime() <= now.getTime()) return null;
  if (!(await tx.markReleased(lookup, now))) return null;
  // No request holding the link caused it: no uuid, no access details (DECISIONS 11).
  let messages: OutgoingMessage[] = [noteEventMessage('note.released', { note_id: state.noteRef }, now)];
  if (webhooks) messages = webhooks.attach(messages, { uuid: null, access: null, target: state.webhookBox ?? null });
  if (controls.releaseMail) messages.push(JSON.parse(controls.releaseMail) as OutgoingMessage);
  await tx.enqueue(messages);
  // The note opened at its release time, whenever the announcement got to it.
  await tx.recordReceipt([{ noteRef: state.noteRef, at: controls.releaseAt, kind: 'release', announcedAt: now }]);
  return messages;
}
