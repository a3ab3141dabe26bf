import { packNotificationAddress, unpackNotificationAddress } from './notification-address';

describe('the notification address and its language, sealed together', () => {
  it('when packed and unpacked, then the address and the language come back; English and old boxes have no language', () => {
    expect(unpackNotificationAddress(packNotificationAddress('a@example.com', 'pt-BR'))).toEqual({ address: 'a@example.com', lang: 'pt-BR' });
    expect(packNotificationAddress('a@example.com', 'en')).toBe('a@example.com');
    expect(packNotificationAddress('a@example.com', undefined)).toBe('a@example.com');
    expect(unpackNotificationAddress('a@example.com')).toEqual({ address: 'a@example.com' });
    expect(packNotificationAddress(null, 'de')).toBeNull();
    expect(unpackNotificationAddress(null)).toBeNull();
  });

  it('when the language is not a tag, then it is left out rather than sealed', () => {
    expect(packNotificationAddress('a@example.com', 'de\nBcc: x')).toBe('a@example.com');
    expect(unpackNotificationAddress('a@example.com\n<b>')).toEqual({ address: 'a@example.com' });
  });
});
