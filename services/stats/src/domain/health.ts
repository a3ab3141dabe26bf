import type { HeartbeatRecord } from './stats-store';

export interface HealthStatus {
  database: 'healthy' | 'unhealthy';
  encryption: 'available' | 'unavailable';
  email: 'configured' | 'not_configured' | 'unhealthy';
}

/** Heartbeats are kept this many periods; older means the component is silent (DECISIONS 6). */
export const SILENT_AFTER_PERIODS = 3;

/**
 * health_status from the heartbeats received within three periods (DECISIONS 6). Notes vouches
 * for database and encryption, the mailer for email. Among fresh reports the worst wins (one
 * replica that cannot reach the database is news); no fresh report at all means unhealthy or
 * unavailable. Nothing here is a constant: every field comes from a heartbeat or its absence.
 */
export function healthFrom(heartbeats: readonly HeartbeatRecord[], now: number, intervalMs: number): HealthStatus {
  const fresh = heartbeats.filter((h) => now - h.observedAt <= SILENT_AFTER_PERIODS * intervalMs);
  const reports = (component: string) => fresh
    .map((h) => h.components[component])
    .filter((v): v is string => typeof v === 'string');
  const database = reports('database');
  const encryption = reports('encryption');
  const email = reports('email');
  return {
    database: database.length > 0 && database.every((v) => v === 'healthy') ? 'healthy' : 'unhealthy',
    encryption: encryption.length > 0 && encryption.every((v) => v === 'available') ? 'available' : 'unavailable',
    email: email.length === 0 || email.some((v) => v !== 'configured' && v !== 'not_configured')
      ? 'unhealthy'
      : email.every((v) => v === 'configured') ? 'configured' : 'not_configured',
  };
}
