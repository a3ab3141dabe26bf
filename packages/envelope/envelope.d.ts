/** Types of envelope.js (plain JavaScript, so that browsers get exactly the bytes the tests check). */
export declare const ENVELOPE_VERSION: 'vz1';
export declare const ENVELOPE_MAX_LENGTH: number;
export declare function toBase64Url(bytes: Uint8Array): string;
export declare function fromBase64Url(text: string): Uint8Array;
export declare function newKey(): string;
export declare function parseKey(fragment: string): Uint8Array | null;
export declare function parseEnvelope(envelope: string): { iv: Uint8Array; sealed: Uint8Array } | null;
export declare function seal(text: string, keyText: string): Promise<string>;
export declare function open(envelope: string, keyText: string): Promise<string>;
export declare function keyCheck(keyText: string): Promise<string>;
export declare function isKeyCheck(value: unknown): value is string;
