import { smtpTlsMode, smtpTlsOptions, smtpTransportRisk } from './smtp-tls';

describe('SMTP TLS settings', () => {
  it('when SMTP_URL is smtps://, starttls=required, plain or starttls=never, then the mode and the production risk follow', () => {
    expect([smtpTlsMode('smtps://h'), smtpTransportRisk('smtps://h')]).toEqual(['tls', undefined]);
    expect([smtpTlsMode('smtp://h?starttls=required'), smtpTransportRisk('smtp://h?starttls=required')]).toEqual(['starttls-required', undefined]);
    expect(smtpTlsMode('smtp://h')).toBe('starttls-opportunistic');
    expect(smtpTransportRisk('smtp://h')).toMatch(/strip/);
    expect(smtpTlsMode('smtp://h?starttls=never')).toBe('none');
  });

  it('when the host is a name, then it is sent as the TLS server name; an IP address is not (not a valid SNI name)', () => {
    expect(smtpTlsOptions('smtps://mail.example.com', 'PEM')).toEqual({ servername: 'mail.example.com', ca: 'PEM' });
    expect(smtpTlsOptions('smtps://127.0.0.1:465', undefined)).toEqual({});
  });
});
