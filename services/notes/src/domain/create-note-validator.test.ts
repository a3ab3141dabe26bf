import { ValidationError } from '@vanish/common';
import { codePointLength, validateCreateNote } from './create-note-validator';

function rejection(body: unknown): { code: string; parameter: string | null; status: number } {
  try {
    validateCreateNote(body);
  } catch (err) {
    if (err instanceof ValidationError) return { code: err.code, parameter: err.parameter, status: err.statusCode };
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}

const EMOJI = '\u{1F600}';

describe('validateCreateNote', () => {
  it('when only content is given, then the SPEC defaults apply', () => {
    expect(validateCreateNote({ content: 'hello' })).toEqual({
      content: 'hello', keyCheck: null, expiryType: 'view', expiryHours: 24, maxViews: 1,
      passcode: null, notificationEmail: null, sendLinkEmail: null,
    });
  });

  it('when every field is valid, then each is carried over', () => {
    expect(validateCreateNote({
      content: 'x', expiry_type: 'both', expiry_time: 8760, max_views: 100, passcode: 'p',
      notification_email: 'a@example.com', send_link_email: 'b.c+d@mail.example.org',
    })).toEqual({
      content: 'x', keyCheck: null, expiryType: 'both', expiryHours: 8760, maxViews: 100, passcode: 'p',
      notificationEmail: 'a@example.com', sendLinkEmail: 'b.c+d@mail.example.org',
    });
  });

  describe('body shape', () => {
    it.each([
      ['an array', [{ content: 'x' }]],
      ['a string', 'content'],
      ['a number', 5],
      ['null', null],
      ['true', true],
    ])('when the body is %s, then INVALID_JSON', (_name, body) => {
      expect(rejection(body)).toEqual({ code: 'INVALID_JSON', parameter: null, status: 400 });
    });

    it('when unknown fields (csrf_token among them) are sent, then they are ignored', () => {
      expect(validateCreateNote({ content: 'x', csrf_token: 'abc', extra: { a: 1 } }).content).toBe('x');
    });

    it('when the body carries prototype-pollution keys, then nothing is polluted and only own fields count', () => {
      const body = JSON.parse('{"__proto__": {"content": "evil", "polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
      expect(rejection(body)).toEqual({ code: 'INVALID_CONTENT', parameter: 'content', status: 400 });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const ok = JSON.parse('{"content": "x", "__proto__": {"max_views": 7}}');
      expect(validateCreateNote(ok).maxViews).toBe(1);
    });
  });

  describe('content', () => {
    it.each([
      ['missing', {}],
      ['empty', { content: '' }],
      ['blank', { content: ' \t\n\u00a0\u3000' }],
      ['a number', { content: 5 }],
      ['null', { content: null }],
      ['an array', { content: ['x'] }],
      ['an object', { content: { text: 'x' } }],
      ['a lone high surrogate', { content: 'a\uD800b' }],
      ['a lone low surrogate', { content: '\uDC00' }],
      ['a reversed pair', { content: '\uDE00\uD83D' }],
    ])('when content is %s, then INVALID_CONTENT', (_name, body) => {
      expect(rejection(body)).toEqual({ code: 'INVALID_CONTENT', parameter: 'content', status: 400 });
    });

    it('when content is 10,000 emoji (20,000 UTF-16 units), then it is accepted', () => {
      const text = EMOJI.repeat(10_000);
      expect(text.length).toBe(20_000);
      expect(validateCreateNote({ content: text }).content).toBe(text);
    });

    it('when content is 10,001 emoji, then CONTENT_TOO_LONG', () => {
      expect(rejection({ content: EMOJI.repeat(10_001) })).toEqual({ code: 'CONTENT_TOO_LONG', parameter: 'content', status: 400 });
    });

    it('when content is 10,000 or 10,001 ASCII characters, then the limit is exact', () => {
      expect(validateCreateNote({ content: 'a'.repeat(10_000) }).content).toHaveLength(10_000);
      expect(rejection({ content: 'a'.repeat(10_001) }).code).toBe('CONTENT_TOO_LONG');
    });

    it('when content holds NUL, RTL override, combining marks and emoji, then it is kept byte for byte', () => {
      const text = 'a\u0000b\u202Ec\u0301\u{1F469}\u200D\u{1F4BB}';
      expect(validateCreateNote({ content: text }).content).toBe(text);
    });

    it('counts code points, not UTF-16 units', () => {
      expect(codePointLength(`${EMOJI}a\u0301`)).toBe(3);
    });
  });

  describe('expiry_type', () => {
    it.each(['view', 'time', 'both'])('when expiry_type is %s, then it is accepted', (value) => {
      expect(validateCreateNote({ content: 'x', expiry_type: value }).expiryType).toBe(value);
    });

    it('when expiry_type is null, then the default view applies', () => {
      expect(validateCreateNote({ content: 'x', expiry_type: null }).expiryType).toBe('view');
    });

    it.each([['VIEW'], ['never'], [''], [1], [true], [['view']], [' view']])('when expiry_type is %j, then INVALID_EXPIRY_TYPE', (value) => {
      expect(rejection({ content: 'x', expiry_type: value })).toEqual({ code: 'INVALID_EXPIRY_TYPE', parameter: 'expiry_type', status: 400 });
    });
  });

  describe('expiry_time', () => {
    it.each([[1], [24], [8760], [1e3], [2.0]])('when expiry_time is %j, then it is accepted', (value) => {
      expect(validateCreateNote({ content: 'x', expiry_type: 'time', expiry_time: value }).expiryHours).toBe(value);
    });

    it.each([
      [0], [-1], [8761], [1.5], [0.5], ['5'], ['24'], [true], [false], [[24]], [{}],
      [Number.MAX_SAFE_INTEGER + 2], [1e400], [-0],
    ])('when expiry_time is %j, then INVALID_EXPIRY_TIME', (value) => {
      expect(rejection({ content: 'x', expiry_time: value })).toEqual({ code: 'INVALID_EXPIRY_TIME', parameter: 'expiry_time', status: 400 });
    });

    it('when expiry_time comes as JSON 1.5e3 (1500, integral), then it is accepted; 1.5e-3 is not', () => {
      expect(validateCreateNote(JSON.parse('{"content":"x","expiry_time":1.5e3}')).expiryHours).toBe(1500);
      expect(rejection(JSON.parse('{"content":"x","expiry_time":1.5e-3}')).code).toBe('INVALID_EXPIRY_TIME');
    });
  });

  describe('max_views', () => {
    it.each([[1], [50], [100]])('when max_views is %j, then it is accepted', (value) => {
      expect(validateCreateNote({ content: 'x', max_views: value }).maxViews).toBe(value);
    });

    it('when max_views is given with a time note, then it is still validated (the domain replaces it by 100)', () => {
      expect(rejection({ content: 'x', expiry_type: 'time', max_views: 101 }).code).toBe('INVALID_MAX_VIEWS');
      expect(validateCreateNote({ content: 'x', expiry_type: 'time', max_views: 3 }).maxViews).toBe(3);
    });

    it.each([[0], [101], [-5], [1.5], ['3'], [true], [[]], [{}], [1e3]])('when max_views is %j, then INVALID_MAX_VIEWS', (value) => {
      expect(rejection({ content: 'x', max_views: value })).toEqual({ code: 'INVALID_MAX_VIEWS', parameter: 'max_views', status: 400 });
    });
  });

  describe('passcode', () => {
    it.each([[''], [null], [undefined]])('when passcode is %j, then there is no passcode', (value) => {
      expect(validateCreateNote({ content: 'x', passcode: value }).passcode).toBeNull();
    });

    it('when passcode is 128 emoji, then it is accepted; 129 is rejected', () => {
      expect(validateCreateNote({ content: 'x', passcode: EMOJI.repeat(128) }).passcode).toBe(EMOJI.repeat(128));
      expect(rejection({ content: 'x', passcode: EMOJI.repeat(129) })).toEqual({ code: 'INVALID_PASSCODE', parameter: 'passcode', status: 400 });
    });

    it('when passcode is whitespace, then it is kept as given (it is a secret, not text)', () => {
      expect(validateCreateNote({ content: 'x', passcode: '  ' }).passcode).toBe('  ');
    });

    it.each([[1234], [true], [['a']], [{}], ['\uD800']])('when passcode is %j, then INVALID_PASSCODE', (value) => {
      expect(rejection({ content: 'x', passcode: value })).toEqual({ code: 'INVALID_PASSCODE', parameter: 'passcode', status: 400 });
    });
  });

  describe.each(['notification_email', 'send_link_email'])('%s', (name) => {
    it.each([
      ['a@example.com'], ['first.last+tag@sub.example.co.uk'], ["o'brien@example.ie"], ['x@xn--bcher-kva.example'],
      ['a@b.io'], [`${'l'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(57)}.com`],
    ])('when it is %s, then it is accepted', (value) => {
      const input = validateCreateNote({ content: 'x', [name]: value });
      expect(name === 'notification_email' ? input.notificationEmail : input.sendLinkEmail).toBe(value);
    });

    it.each([[''], [null]])('when it is %j, then there is no address', (value) => {
      const input = validateCreateNote({ content: 'x', [name]: value });
      expect(name === 'notification_email' ? input.notificationEmail : input.sendLinkEmail).toBeNull();
    });

    it.each([
      ['no at sign', 'example.com'],
      ['no domain dot', 'a@localhost'],
      ['two addresses', 'a@example.com,b@example.com'],
      ['two addresses with semicolon', 'a@example.com;b@example.com'],
      ['a display name', 'Alice <a@example.com>'],
      ['angle brackets', '<a@example.com>'],
      ['CRLF header injection', 'a@example.com\r\nBcc: victim@example.com'],
      ['LF', 'a@example.com\n'],
      ['a NUL', 'a\u0000@example.com'],
      ['a space', 'a b@example.com'],
      ['a leading space', ' a@example.com'],
      ['a quoted local part', '"a b"@example.com'],
      ['a double dot', 'a..b@example.com'],
      ['a leading dot', '.a@example.com'],
      ['an empty local part', '@example.com'],
      ['two at signs', 'a@b@example.com'],
      ['a hyphen-edged label', 'a@-example.com'],
      ['a numeric tld', 'a@example.123'],
      ['an IP literal', 'a@[127.0.0.1]'],
      ['non-ASCII', 'ä@example.com'],
      ['255 characters', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`],
      ['a 65-character local part', `${'a'.repeat(65)}@example.com`],
      ['a number', 5],
      ['an array', ['a@example.com']],
      ['true', true],
    ])('when it has %s, then INVALID_EMAIL naming the field', (_why, value) => {
      expect(rejection({ content: 'x', [name]: value })).toEqual({ code: 'INVALID_EMAIL', parameter: name, status: 400 });
    });
  });

  it('when several fields are wrong, then the first in SPEC order is reported', () => {
    expect(rejection({ content: '', expiry_type: 'x', max_views: 0 }).code).toBe('INVALID_CONTENT');
    expect(rejection({ content: 'x', expiry_type: 'x', max_views: 0 }).code).toBe('INVALID_EXPIRY_TYPE');
    expect(rejection({ content: 'x', max_views: 0, send_link_email: 'x' }).code).toBe('INVALID_MAX_VIEWS');
  });

  describe('DECISIONS 16: the creator\'s time controls (additive)', () => {
    it('when they are given, then each is carried over; absent, null or empty, none is', () => {
      expect(validateCreateNote({ content: 'x', shrink_after_first_view_minutes: 10, available_from: '2026-12-24 18:00:00' })).toMatchObject({
        shrinkAfterFirstViewMinutes: 10, availableFrom: new Date('2026-12-24T18:00:00Z'),
      });
      expect(validateCreateNote({ content: 'x', available_from: '2026-12-24T19:00:00+01:00' }).availableFrom).toEqual(new Date('2026-12-24T18:00:00Z'));
      expect(validateCreateNote({ content: 'x', release_after_silence_hours: 8760 }).releaseAfterSilenceHours).toBe(8760);
      const none = validateCreateNote({ content: 'x', shrink_after_first_view_minutes: null, available_from: '', release_after_silence_hours: null });
      expect(Object.keys(none).filter((key) => ['shrinkAfterFirstViewMinutes', 'availableFrom', 'releaseAfterSilenceHours'].includes(key))).toEqual([]);
    });

    it.each([
      [{ shrink_after_first_view_minutes: 0 }, 'INVALID_SHRINK_AFTER_FIRST_VIEW', 'shrink_after_first_view_minutes'],
      [{ shrink_after_first_view_minutes: 525_601 }, 'INVALID_SHRINK_AFTER_FIRST_VIEW', 'shrink_after_first_view_minutes'],
      [{ shrink_after_first_view_minutes: '10' }, 'INVALID_SHRINK_AFTER_FIRST_VIEW', 'shrink_after_first_view_minutes'],
      [{ available_from: '2026-02-30 10:00:00' }, 'INVALID_AVAILABLE_FROM', 'available_from'],
      [{ available_from: '2026-12-24T18:00:00' }, 'INVALID_AVAILABLE_FROM', 'available_from'],
      [{ available_from: 1798135200000 }, 'INVALID_AVAILABLE_FROM', 'available_from'],
      [{ release_after_silence_hours: 0 }, 'INVALID_RELEASE_AFTER_SILENCE', 'release_after_silence_hours'],
      [{ release_after_silence_hours: 8761 }, 'INVALID_RELEASE_AFTER_SILENCE', 'release_after_silence_hours'],
      [{ release_after_silence_hours: 24, available_from: '2026-12-24 18:00:00' }, 'INVALID_RELEASE_AFTER_SILENCE', 'release_after_silence_hours'],
    ])('when %j, then 400 %s naming %s', (extra, code, parameter) => {
      expect(rejection({ content: 'x', ...extra })).toEqual({ code, parameter, status: 400 });
    });
  });
});
