'use strict';
// The all-in-one's hop from the gateway to a service in the same process, two ways, interleaved in one
// process (not a test; nothing asserts on speed): (a) relayed over loopback with undici (the gateway's
// client and the service's server both in this process, as the all-in-one ran until issue 35), (b)
// handed over in process (InProcessDispatcher: no socket, no second HTTP parse). The gateway is the real
// one (door, memory limiter, relay); the service is an express app answering a note's metadata, served by
// common's listen(). A load of 50 requests at a time comes from undici in this same process (the same
// for both). CPU is this process's user + system time per request (process.cpuUsage): what the hop
// costs the one process, hardly moved by other work on the machine; of the rounds, the lowest of each
// is printed with the spread. Build first (npm run build).
//   node services/gateway/bench/in-process-hop.bench.js [rounds] [requests per round]
const express = require('express');
const { Agent } = require('undici');
const { listen, appServedHere } = require('@vanish/common');
const { createGatewayService, loadGatewayConfig } = require('@vanish/gateway');

const IN_FLIGHT = 50;
const NOTE = '00000000-0000-4000-8000-000000000000';
const BODY = { success: true, note: { uuid: NOTE, has_passcode: false, expiry_type: 'time', expires_at: '2030-01-01 00:00:00', max_views: 100, current_views: 0, is_destroyed: false, created_at: '2029-12-31 00:00:00' } };

async function startGateway(upstreamUrl, inProcess) {
  const config = loadGatewayConfig({
    PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', LIMITER_KEY: Buffer.alloc(32, 7).toString('base64'),
    NOTES_URL: upstreamUrl, STATS_URL: upstreamUrl, MAILER_URL: upstreamUrl,
    RATE_LIMIT_VIEW_PER_HOUR: '1000000', RATE_LIMIT_CREATE_PER_HOUR: '1000000', RATE_LIMIT_STATS_PER_HOUR: '1000000',
  });
  const service = await createGatewayService(config, inProcess ? { localUpstreams: appServedHere } : {});
  const { port } = await service.start();
  return { service, url: `http://127.0.0.1:${port}` };
}

async function cpuPerRequest(client, origin, count) {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < count) {
      next += 1;
      const res = await client.request({ origin, path: `/api/view/${NOTE}.php`, method: 'GET' });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}`);
    }
  }));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

async function main() {
  const rounds = Number(process.argv[2] ?? 5);
  const count = Number(process.argv[3] ?? 5000);
  const app = express();
  app.use((_req, res) => { res.set('API-Version', '1.2.0'); res.json(BODY); });
  const upstream = await listen(app, 0, '127.0.0.1');
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const variants = {
    'relayed over loopback (undici)': await startGateway(upstreamUrl, false),
    'handed over in process': await startGateway(upstreamUrl, true),
  };
  const client = new Agent({ connections: IN_FLIGHT });
  const results = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const { url } of Object.values(variants)) await cpuPerRequest(client, url, 1000); // warm-up
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, { url }] of Object.entries(variants)) results[name].push(await cpuPerRequest(client, url, count));
  }
  for (const [name, values] of Object.entries(results)) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`${name}: ${sorted[0].toFixed(0)} µs of CPU per request (rounds ${values.map((v) => v.toFixed(0)).join(', ')})`);
  }
  await client.close();
  for (const { service } of Object.values(variants)) await service.stop();
  await upstream.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
