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

/** How far apart two readings of one server's start may be (whole seconds, read at one statement's start). */
const START_TOLERANCE_SECONDS = 2;

/**
 * One statement, so that the clock and the uptime are read at the same instant (two statements would
 * put the start early by the time between them). MariaDB keeps the status in information_schema;
 * MySQL 8 only in performance_schema (SERVER_INSTANCE_QUERY_MYSQL8).
 */
const instanceQuery = (statusTable: string): string =>
  `SELECT @@hostname AS host, @@port AS port, @@server_id AS serverId, UNIX_TIMESTAMP() - VARIABLE_VALUE AS startedAt FROM ${statusTable} WHERE VARIABLE_NAME = 'Uptime'`;
export const SERVER_INSTANCE_QUERY = instanceQuery('information_schema.GLOBAL_STATUS');
export const SERVER_INSTANCE_QUERY_MYSQL8 = instanceQuery('performance_schema.global_status');

type InstanceRow = { host: unknown; port: unknown; serverId: unknown; startedAt: unknown };

export function serverInstanceFrom(row: InstanceRow | undefined): ServerInstance {
  const startedAt = Number(row?.startedAt);
  if (!row || row.startedAt === null || row.startedAt === undefined || !Number.isFinite(startedAt)) throw new Error('the server did not say when it started');
  return { server: `${String(row.host)}:${String(row.port)}#${String(row.serverId)}`, startedAt };
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
