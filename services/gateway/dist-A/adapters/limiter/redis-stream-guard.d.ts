import { Cluster, type Redis } from 'ioredis';
/**
 * ioredis listens for a connection's 'error' with once() (twice: its connector and its client), but
 * a TLS handshake that fails can emit more errors than that, for instance the certificate refusal
 * and then the server's alert. A further 'error' with no listener is thrown by Node's EventEmitter
 * and ends the process (ioredis PR #961, never merged). Every stream the client opens gets a
 * permanent listener that keeps those extra errors: ioredis still sees and reports the first ones.
 * Call it before the client connects (lazyConnect), or its first connection goes unguarded.
 */
export declare function guardStreamErrors(redis: Redis | Cluster): void;
