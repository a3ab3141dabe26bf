/** Checks file-stream.js against file-stream.json; resolves with the number of checks made. */
declare function verify(vectors: unknown, fileStream: unknown): Promise<number>;
export = verify;
