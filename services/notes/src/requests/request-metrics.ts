import { Counter, type Registry } from '@vanish/common';
import type { RequestMetricsObserver } from './request-service';

/** The requests' counters (DECISIONS 15): fixed labels only, never an id, a reference or an address. */
export function createRequestMetrics(registry: Registry): RequestMetricsObserver {
  const created = new Counter({ name: 'notes_requests_created_total', help: 'Requests (drop boxes) created', registers: [registry] });
  const submissions = new Counter({
    name: 'notes_request_submissions_total',
    help: 'Submissions to requests, by outcome (accepted, or closed: past the count or date, or closed by the requester)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const opened = new Counter({ name: 'notes_request_submissions_opened_total', help: 'Submissions revealed from an inbox', registers: [registry] });
  const closed = new Counter({ name: 'notes_requests_closed_total', help: 'Requests closed early from their inbox', registers: [registry] });
  for (const outcome of ['accepted', 'closed']) submissions.inc({ outcome }, 0);
  return {
    created: () => created.inc(),
    submitted: (outcome) => submissions.inc({ outcome }),
    opened: () => opened.inc(),
    closedEarly: () => closed.inc(),
  };
}
