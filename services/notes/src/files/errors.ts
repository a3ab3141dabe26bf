import { AppError, type AppErrorOptions } from '@vanish/common';

/** 413: what was declared or sent is more than a limit allows (FILES_TOO_LARGE, UPLOAD_TOO_LARGE). */
export class PayloadTooLargeError extends AppError {
  readonly statusCode = 413;
}

/** 409: the request conflicts with the state of the note or the upload (UPLOAD_INCOMPLETE, UPLOAD_COMPLETE, OFFSET_MISMATCH). */
export class ConflictError extends AppError {
  readonly statusCode = 409;
}

/** 410 DOWNLOAD_EXPIRED: the download address was good and its window has passed. */
export class GoneError extends AppError {
  readonly statusCode = 410;
}

/** 416 RANGE_NOT_SATISFIABLE (with Content-Range: bytes * /size). */
export class RangeNotSatisfiableError extends AppError {
  readonly statusCode = 416;
  constructor(size: number, options: AppErrorOptions = {}) {
    super('RANGE_NOT_SATISFIABLE', `The range is outside the file (${size} bytes)`, { ...options, headers: { 'Content-Range': `bytes */${size}` } });
  }
}

/** 412 TUS_VERSION_REQUIRED, 400s of the upload protocol: a client that does not speak tus 1.0.0. */
export class PreconditionFailedError extends AppError {
  readonly statusCode = 412;
}

/** 415 INVALID_CONTENT_TYPE: a tus PATCH whose body is not application/offset+octet-stream. */
export class UnsupportedMediaTypeError extends AppError {
  readonly statusCode = 415;
}
