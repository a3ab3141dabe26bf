// The asynchronous half of the shim's synchronous HTTP: k6's http.get() blocks, Node's HTTP does not. The
// main thread posts a batch of requests here and sleeps on Atomics.wait; this worker performs them, posts
// the results on the reply port and wakes the main thread (the pattern of synckit and similar tools).
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

const { replyPort, signal } = workerData;
const flag = new Int32Array(signal);
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, rejectUnauthorized: process.env.K6_INSECURE_SKIP_TLS_VERIFY !== 'true' }),
};

function once(request, url, method, body, redirectsLeft) {
  return new Promise((resolve) => {
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    const started = performance.now();
    let connected = started;
    let sent = started;
    let firstByte = started;
    const headers = { ...request.headers };
    if (body !== null && body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    const req = transport.request(target, { method, headers, agent: agents[target.protocol], timeout: request.timeoutMs });
    req.on('socket', (socket) => {
      if (socket.connecting) socket.once('connect', () => { connected = performance.now(); });
      else connected = performance.now();
    });
    req.on('finish', () => { sent = performance.now(); });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`request timeout after ${request.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', (error) => {
      const ended = performance.now();
      resolve({
        url, status: 0, statusText: '', headers: [], body: null, proto: '', error: error.message,
        errorCode: /** @type {NodeJS.ErrnoException} */ (error).code === 'ETIMEDOUT' ? 1050 : 1000,
        timings: { blocked: 0, connecting: connected - started, sending: 0, waiting: 0, receiving: 0, duration: ended - started },
      });
    });
    req.on('response', (res) => {
      firstByte = performance.now();
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('error', (error) => req.emit('error', error));
      res.on('end', () => {
        const ended = performance.now();
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (location && [301, 302, 303, 307, 308].includes(status) && redirectsLeft > 0) {
          const next = new URL(location, url).href;
          const keepMethod = status === 307 || status === 308;
          resolve(once(request, next, keepMethod ? method : (method === 'HEAD' ? 'HEAD' : 'GET'), keepMethod ? body : null, redirectsLeft - 1));
          return;
        }
        const sending = Math.max(0, sent - connected);
        const waiting = Math.max(0, firstByte - Math.max(sent, connected));
        const receiving = Math.max(0, ended - firstByte);
        resolve({
          url, status, statusText: res.statusMessage ?? '', headers: res.rawHeaders, proto: `HTTP/${res.httpVersion}`,
          body: Buffer.concat(chunks).toString(request.binary ? 'base64' : 'utf8'), error: '', errorCode: 0,
          timings: {
            blocked: 0, connecting: Math.max(0, connected - started), tls_handshaking: 0,
            sending, waiting, receiving, duration: sending + waiting + receiving,
          },
        });
      });
    });
    if (body !== null && body !== undefined) req.write(body);
    req.end();
  });
}

if (!parentPort) throw new Error('http-worker.mjs runs as a worker thread');
parentPort.on('message', async (batch) => {
  const results = await Promise.all(batch.map((request) =>
    once(request, request.url, request.method, request.body, request.maxRedirects)));
  replyPort.postMessage(results);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
