/**
 * DECISIONS 5: the limiter never sees an address, only a keyed hash of it, so that neither Redis
 * nor a log holds client addresses. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as the IPv4 address
 * it maps; any other IPv6 address counts per /64, because one host usually owns a whole /64 and
 * could otherwise rotate through 2^64 fresh keys.
 */
export declare function normalizeClientAddress(address: string): string;
/** Eight 16-bit groups from any valid textual IPv6 form (compressed, or with a dotted IPv4 tail). */
export declare function expandIpv6(address: string): number[];
/** HMAC-SHA-256 of the normalized address under the limiter key, hex, 128 bits (plenty against collisions). */
export declare function deriveClientKey(secret: Buffer, address: string): string;
/**
 * deriveClientKey with a bounded memory of recent addresses (an HMAC costs about 9 µs; a busy
 * client asks many times an hour). Oldest entries leave first; nothing of it leaves the process.
 */
export declare function createClientKeyDeriver(secret: Buffer, maxEntries?: number): (address: string) => string;
