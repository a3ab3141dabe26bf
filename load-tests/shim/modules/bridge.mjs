// Synchronous HTTP for the shim: post a batch to the worker, block on Atomics.wait until it answers.
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

/** @type {{ worker: Worker, port: import('node:worker_threads').MessagePort, flag: Int32Array } | undefined} */
let bridge;

function start() {
  const signal = new SharedArrayBuffer(4);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('../http-worker.mjs', import.meta.url), {
    workerData: { replyPort: port2, signal },
    transferList: [port2],
  });
  worker.unref();
  bridge = { worker, port: port1, flag: new Int32Array(signal) };
  return bridge;
}

/**
 * Performs the requests (concurrently) and returns their results, blocking the caller meanwhile.
 * @param {object[]} batch
 * @returns {any[]}
 */
export function sendSync(batch) {
  const { worker, port, flag } = bridge ?? start();
  Atomics.store(flag, 0, 0);
  worker.postMessage(batch);
  // Generous bound: each request has its own timeout; this only catches a dead worker.
  const outcome = Atomics.wait(flag, 0, 0, 10 * 60 * 1000);
  if (outcome === 'timed-out') throw new Error('the shim HTTP worker did not answer in 10 minutes');
  const reply = receiveMessageOnPort(port);
  if (!reply) throw new Error('the shim HTTP worker woke the main thread without an answer');
  return reply.message;
}

export async function closeBridge() {
  if (bridge) await bridge.worker.terminate();
  bridge = undefined;
}
