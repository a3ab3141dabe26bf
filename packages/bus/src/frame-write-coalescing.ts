import type { ChannelModel } from 'amqplib';

/** The parts of amqplib's connection this reaches into (amqplib 0.10: lib/connection.js and lib/mux.js). */
interface AmqplibInternals {
  connection?: {
    stream?: { cork?: () => void; uncork?: () => void };
    muxer?: { _readIncoming?: (this: unknown) => void };
  };
}

/**
 * amqplib's multiplexer writes each queued frame to the socket with its own `write`, and Node sends
 * each write at once: a relay round of a hundred publishes, or a hundred acks after one batch
 * commits, costs a hundred send syscalls, and on loopback each of them also runs the receiver's
 * network stack in the sender's time (the largest item in the profiles of notes and stats under a
 * create load). Corking the socket for the length of one multiplexer round sends all the frames of
 * the round in one writev. Frame order and flow control are unchanged: a corked write still answers
 * false past the high-water mark, and the multiplexer then waits for 'drain' as before.
 *
 * Returns false, changing nothing, when amqplib's internals are not what this expects (a later
 * amqplib): frames are then written one by one, as amqplib does by itself.
 */
export function coalesceFrameWrites(model: ChannelModel): boolean {
  const connection = (model as unknown as AmqplibInternals).connection;
  const stream = connection?.stream;
  const muxer = connection?.muxer;
  const writeRound = muxer?._readIncoming;
  if (!stream || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function' || !muxer || typeof writeRound !== 'function') {
    return false;
  }
  const socket = stream as { cork(): void; uncork(): void };
  muxer._readIncoming = function writeRoundCorked(this: unknown): void {
    socket.cork();
    try {
      writeRound.call(this);
    } finally {
      socket.uncork();
    }
  };
  return true;
}
