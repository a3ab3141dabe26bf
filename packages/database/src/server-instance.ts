/**
 * Which server process a MySQL/MariaDB connection is on: the server's name, port and server id, and
 * when it started. A connection id (CONNECTION_ID(), mysql2's threadId) names a connection only on
 * the server process that gave it: a restarted server, or the replica promoted in a failover, hands
 * the same ids to other connections. Recorded once per pooled connection (configureKnex's
 * `recordServerInstance`), so that an id is only ever acted on where it was given.
 */
export interface ServerInstance {
  /** @@hostname:@@port#@@server_id */
  server: string;
  /** Unix seconds, from UNIX_TIMESTAMP() - Uptime: exact to a second or two. */
  startedAt: number;
}

/** How far apart two readings of one server's start may be (both clocks tick in whole seconds). */
const START_TOLERANCE_SECONDS = 2;

export const SERVER_NAME_QUERY = 'SELECT @@hostname AS host, @@port AS port, @@server_id AS serverId, UNIX_TIMESTAMP() AS now';
/** Works on MariaDB and MySQL alike, with no privilege (MySQL 8 has no information_schema.GLOBAL_STATUS). */
export const SERVER_UPTIME_QUERY = "SHOW GLOBAL STATUS LIKE 'Uptime'";

type NameRow = { host: unknown; port: unknown; serverId: unknown; now: unknown };
type UptimeRow = { Variable_name?: unknown; Value?: unknown };

export function serverInstanceFrom(nameRow: NameRow, uptimeRow: UptimeRow): ServerInstance {
  const now = Number(nameRow.now);
  const uptime = Number(uptimeRow.Value);
  if (!Number.isFinite(now) || !Number.isFinite(uptime)) throw new Error('the server did not say when it started');
  return { server: `${String(nameRow.host)}:${String(nameRow.port)}#${String(nameRow.serverId)}`, startedAt: now - uptime };
}

export function sameServerInstance(a: ServerInstance, b: ServerInstance): boolean {
  return a.server === b.server && Math.abs(a.startedAt - b.startedAt) <= START_TOLERANCE_SECONDS;
}

const instances = new WeakMap<object, ServerInstance>();

/** The instance recorded for a pooled mysql2 connection when it was made, if configureKnex was asked to. */
export function serverInstanceOf(connection: object): ServerInstance | undefined {
  return instances.get(connection);
}

export function recordServerInstance(connection: object, instance: ServerInstance): void {
  instances.set(connection, instance);
}
