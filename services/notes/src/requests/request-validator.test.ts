import { ValidationError } from '@vanish/common';
import { parseOrigin, validateCreateRequest, validateSubmission } from './request-validator';

const KEY = 'B6N8vBQgk8i3VdwbEOhstCY3StFqqFPtC9_AsrhtHHw';
const ENVELOPE = 'vr1.ST6C_HRGSlkmiBdiPSBTxeuOLMSpiLT-4XnsawENUx0.58yREXUEKkKa3CoT.g8vi4wr0T_-9Y6HyIF8zcjXemph3eUlW6LXQZhYkU00eyDk';
const codeOf = (work: () => unknown): string | undefined => {
  try {
    work();
    return undefined;
  } catch (err) {
    return err instanceof ValidationError ? `${err.code}:${err.parameter}` : String(err);
  }
};

describe('the requests\' validation (DECISIONS 15)', () => {
  it('when only the key and the label are given, then the defaults are one answer, seven days, one view, no files, no origins', () => {
    expect(validateCreateRequest({ public_key: KEY, label: 'please' }, { production: false })).toEqual({
      publicKey: KEY, label: 'please', maxSubmissions: 1, openDays: 7, allowFiles: false, expiryType: 'view', expiryHours: 24, maxViews: 1,
      notificationEmail: null, webhookUrl: null, allowedOrigins: [],
    });
  });

  it.each([
    [{ public_key: 'x', label: 'a' }, 'INVALID_PUBLIC_KEY:public_key'],
    [{ public_key: 'A'.repeat(43), label: 'a' }, 'INVALID_PUBLIC_KEY:public_key'],
    [{ public_key: KEY }, 'INVALID_LABEL:label'],
    [{ public_key: KEY, label: '  ' }, 'INVALID_LABEL:label'],
    [{ public_key: KEY, label: '🔑'.repeat(501) }, 'LABEL_TOO_LONG:label'],
    [{ public_key: KEY, label: 'a', max_submissions: 0 }, 'INVALID_MAX_SUBMISSIONS:max_submissions'],
    [{ public_key: KEY, label: 'a', max_submissions: 1001 }, 'INVALID_MAX_SUBMISSIONS:max_submissions'],
    [{ public_key: KEY, label: 'a', open_days: 91 }, 'INVALID_OPEN_DAYS:open_days'],
    [{ public_key: KEY, label: 'a', allow_files: 'yes' }, 'INVALID_ALLOW_FILES:allow_files'],
    [{ public_key: KEY, label: 'a', notification_email: 'not an address' }, 'INVALID_EMAIL:notification_email'],
    [{ public_key: KEY, label: 'a', allowed_origins: new Array(11).fill('https://a.example') }, 'INVALID_ALLOWED_ORIGINS:allowed_origins'],
    [[], 'INVALID_JSON:null'],
  ])('when %j is asked for, then it is refused with %s', (body, expected) => {
    expect(codeOf(() => validateCreateRequest(body, { production: false }))).toBe(expected);
  });

  it('when origins are given, then only bare origins pass, https alone in production, each once', () => {
    expect(parseOrigin('https://shop.example', true)).toBe('https://shop.example');
    expect(parseOrigin('https://shop.example/', true)).toBe('https://shop.example');
    expect(parseOrigin('http://127.0.0.1:3000', false)).toBe('http://127.0.0.1:3000');
    for (const bad of ['http://127.0.0.1:3000', 'https://shop.example/path', 'https://u:p@shop.example', 'https://shop.example?x', '*', "'self'", 'javascript:x']) {
      expect([bad, parseOrigin(bad, true)]).toEqual([bad, null]);
    }
    expect(validateCreateRequest({ public_key: KEY, label: 'a', allowed_origins: ['https://a.example', 'https://a.example/'] }, { production: true }).allowedOrigins).toEqual(['https://a.example']);
  });

  it('when a submission is checked, then a vr1 envelope and a key check pass and the inner vz1 envelope comes out', () => {
    expect(validateSubmission({ content: ENVELOPE, key_check: KEY })).toEqual({
      ephemeralPublicKey: 'ST6C_HRGSlkmiBdiPSBTxeuOLMSpiLT-4XnsawENUx0', envelope: `vz1.${ENVELOPE.split('.').slice(2).join('.')}`, keyCheck: KEY,
    });
    expect(codeOf(() => validateSubmission({ content: `vz1.${ENVELOPE.split('.').slice(2).join('.')}`, key_check: KEY }))).toBe('INVALID_CONTENT:content');
    expect(codeOf(() => validateSubmission({ content: ENVELOPE, key_check: 'x' }))).toBe('INVALID_KEY_CHECK:key_check');
  });

  it('when a submission declares files, then they are read as a note creation reads them (sizes of at least 1, a non-empty list)', () => {
    expect(validateSubmission({ content: ENVELOPE, key_check: KEY, files: [{ size: 16 }, { size: 70_032 }] }).files).toEqual([{ size: 16 }, { size: 70_032 }]);
    expect(validateSubmission({ content: ENVELOPE, key_check: KEY, files: null }).files).toBeUndefined();
    for (const files of [[], [{ size: 0 }], [{ size: 1.5 }], [{}], 'x', [null]]) {
      expect([files, codeOf(() => validateSubmission({ content: ENVELOPE, key_check: KEY, files }))]).toEqual([files, 'INVALID_FILES:files']);
    }
  });
});
