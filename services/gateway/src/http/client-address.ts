import type { Request } from 'express';

/**
 * The client's address as express reads it under TRUST_PROXY (`req.ip`), else the socket's, read once
 * per request: the limit and the relay both need it, and every read of `req.ip` walks X-Forwarded-For
 * and the trust setting again (issue 35). Kept on the answer's locals, which live as long as the request.
 */
export function clientAddress(req: Request): string | undefined {
  const locals = req.res?.locals;
  if (locals?.clientAddress !== undefined) return locals.clientAddress as string;
  const address = req.ip ?? req.socket.remoteAddress;
  if (locals && address !== undefined) locals.clientAddress = address;
  return address;
}
