import type { Redis } from 'ioredis';

/**
 * Commands given to one Redis connection during one turn of the event loop leave in one write: the
 * connection's socket is corked by the first command of a turn and uncorked when the turn ends
 * (setImmediate runs after the turn's I/O callbacks, so the limit checks of every request parsed in
 * that turn go together).
 *
 * This replaces ioredis's auto-pipelining on a single Redis or a Sentinel-chosen primary (issue 35):
 * auto-pipelining builds a Pipeline object (with a copy of every command and script method) and its
 * promise for each batch, about 5 KB of garbage per batch, and at the gateway's usual batch of one or a
 * few commands that costs more than the send it saves; a corked socket batches the sends the same way
 * with nothing built. Commands keep ioredis's own path (timeouts, replies, reconnects); a command
 * while the connection is not ready is refused by ioredis as before (no offline queue). A Cluster keeps
 * auto-pipelining: its commands go to several connections chosen per slot.
 */
export function batchWritesPerTurn(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Redis['stream'] | undefined;
  const uncork = (): void => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream;
    if (corked === undefined && stream === undefined && socket !== undefined && redis.status === 'ready') {
      corked = socket;
      socket.cork();
      setImmediate(uncork);
    }
    return send(command, stream);
  };
}
