import { connect } from 'node:net';
import express from 'express';
import { listen } from '@vanish/common';
import { bodyDeadline } from '../src/files/file-routes';

/**
 * The notes listener has no whole-request deadline (uploads take as long as they move); every other
 * body keeps one (issue 33). A real socket that sends half a body and then nothing.
 */
describe('the body deadline of the notes listener', () => {
  const app = express();
  app.use(bodyDeadline(300));
  app.all('/*path', (req, res) => {
    req.resume();
    req.on('end', () => res.status(204).end());
  });

  const halfABody = async (port: number, method: string, path: string, waitMs: number): Promise<string> => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => { received += chunk.toString('latin1'); });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Type: application/offset+octet-stream\r\n\r\nhalf`);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, waitMs))]);
    socket.destroy();
    return received;
  };

  it('when a form or JSON body stalls, then it is answered 408 and closed; when an upload stalls, then the deadline leaves it to its idle timeout', async () => {
    const server = await listen(app, 0, '127.0.0.1');
    server.server.requestTimeout = 0;
    try {
      expect(await halfABody(server.port, 'POST', '/api/create.php', 3000)).toMatch(/^HTTP\/1\.1 408 /);
      expect(await halfABody(server.port, 'POST', '/1b4e28ba-2fa1-41d2-883f-0016d3cca427', 3000)).toMatch(/^HTTP\/1\.1 408 /);
      expect(await halfABody(server.port, 'PATCH', `/files/uploads/${'A'.repeat(43)}`, 1000)).toBe('');
    } finally {
      await server.close();
    }
  });
});
