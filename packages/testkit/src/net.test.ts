import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort, waitFor } from './net';

describe('freePort', () => {
  it('when asked many times, then every port is different, bindable, and below the ephemeral range', async () => {
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports: number[] = [];
    for (let i = 0; i < 40; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20000);
      expect(port).toBeLessThan(ephemeralLow);
    }
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(ports[0], '127.0.0.1', resolve); });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('when the first port it tries is taken by a server, then it passes it over for another', async () => {
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const taken = net.createServer();
    let takenPort = 0;
    for (let port = 20000; takenPort === 0 && port < ephemeralLow; port += 97) {
      takenPort = await new Promise<number>((resolve) => {
        taken.once('error', () => resolve(0));
        taken.listen(port, '127.0.0.1', () => resolve(port));
      });
    }
    // Its first draw lands on the taken port; the draws after it are random again.
    const random = jest.spyOn(Math, 'random').mockReturnValueOnce((takenPort - 20000 + 0.5) / (ephemeralLow - 20000));
    try {
      const port = await freePort();
      expect(random).toHaveBeenCalledTimes(2);
      expect(port).not.toBe(takenPort);
    } finally {
      random.mockRestore();
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});

describe('waitFor', () => {
  it('when the predicate becomes truthy, then it resolves with its value', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? `done after ${calls}` : undefined), { intervalMs: 1 });
    expect(value).toBe('done after 3');
  });

  it('when the predicate throws for a while, then that counts as not yet', async () => {
    let calls = 0;
    const value = await waitFor(async () => {
      if (++calls < 3) throw new Error('not yet');
      return calls;
    }, { intervalMs: 1 });
    expect(value).toBe(3);
  });

  it('when it never holds, then it rejects after the bound, naming the condition and the last error', async () => {
    await expect(
      waitFor(() => { throw new Error('still down'); }, { timeoutMs: 30, intervalMs: 5, description: 'the database' }),
    ).rejects.toThrow('waitFor: the database not met within 30 ms (last error: still down)');
  });
});
