import { MediaparseError } from "./errors.js";
import type { components } from "./openapi.js";

/** The normalized media object (generated from docs/openapi.json). */
export type Media = components["schemas"]["Media"];
/** The platform endpoint's `data`: media, platformData, platformDataVersion. */
export type PlatformResult = components["schemas"]["PlatformResult"];
/** `GET /api/v1/capabilities` data: platforms, versions, URL shapes, prices. */
export type Capabilities = components["schemas"]["Capabilities"]["data"];

/** One parse's answer; `media` is null for a link without media (code "304"). */
export interface Parsed {
  media: Media | null;
  platform: PlatformResult | null;
  code: string | null;
  creditsCharged: number;
  requestId: string | null;
  replayed: boolean;
}

/** A batch or job item: a URL, optionally the platform whose shape to answer in. */
export type ItemInput = string | { url: string; platform?: string };

/** One item's answer: `{status: 200, data, msg}` or its error envelope. */
export interface BatchItem {
  status: number;
  data: Media | PlatformResult | null;
  msg: string;
  code?: string;
}

export interface Batch {
  items: BatchItem[];
  creditsCharged: number;
  requestId: string | null;
}

export type JobState = "queued" | "running" | "done";

export interface Job {
  id: string;
  state: JobState;
  items?: BatchItem[];
  /** The `Location` header of the job's creation. */
  location?: string | null;
}

/** One server-sent event of a job: `item` (one item finished), then `done`. */
export interface JobEvent {
  event: string;
  data: unknown;
  id?: string;
}

export interface RetryPolicy {
  /** Further attempts after the first (default 3). */
  maxRetries: number;
  /** Never wait longer than this many seconds at once; a longer Retry-After rejects (default 60). */
  maxWait: number;
  /** Without Retry-After: backoff * 2^attempt seconds (default 0.5). */
  backoff: number;
}

export interface ClientOptions {
  baseUrl: string;
  token: string;
  retry?: Partial<RetryPolicy>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** How to wait (default: setTimeout). */
  sleep?: (seconds: number) => Promise<void>;
}

/** Answers worth another attempt after their Retry-After. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** The longest `?wait=` the service accepts on a job. */
export const MAX_JOB_WAIT_SECONDS = 30;

/** `Retry-After` in seconds: delta-seconds or an HTTP date (RFC 9110). */
export function retryAfter(response: Response): number | null {
  const value = response.headers.get("retry-after")?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

interface Call {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

/** A fresh UUID for an Idempotency-Key (Web Crypto, or node:crypto where it is not global: Node 18). */
async function newIdempotencyKey(): Promise<string> {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  const nodeCrypto = await import("node:crypto");
  return nodeCrypto.randomUUID();
}

function item(value: ItemInput): { url: string; platform?: string } {
  return typeof value === "string" ? { url: value } : { ...value };
}

export class Client {
  readonly retry: RetryPolicy;
  private readonly base: string;
  private readonly token: string;
  private readonly fetchFn: typeof fetch;
  private readonly sleep: (seconds: number) => Promise<void>;

  constructor(options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.retry = { maxRetries: 3, maxWait: 60, backoff: 0.5, ...options.retry };
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((s) => new Promise((resolve) => setTimeout(resolve, s * 1000)));
  }

  /** Seconds before the next attempt, or null: give up. */
  private delay(attempt: number, response: Response | null): number | null {
    if (attempt >= this.retry.maxRetries) return null;
    if (response) {
      if (!RETRY_STATUSES.has(response.status)) return null;
      const after = retryAfter(response);
      if (after !== null) return after <= this.retry.maxWait ? after : null;
    }
    return Math.min(this.retry.backoff * 2 ** attempt, this.retry.maxWait);
  }

  private url(call: Call): string {
    const query = call.query ? "?" + new URLSearchParams(call.query).toString() : "";
    return this.base + call.path + query;
  }

  private async send(call: Call): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let response: Response | null = null;
      try {
        response = await this.fetchFn(this.url(call), {
          method: call.method,
          headers: {
            Authorization: `Bearer ${this.token}`,
            ...(call.body !== undefined ? { "Content-Type": "application/json" } : {}),
            ...call.headers,
          },
          body: call.body !== undefined ? JSON.stringify(call.body) : undefined,
        });
      } catch (e) {
        const delay = this.delay(attempt, null);
        if (delay === null) throw e;
        await this.sleep(delay);
        continue;
      }
      const delay = this.delay(attempt, response);
      if (delay === null) return response;
      await response.body?.cancel();
      await this.sleep(delay);
    }
  }

  /** A POST carrying one Idempotency-Key across its retries. */
  private async post(path: string, body: unknown, idempotencyKey?: string, query?: Record<string, string>): Promise<Call> {
    return {
      method: "POST",
      path,
      body,
      query,
      headers: { "Idempotency-Key": idempotencyKey ?? (await newIdempotencyKey()) },
    };
  }

  private static async envelope(response: Response): Promise<{ data: any; code?: string }> {
    const text = await response.text();
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    if (response.status >= 400 || body === null || typeof body !== "object") {
      throw new MediaparseError(
        response.status,
        body?.code ?? null,
        body?.msg ?? response.statusText,
        response.headers.get("x-request-id"),
        retryAfter(response),
        body ?? text,
      );
    }
    return body;
  }

  private static credits(response: Response): number {
    return Number(response.headers.get("x-credits-charged") ?? 0) || 0;
  }

  /** Parse one post; with `platform` the platform endpoint's shape. */
  async parse(
    url: string,
    options: { platform?: string; delivery?: "direct" | "tunnel"; idempotencyKey?: string } = {},
  ): Promise<Parsed> {
    const path = options.platform ? `/api/v1/platforms/${encodeURIComponent(options.platform)}/parse` : "/api/v1/parse";
    const query = options.delivery ? { delivery: options.delivery } : undefined;
    const response = await this.send(await this.post(path, { url }, options.idempotencyKey, query));
    const body = await Client.envelope(response);
    const platform: PlatformResult | null = options.platform && body.data ? body.data : null;
    return {
      media: platform ? platform.media : (body.data ?? null),
      platform,
      code: body.code ?? null,
      creditsCharged: Client.credits(response),
      requestId: response.headers.get("x-request-id"),
      replayed: response.headers.get("idempotent-replayed") === "true",
    };
  }

  /** Parse up to 50 posts in one request; each item answers on its own. */
  async batch(items: ItemInput[], options: { idempotencyKey?: string } = {}): Promise<Batch> {
    const response = await this.send(await this.post("/api/v1/batch", { items: items.map(item) }, options.idempotencyKey));
    const body = await Client.envelope(response);
    return {
      items: body.data?.items ?? [],
      creditsCharged: Client.credits(response),
      requestId: response.headers.get("x-request-id"),
    };
  }

  async createJob(items: ItemInput[], options: { callbackUrl?: string; idempotencyKey?: string } = {}): Promise<Job> {
    const body: Record<string, unknown> = { items: items.map(item) };
    if (options.callbackUrl) body.callback_url = options.callbackUrl;
    const response = await this.send(await this.post("/api/v1/jobs", body, options.idempotencyKey));
    const envelope = await Client.envelope(response);
    return { ...envelope.data, location: response.headers.get("location") };
  }

  async getJob(id: string, options: { wait?: number } = {}): Promise<Job> {
    const query = options.wait ? { wait: String(Math.min(Math.floor(options.wait), MAX_JOB_WAIT_SECONDS)) } : undefined;
    const response = await this.send({ method: "GET", path: `/api/v1/jobs/${encodeURIComponent(id)}`, query });
    return (await Client.envelope(response)).data;
  }

  /** Hold `?wait=` requests until the job is done or `timeout` seconds pass (then its last state). */
  async waitJob(id: string, options: { timeout?: number } = {}): Promise<Job> {
    const deadline = Date.now() + (options.timeout ?? 300) * 1000;
    for (;;) {
      const left = Math.floor((deadline - Date.now()) / 1000);
      const job = await this.getJob(id, { wait: Math.max(1, Math.min(left, MAX_JOB_WAIT_SECONDS)) });
      if (job.state === "done" || Date.now() >= deadline) return job;
    }
  }

  /** The job's server-sent events (`item`…, then `done`). */
  async *jobEvents(id: string): AsyncGenerator<JobEvent> {
    const response = await this.fetchFn(`${this.base}/api/v1/jobs/${encodeURIComponent(id)}/events`, {
      headers: { Authorization: `Bearer ${this.token}`, Accept: "text/event-stream" },
    });
    if (response.status >= 400 || !response.body) await Client.envelope(response);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let event = "";
    let data: string[] = [];
    let eventId: string | undefined;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let newline: number;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, "");
          buffer = buffer.slice(newline + 1);
          if (line === "") {
            if (data.length === 0 && event === "") continue;
            const text = data.join("\n");
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
            const out: JobEvent = { event: event || "message", data: parsed, id: eventId };
            event = "";
            data = [];
            yield out;
            if (out.event === "done") return;
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const name = colon < 0 ? line : line.slice(0, colon);
          let field = colon < 0 ? "" : line.slice(colon + 1);
          if (field.startsWith(" ")) field = field.slice(1);
          if (name === "event") event = field;
          else if (name === "data") data.push(field);
          else if (name === "id") eventId = field;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  async capabilities(): Promise<Capabilities> {
    return (await Client.envelope(await this.send({ method: "GET", path: "/api/v1/capabilities" }))).data;
  }

  async account(): Promise<Record<string, unknown>> {
    return (await Client.envelope(await this.send({ method: "GET", path: "/api/v1/account" }))).data;
  }
}
