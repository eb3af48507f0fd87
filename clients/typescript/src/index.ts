export * from "./client.js";
export { MediaparseError } from "./errors.js";
export { verifyWebhook, signWebhook, WebhookVerificationError, DEFAULT_TOLERANCE_SECONDS } from "./webhooks.js";
export type { VerifyOptions } from "./webhooks.js";
export type { components, paths } from "./openapi.js";
