/**
 * Verifying a job's callback: the Standard Webhooks signature.
 *
 * The service POSTs with `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256>` of `"{id}.{timestamp}.{body}"`,
 * keyed with the base64 part of the key's `whsec_…` secret. Several
 * space-separated signatures may come (a secret rotation); one match is enough.
 * Uses Web Crypto, so it runs in Node 18+, browsers and edge runtimes.
 */

export const DEFAULT_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

async function subtle(): Promise<SubtleCrypto> {
  if (globalThis.crypto?.subtle) return globalThis.crypto.subtle;
  const nodeCrypto = await import("node:crypto");
  return nodeCrypto.webcrypto.subtle as unknown as SubtleCrypto;
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const text = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
    throw new WebhookVerificationError("the secret is not whsec_<base64>");
  }
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function header(headers: HeaderSource, name: string): string {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function") {
    value = (headers as Headers).get(name);
  } else {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : (headers as Record<string, string | string[] | undefined>)[key];
  }
  if (Array.isArray(value)) value = value.join(" ");
  if (value === null || value === undefined) {
    throw new WebhookVerificationError(`missing header ${name}`);
  }
  return value;
}

function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? new TextEncoder().encode(body) : body;
}

/** The `v1,<base64>` signature of one message. */
export async function signWebhook(
  secret: string,
  msgId: string,
  timestamp: number,
  body: string | Uint8Array,
): Promise<string> {
  const crypto = await subtle();
  const key = await crypto.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const prefix = new TextEncoder().encode(`${msgId}.${timestamp}.`);
  const payload = bytesOf(body);
  const signed = new Uint8Array(new ArrayBuffer(prefix.length + payload.length));
  signed.set(prefix);
  signed.set(payload, prefix.length);
  const mac = new Uint8Array(await crypto.sign("HMAC", key, signed));
  return "v1," + btoa(String.fromCharCode(...mac));
}

function equal(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export interface VerifyOptions {
  /** Seconds the timestamp may differ from now, either way (default 300). */
  tolerance?: number;
  /** Now, in Unix seconds (default: the clock). */
  now?: number;
}

/**
 * Check the signature and the timestamp's age; resolve to the parsed JSON body.
 * Rejects with {@link WebhookVerificationError} when a header is missing, the
 * timestamp is outside the tolerance, or no signature matches.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): Promise<unknown> {
  const msgId = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!/^\d+$/.test(stamp)) throw new WebhookVerificationError("webhook-timestamp is not an integer");
  const timestamp = Number(stamp);
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - timestamp) > (options.tolerance ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");
  }
  const expected = (await signWebhook(secret, msgId, timestamp, body)).slice(3);
  for (const candidate of signatures.split(" ")) {
    const [version, value] = [candidate.slice(0, candidate.indexOf(",")), candidate.slice(candidate.indexOf(",") + 1)];
    if (version === "v1" && equal(value, expected)) {
      return JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body));
    }
  }
  throw new WebhookVerificationError("no signature matches");
}
