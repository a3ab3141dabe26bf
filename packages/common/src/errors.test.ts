import { InternalError, MethodNotAllowedError, RateLimitedError, ValidationError, toAppError } from './errors';

describe('errors', () => {
  it('when a validation error is rendered, then it has the SPEC 7 body', () => {
    const err = new ValidationError('INVALID_CONTENT', 'Content must not be empty', { parameter: 'content' });
    expect(err.statusCode).toBe(400);
    expect(err.toBody()).toEqual({
      error: 'Content must not be empty',
      code: 'INVALID_CONTENT',
      details: { parameter: 'content', message: 'Content must not be empty' },
    });
  });

  it('when an unknown error is converted, then nothing of it shows in the body', () => {
    const err = toAppError(new Error('ER_ACCESS_DENIED at /srv/app/db.js:12'));
    expect(err).toBeInstanceOf(InternalError);
    expect(JSON.stringify(err.toBody())).not.toContain('ER_ACCESS');
  });

  it('when a method is not allowed or a limit is hit, then the answer headers come with the error', () => {
    expect(new MethodNotAllowedError(['GET', 'HEAD', 'OPTIONS']).headers.Allow).toBe('GET, HEAD, OPTIONS');
    expect(new RateLimitedError(12.2).headers['Retry-After']).toBe('13');
  });
});
