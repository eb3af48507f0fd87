/**
 * Retries against the service's real rate limit: a key allowed 20 parses a
 * minute refills one every 3 s, so an exhausted key answers 429 with a
 * Retry-After of a few seconds.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, MediaparseError } from "../src/index.js";
import { baseUrl, exhaust, limitedToken, postUrl } from "./env.js";

/** The global fetch, recording every request's headers and every answer's status and Retry-After. */
function recordingFetch() {
  const seen: { key: string | null; status: number; retryAfter: string | null }[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    seen.push({
      key: headers.get("idempotency-key"),
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
    });
    return response;
  };
  return { seen, wrapped };
}

test("a 429 is retried after its Retry-After with one Idempotency-Key", async () => {
  const { seen, wrapped } = recordingFetch();
  const slept: number[] = [];
  const mp = new Client({
    baseUrl,
    token: limitedToken,
    fetch: wrapped,
    retry: { maxRetries: 5 },
    sleep: (s) => {
      slept.push(s);
      return new Promise((resolve) => setTimeout(resolve, s * 1000));
    },
  });
  await exhaust(limitedToken);
  const result = await mp.parse(postUrl);
  assert.equal(result.media?.platform, "tiktok");
  const statuses = seen.map((s) => s.status);
  assert.equal(statuses[0], 429, String(statuses));
  assert.equal(statuses.at(-1), 200, String(statuses));
  assert.ok(statuses.slice(0, -1).every((s) => s === 429), String(statuses));
  assert.equal(new Set(seen.map((s) => s.key)).size, 1, "one Idempotency-Key across the attempts");
  assert.deepEqual(
    slept,
    seen.slice(0, -1).map((s) => Number(s.retryAfter)),
  );
  // The service stored the call under that key: asking again replays it.
  const again = new Client({ baseUrl, token: limitedToken, retry: { maxRetries: 5 } });
  const replay = await again.parse(postUrl, { idempotencyKey: seen[0].key! });
  assert.equal(replay.replayed, true);
});

test("a Retry-After beyond maxWait rejects at once", async () => {
  const { seen, wrapped } = recordingFetch();
  const slept: number[] = [];
  const mp = new Client({
    baseUrl,
    token: limitedToken,
    fetch: wrapped,
    retry: { maxRetries: 3, maxWait: 0.5 },
    sleep: async (s) => {
      slept.push(s);
    },
  });
  await exhaust(limitedToken);
  await assert.rejects(mp.parse(postUrl), (e: unknown) => {
    assert.ok(e instanceof MediaparseError);
    assert.equal(e.status, 429);
    assert.equal(e.code, "rate_limited");
    assert.ok((e.retryAfter ?? 0) >= 1);
    return true;
  });
  assert.equal(seen.length, 1);
  assert.deepEqual(slept, []);
});
