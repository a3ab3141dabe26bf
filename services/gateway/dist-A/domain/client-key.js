"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.normalizeClientAddress = normalizeClientAddress;
exports.expandIpv6 = expandIpv6;
exports.deriveClientKey = deriveClientKey;
exports.createClientKeyDeriver = createClientKeyDeriver;
const node_crypto_1 = require("node:crypto");
const node_net_1 = require("node:net");
/**
 * DECISIONS 5: the limiter never sees an address, only a keyed hash of it, so that neither Redis
 * nor a log holds client addresses. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as the IPv4 address
 * it maps; any other IPv6 address counts per /64, because one host usually owns a whole /64 and
 * could otherwise rotate through 2^64 fresh keys.
 */
function normalizeClientAddress(address) {
    let text = address.trim();
    if (text.startsWith('[') && text.endsWith(']'))
        text = text.slice(1, -1);
    const zone = text.indexOf('%');
    if (zone >= 0)
        text = text.slice(0, zone);
    if ((0, node_net_1.isIPv4)(text))
        return text;
    if (!(0, node_net_1.isIPv6)(text))
        return `other:${text}`;
    const groups = expandIpv6(text);
    const isMapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
    if (isMapped)
        return `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`;
    return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}
/** Eight 16-bit groups from any valid textual IPv6 form (compressed, or with a dotted IPv4 tail). */
function expandIpv6(address) {
    let text = address.toLowerCase();
    const lastColon = text.lastIndexOf(':');
    const last = text.slice(lastColon + 1);
    if ((0, node_net_1.isIPv4)(last)) {
        const [a, b, c, d] = last.split('.').map(Number);
        text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }
    const [head = '', rest] = text.split('::');
    const parse = (part) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
    const headGroups = parse(head);
    const restGroups = rest === undefined ? [] : parse(rest);
    const zeros = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
    return [...headGroups, ...new Array(zeros).fill(0), ...restGroups];
}
/** HMAC-SHA-256 of the normalized address under the limiter key, hex, 128 bits (plenty against collisions). */
function deriveClientKey(secret, address) {
    return (0, node_crypto_1.createHmac)('sha256', secret).update(normalizeClientAddress(address)).digest('hex').slice(0, 32);
}
/**
 * deriveClientKey with a bounded memory of recent addresses (an HMAC costs about 9 µs; a busy
 * client asks many times an hour). Oldest entries leave first; nothing of it leaves the process.
 */
function createClientKeyDeriver(secret, maxEntries = 10_000) {
    const recent = new Map();
    return (address) => {
        const known = recent.get(address);
        if (known !== undefined)
            return known;
        const key = deriveClientKey(secret, address);
        if (recent.size >= maxEntries)
            recent.delete(recent.keys().next().value);
        recent.set(address, key);
        return key;
    };
}
//# sourceMappingURL=client-key.js.map