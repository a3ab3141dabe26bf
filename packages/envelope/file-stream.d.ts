/** Types of file-stream.js (plain JavaScript, so that browsers get exactly the bytes the tests check). */
export interface FileEntry { name: string; type: string; size: number; nonce: string }
export interface OpenedNote { text: string; files: FileEntry[] | null }
export interface StreamWorker { push(chunk: Uint8Array): Promise<Uint8Array[]>; finish(): Promise<Uint8Array[]> }
export type FileStreamErrorCode = 'TRUNCATED' | 'EXTENDED' | 'SEGMENT_CHANGED' | 'MALFORMED' | 'MANIFEST' | 'ENVELOPE' | 'TOO_LONG';
export declare const SEGMENT_BYTES: 65536;
export declare const TAG_BYTES: 16;
export declare const SEALED_SEGMENT_BYTES: 65552;
export declare const FILE_NONCE_BYTES: 16;
export declare const FILE_KEY_INFO: 'vanish file v1';
export declare const NAME_MAX_BYTES: 255;
export declare function toBase64Url(bytes: Uint8Array): string;
export declare function fromBase64Url(text: string): Uint8Array;
export declare function segmentCount(plainSize: number): number;
export declare function sealedSize(plainSize: number): number;
export declare function plainSize(sealedSize: number): number | null;
export declare function newFileNonce(): string;
export declare function fileKeyBytes(keyText: string, nonceText: string): Promise<Uint8Array>;
export declare function fileKey(keyText: string, nonceText: string): Promise<CryptoKey>;
export declare function segmentNonce(index: number, last: boolean): Uint8Array;
/** A host's own AES-256-GCM under the file key's bytes (the CLI's node:crypto): ciphertext || tag; null when it does not open. */
export interface HostCipher { seal(iv: Uint8Array, plain: Uint8Array): Uint8Array; open(iv: Uint8Array, sealed: Uint8Array): Uint8Array | null }
export type SegmentKey = CryptoKey | HostCipher;
export type MakeKey = (fileKeyBytes: Uint8Array) => SegmentKey | Promise<SegmentKey>;
export declare function sealSegment(aesKey: SegmentKey, index: number, last: boolean, plain: Uint8Array): Promise<Uint8Array>;
export declare function openSegment(aesKey: SegmentKey, index: number, last: boolean, sealed: Uint8Array): Promise<Uint8Array | null>;
export declare function createSealer(keyText: string, nonceText: string, makeKey?: MakeKey): StreamWorker;
export declare function createOpener(keyText: string, nonceText: string, expectedPlainSize?: number, makeKey?: MakeKey): StreamWorker;
export declare function sealTransform(keyText: string, nonceText: string): TransformStream<Uint8Array, Uint8Array>;
export declare function openTransform(keyText: string, nonceText: string, expectedPlainSize?: number): TransformStream<Uint8Array, Uint8Array>;
export declare function sealRange(aesKey: SegmentKey, size: number, start: number, end: number, readPlain: (offset: number, length: number) => Promise<Uint8Array> | Uint8Array): AsyncIterableIterator<Uint8Array>;
export declare function newFileEntry(name: string, type: string, size: number): FileEntry;
export declare function sealManifest(text: string, files: FileEntry[], keyText: string, ivForTestVectors?: Uint8Array): Promise<string>;
export declare function openNote(envelope: string, keyText: string): Promise<OpenedNote>;
