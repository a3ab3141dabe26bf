import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A young-generation collection (a scavenge) after every `everyBytes` of file bytes moved, so that the Buffers a
 * large transfer leaves behind are freed within a few MB instead of piling up to a full collection.
 *
 * Why: each socket read, HTTP body piece and file read of a transfer is a fresh Buffer, memory outside V8's heap.
 * A scavenge frees the dead ones, but scavenges come when the young generation fills with JavaScript objects, and
 * a transfer makes few of them per byte: with the services' semi-spaces (8 to 16 MiB) scavenges came too seldom,
 * after tens of MB of file or more. The Buffers piled up until their external memory (about 64 MB) started a full
 * collection, and glibc gave their pages back and took (and zeroed) them again: each process handling a file grew
 * by 70 to 90 MB and spent a third to a half of its CPU per GiB on that (docs/performance.md, "Files: where the
 * CPU and the memory go").
 * A smaller young generation for the whole process does the same for files but costs the other requests about half
 * again as much CPU; this asks for a scavenge only where file bytes move, and never when none do.
 *
 * The collection is asked for through V8's own `gc` function, which node gives a new context once `--expose-gc` is
 * set (the flag is set back at once: nothing else sees it). Where that is not possible, nothing is done.
 */
export class TransferScavenger {
  private pending = 0;
  private scavenge: (() => void) | null | undefined;

  /** `makeScavenge` is for tests: by default V8's own minor collection. */
  constructor(private readonly everyBytes: number, private readonly makeScavenge: () => (() => void) | null = minorCollection) {}

  /** Counts bytes of a file moved (read, written, relayed); every `everyBytes`, one scavenge. */
  moved(bytes: number): void {
    this.pending += bytes;
    if (this.pending < this.everyBytes) return;
    this.pending = 0;
    if (this.scavenge === undefined) this.scavenge = this.makeScavenge();
    this.scavenge?.();
  }
}

export function minorCollection(): (() => void) | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as ((options: { type: 'minor' }) => void) | undefined;
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? () => gc({ type: 'minor' }) : null;
  } catch {
    return null;
  }
}

/**
 * The process's one scavenger for file transfers (the young generation is the process's, so the all-in-one's
 * gateway and notes share it): a scavenge per 8 MiB moved.
 */
export const transferScavenger = new TransferScavenger(8 * 1024 * 1024);
