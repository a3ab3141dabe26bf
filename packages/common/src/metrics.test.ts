import { Counter, createRegistry } from './metrics';

describe('createRegistry', () => {
  it('when two services of one process each have a registry, then each scrape shows the default metrics with its own service label, collected once', async () => {
    const notes = createRegistry('notes');
    const stats = createRegistry('stats');

    const notesText = await notes.metrics();
    const statsText = await stats.metrics();

    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_gc_duration_seconds']) {
      expect(notesText).toContain(`# TYPE ${name} `);
      expect(statsText).toContain(`# TYPE ${name} `);
    }
    expect(notesText).toMatch(/^process_cpu_user_seconds_total\{service="notes"\} /m);
    expect(statsText).toMatch(/^process_cpu_user_seconds_total\{service="stats"\} /m);
    expect(notesText).not.toContain('service="stats"');
    // The same metric objects: one event-loop histogram, one GC observer per process.
    expect(notes.getSingleMetric('nodejs_eventloop_lag_p99_seconds')).toBe(stats.getSingleMetric('nodejs_eventloop_lag_p99_seconds'));
  });

  it("when a service registers its own metric, then only that service's scrape shows it", async () => {
    const notes = createRegistry('notes');
    const stats = createRegistry('stats');
    new Counter({ name: 'notes_only_total', help: 'a metric of one service', registers: [notes] }).inc();

    expect(await notes.metrics()).toContain('notes_only_total{service="notes"} 1');
    expect(await stats.metrics()).not.toContain('notes_only_total');
  });

  it('when asked without defaults, then the registry has no process metrics', async () => {
    expect(await createRegistry('test', false).metrics()).not.toContain('process_cpu_user_seconds_total');
  });
});
