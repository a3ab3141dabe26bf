/**
 * Errors carry their own HTTP status and machine code, so one handler can turn any of them into
 * the SPEC 7 body without a switch over names.
 */
export interface ErrorBody {
  error: string;
  code: string;
  details: { parameter: string | null; message: string };
}

export interface AppErrorOptions {
  parameter?: string | null;
  cause?: unknown;
  headers?: Record<string, string>;
}

export abstract class AppError extends Error {
  abstract readonly statusCode: number;
  readonly code: string;
  readonly parameter: string | null;
  readonly headers: Record<string, string>;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.parameter = options.parameter ?? null;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return errorBody(this.code, this.message, this.parameter);
  }
}

export function errorBody(code: string, message: string, parameter: string | null = null): ErrorBody {
  return { error: message, code, details: { parameter, message } };
}

export class ValidationError extends AppError {
  readonly statusCode = 400;
}

export class NotFoundError extends AppError {
  readonly statusCode = 404;
  constructor(code = 'NOT_FOUND', message = 'Not found', options?: AppErrorOptions) {
    super(code, message, options);
  }
}

export class NoteNotFoundError extends NotFoundError {
  constructor() {
    super('NOTE_NOT_FOUND', 'Note not found or destroyed');
  }
}

export class ForbiddenError extends AppError {
  readonly statusCode = 403;
}

export class MethodNotAllowedError extends AppError {
  readonly statusCode = 405;
  constructor(allowed: readonly string[]) {
    super('METHOD_NOT_ALLOWED', 'HTTP method not supported', { headers: { Allow: allowed.join(', ') } });
  }
}

export class RateLimitedError extends AppError {
  readonly statusCode = 429;
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super('RATE_LIMITED', 'Rate limit exceeded; wait for the window to reset', {
      headers: { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    });
  }
}

export class InternalError extends AppError {
  readonly statusCode = 500;
  constructor(cause?: unknown) {
    super('INTERNAL_ERROR', 'Internal server error', { cause });
  }
}

/** A dependency that the request needs is down; the client may retry later. */
export class ServiceUnavailableError extends AppError {
  readonly statusCode = 503;
  constructor(message = 'Service temporarily unavailable', cause?: unknown, retryAfterSeconds = 5) {
    super('SERVICE_UNAVAILABLE', message, { cause, headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

/**
 * A 503 because a dependency this service needs (the database, say) cannot be reached: answered
 * like any 503, logged as part of that dependency's outage (DependencyState), never one error per request.
 */
export class DependencyUnavailableError extends ServiceUnavailableError {
  constructor(readonly dependency: string, message = 'Service temporarily unavailable', cause?: unknown, retryAfterSeconds = 5) {
    super(message, cause, retryAfterSeconds);
  }
}

export class UpstreamUnavailableError extends AppError {
  readonly statusCode = 502;
  constructor(cause?: unknown) {
    super('UPSTREAM_UNAVAILABLE', 'Upstream service unavailable', { cause });
  }
}

export class UpstreamTimeoutError extends AppError {
  readonly statusCode = 504;
  constructor(cause?: unknown) {
    super('UPSTREAM_TIMEOUT', 'Upstream service timed out', { cause });
  }
}

/** Anything that is not an AppError is a programmer error or an unexpected failure: hide it. */
export function toAppError(err: unknown): AppError {
  return err instanceof AppError ? err : new InternalError(err);
}
