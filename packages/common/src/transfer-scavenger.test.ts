import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { runInNewContext } from 'node:vm';
import { TransferScavenger, minorCollection } from './transfer-scavenger';

describe('TransferScavenger', () => {
  it('scavenges once per `everyBytes` moved, and not before', () => {
    let scavenges = 0;
    const scavenger = new TransferScavenger(1000, () => () => { scavenges += 1; });
    scavenger.moved(400);
    scavenger.moved(500);
    expect(scavenges).toBe(0);
    scavenger.moved(100);
    expect(scavenges).toBe(1);
    for (let i = 0; i < 3; i += 1) scavenger.moved(1000);
    expect(scavenges).toBe(4);
  });

  it('does nothing where no collection can be asked for', () => {
    const scavenger = new TransferScavenger(1, () => null);
    expect(() => { scavenger.moved(10); scavenger.moved(10); }).not.toThrow();
  });

  it('asks V8 for a minor collection, with gc left unexposed to every other context', async () => {
    const seen: PerformanceEntry[] = [];
    const observer = new PerformanceObserver((list) => { seen.push(...list.getEntries()); });
    observer.observe({ entryTypes: ['gc'] });
    const scavenge = minorCollection();
    expect(scavenge).not.toBeNull();
    scavenge!();
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    expect(seen.some((entry) => (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)).toBe(true);
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
