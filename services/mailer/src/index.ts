export { loadMailerConfig, deriveHashKey, type MailerConfig, type SmtpSettings } from './config';
export { createMailerService, type MailerOverrides, type MailerService } from './compose';
export { MAIL_ROUTING_KEY } from './consumers/mail-command-consumer';
export { AddressHasher, normalizeAddress } from './domain/address-hasher';
export { UnsubscribeTokens } from './domain/unsubscribe-tokens';
export { renderEmail, PRODUCT_NAME } from './domain/mail-templates';
export type { MailTransport, OutgoingEmail } from './domain/mail-transport';
export type { MailerStore } from './domain/mailer-store';
