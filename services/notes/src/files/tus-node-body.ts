import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ERRORS, StreamLimiter, type CancellationContext, type Server as TusServer, type Upload } from '@tus/server';
import { transferScavenger } from '@vanish/common';

/**
 * @tus/server 2 with the request's body as the Node stream it is. Its `handle(req, res)` wraps the request with
 * srvx, whose body is `Readable.toWeb(req)`, and its PATCH handler makes that a Node stream again
 * (`Readable.fromWeb`): two web-stream steps, with a promise each, for every 64 KiB chunk of an upload, and the
 * garbage that goes with them (docs/performance.md, issue 33). The library has no Node-stream entry point, but it
 * takes any web `Request` (`handleWeb`) and writes a body through its handlers' `writeToStore`, a protected
 * method meant to be overridden. So the request given to tus carries the Node request as its `body`, and the PATCH
 * handler's `writeToStore` reads it directly: every rule of the protocol (offsets, locks, sizes, the hooks, the
 * answers) stays the library's own.
 */
export function serveTusWithNodeBodies(tus: TusServer): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const patch = tus.handlers.PATCH as unknown as { writeToStore: (body: unknown, upload: Upload, maxBodySize: number, context: CancellationContext) => Promise<number> };
  patch.writeToStore = writeToStore.bind(null, tus);
  return async (req, res) => {
    const response = await tus.handleWeb(webRequestOf(req, res));
    const headers: string[] = [];
    response.headers.forEach((value, name) => headers.push(name, value));
    const body = response.body === null ? undefined : Buffer.from(await response.arrayBuffer());
    // As srvx's sendNodeResponse does: an answer already under way is not begun again.
    if (!res.headersSent) res.writeHead(response.status, headers);
    res.end(body);
  };
}

/**
 * The request as tus reads it: method, url and headers as a web Request, `runtime.node` as srvx gives it (tus
 * aborts an upload whose request fails; our hooks find the upload by it), and the Node request as the body.
 */
function webRequestOf(req: IncomingMessage, res: ServerResponse): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.set(name, value);
  }
  // Only the path is read (tus's file id; no creation here, so no address is made from the host).
  const web = new Request(new URL(req.url ?? '/', 'http://localhost'), { method: req.method, headers });
  Object.defineProperty(web, 'body', { value: req.method === 'PATCH' || req.method === 'POST' ? req : null });
  Object.defineProperty(web, 'runtime', { value: { name: 'node', node: { req, res } } });
  return web;
}

/**
 * @tus/server's BaseHandler.writeToStore (2.4.5) with the Node request in place of `Readable.fromWeb` of its web
 * stream; the same steps otherwise. The request is piped through a PassThrough, so that an error of the store or
 * of the limit ends that pipeline without destroying the request (the client then reads the answer, not a hang-up);
 * a failing request (the client went away) ends the PassThrough and the bytes so far are kept, as tus does.
 * (tus's progress event, POST_RECEIVE, is not emitted: nothing here listens to it.)
 */
async function writeToStore(tus: TusServer, body: unknown, upload: Upload, maxBodySize: number, context: CancellationContext): Promise<number> {
  if (context.signal.aborted) throw ERRORS.ABORTED;
  const request = body as IncomingMessage;
  const proxy = new PassThrough();
  let sourceError: unknown;
  let hasSourceError = false;
  const onSourceError = (error: unknown) => {
    sourceError = error;
    hasSourceError = true;
    request.unpipe(proxy);
    if (!context.signal.aborted) proxy.destroy(error as Error);
  };
  request.on('error', onSourceError);
  // Each body piece is a fresh Buffer (see TransferScavenger); counted once the pipe reads the request.
  const onData = (chunk: Buffer) => transferScavenger.moved(chunk.length);
  const onAbort = () => {
    request.unpipe(proxy);
    if (!proxy.destroyed) proxy.end();
  };
  context.signal.addEventListener('abort', onAbort, { once: true });
  try {
    // At run time the destination is handed the limiter itself (a Readable), as in tus.
    const written: Promise<number> = pipeline(request.pipe(proxy), new StreamLimiter(maxBodySize), async (limited: AsyncIterable<Buffer>) =>
      tus.datastore.write(limited as unknown as Readable, upload.id, upload.offset));
    request.on('data', onData);
    return await written;
  } catch (error) {
    request.unpipe(proxy);
    const isSourceError = hasSourceError && error === sourceError;
    const isAbortError = error instanceof Error && error.name === 'AbortError';
    throw isSourceError || isAbortError ? ERRORS.ABORTED : error;
  } finally {
    request.off('error', onSourceError);
    request.off('data', onData);
    context.signal.removeEventListener('abort', onAbort);
  }
}
