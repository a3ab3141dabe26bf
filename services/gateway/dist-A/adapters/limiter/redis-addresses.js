"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.readAddressList = readAddressList;
/**
 * A `host:port,host:port,...` list (IPv6 in brackets) from one variable: REDIS_SENTINELS or
 * REDIS_CLUSTER_NODES. Bad entries and an empty list are reported as problems of that variable.
 */
function readAddressList(reader, variable, list, what) {
    const addresses = [];
    for (const entry of list.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
        const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry);
        const port = match ? Number(match[2]) : Number.NaN;
        if (!match || port < 1 || port > 65_535) {
            reader.problem(`${variable}: expected host:port entries, comma-separated, got "${entry}"`);
            continue;
        }
        addresses.push({ host: match[1], port });
    }
    if (addresses.length === 0)
        reader.problem(`${variable}: no ${what} given`);
    return addresses;
}
//# sourceMappingURL=redis-addresses.js.map