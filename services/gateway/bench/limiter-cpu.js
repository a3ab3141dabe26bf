// The CPU of the gateway's Redis limit check alone (issue 35): CONC concurrent loops call RedisRateLimiter.consume
// against REDIS_URL for DUR seconds after 1 s of warm-up, and the process's user + system CPU per check is printed.
// BATCHING=pipeline: ioredis's auto-pipelining (main before issue 35); BATCHING=turn (default): commands of one
// event-loop turn on a corked socket, as compose.ts builds the client now. Needs a build (services/gateway/dist).
// Usage: node services/gateway/bench/limiter-cpu.js   (CONC=50 DUR=5 BATCHING=turn|pipeline REDIS_URL=...)
const { join } = require('node:path');
const dist = join(__dirname, '..', 'dist');
const { Redis } = require('ioredis');
const { RedisRateLimiter } = require(join(dist, 'adapters/limiter/redis-rate-limiter.js'));
const { batchWritesPerTurn } = require(join(dist, 'adapters/limiter/redis-turn-batching.js'));

const batching = process.env.BATCHING ?? 'turn';
const CONC = Number(process.env.CONC ?? 50);
const DUR = Number(process.env.DUR ?? 5);
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  enableAutoPipelining: batching === 'pipeline', enableOfflineQueue: false, commandTimeout: 500, maxRetriesPerRequest: 1,
  autoResendUnfulfilledCommands: false,
});
if (batching === 'turn') batchWritesPerTurn(redis);
const logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return logger; }, isEnabled: () => false };
const limiter = new RedisRateLimiter({
  redis, policy: { limits: { create: 1e9, view: 1e9, stats: 1e9 }, windowSeconds: 3600 },
  keyPrefix: `vanish-limiter-cpu-${process.pid}`, retryIntervalMs: 1000, logger,
});

async function run(seconds) {
  let checks = 0;
  let stop = false;
  setTimeout(() => { stop = true; }, seconds * 1000);
  const loop = async () => {
    while (!stop) {
      await limiter.consume('view', '0123456789abcdef0123456789abcdef');
      checks += 1;
    }
  };
  await Promise.all(Array.from({ length: CONC }, loop));
  return checks;
}

redis.once('ready', async () => {
  await run(1);
  const cpu0 = process.cpuUsage();
  const started = Date.now();
  const checks = await run(DUR);
  const cpu = process.cpuUsage(cpu0);
  const elapsed = (Date.now() - started) / 1000;
  console.log(`batching=${batching} concurrency=${CONC} checks/s=${Math.round(checks / elapsed)} ` +
    `cpu µs/check=${((cpu.user + cpu.system) / checks).toFixed(2)} (user ${(cpu.user / checks).toFixed(2)}, system ${(cpu.system / checks).toFixed(2)})`);
  redis.disconnect();
});
