/** Types of request-seal.js (plain JavaScript, so that browsers get exactly the bytes the tests check). */
export declare const REQUEST_ENVELOPE_VERSION: 'vr1';
export declare function supported(): Promise<boolean>;
export declare function isKeyText(text: unknown): boolean;
export declare function newKeyPair(): Promise<{ publicKey: string; privateKey: string }>;
export declare function publicKeyOf(privateKey: string): Promise<string>;
export declare function parseRequestEnvelope(text: unknown): { ephemeralPublicKey: string; envelope: string } | null;
export declare function newNoteKeyTo(
  requestPublicKey: string, ephemeral?: { publicKey: string; privateKey: string },
): Promise<{ ephemeralPublicKey: string; key: string }>;
export declare function requestEnvelope(ephemeralPublicKey: string, noteEnvelope: string): string;
export declare function sealTo(
  requestPublicKey: string, text: string, ephemeral?: { publicKey: string; privateKey: string },
): Promise<{ content: string; keyCheck: string; key: string }>;
export declare function noteKeyFor(privateKey: string, ephemeralPublicKey: string): Promise<string>;
export declare function keyCheckFor(privateKey: string, ephemeralPublicKey: string): Promise<string>;
export declare function openFrom(privateKey: string, ephemeralPublicKey: string, noteEnvelope: string): Promise<string>;
