export { loadWebhooksConfig, readDelays as readWebhookRetryDelays, DEFAULT_RETRY_DELAYS_MS, type WebhooksConfig, type OperatorSubscription } from './config';
export { createWebhooksService, type WebhooksOverrides, type WebhooksService } from './compose';
export { WebhookDispatcher, type WebhookPayload } from './domain/webhook-dispatcher';
export { HostGuard } from './domain/host-guard';
export { retryDelayMs, maxAttempts, JITTER_FACTORS } from './domain/retry-schedule';
export { SafeHttpSender, RefusedTargetError } from './adapters/http/safe-http-sender';
export type { WebhookSender, DeliveryStore } from './domain/ports';
