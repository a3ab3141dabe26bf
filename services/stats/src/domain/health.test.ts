import { healthFrom } from './health';

const NOW = 1_000_000;
const PERIOD = 1_000;
const beat = (service: string, instance: string, components: Record<string, string>, ageMs: number) =>
  ({ service, instance, components, observedAt: NOW - ageMs });

describe('healthFrom', () => {
  it('when fresh heartbeats report every component fine, then health_status says so', () => {
    expect(healthFrom([
      beat('notes', 'a', { database: 'healthy', encryption: 'available' }, 500),
      beat('mailer', 'm', { email: 'configured' }, 2_900),
    ], NOW, PERIOD)).toEqual({ database: 'healthy', encryption: 'available', email: 'configured' });
  });

  it('when nothing was heard, then every component is down', () => {
    expect(healthFrom([], NOW, PERIOD)).toEqual({ database: 'unhealthy', encryption: 'unavailable', email: 'unhealthy' });
  });

  it('when a service has been silent for more than three periods, then its components are down', () => {
    expect(healthFrom([
      beat('notes', 'a', { database: 'healthy', encryption: 'available' }, 3_001),
      beat('mailer', 'm', { email: 'not_configured' }, 10),
    ], NOW, PERIOD)).toEqual({ database: 'unhealthy', encryption: 'unavailable', email: 'not_configured' });
  });

  it('when one replica reports its database unhealthy, then the worst fresh report wins', () => {
    expect(healthFrom([
      beat('notes', 'a', { database: 'healthy', encryption: 'available' }, 10),
      beat('notes', 'b', { database: 'unhealthy', encryption: 'available' }, 10),
    ], NOW, PERIOD).database).toBe('unhealthy');
  });

  it('when the mailer reports an unknown or unhealthy state, then email is unhealthy', () => {
    expect(healthFrom([beat('mailer', 'm', { email: 'unhealthy' }, 10)], NOW, PERIOD).email).toBe('unhealthy');
    expect(healthFrom([beat('mailer', 'm', { email: 'on_fire' }, 10)], NOW, PERIOD).email).toBe('unhealthy');
  });
});
