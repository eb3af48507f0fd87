/**
 * Standard Webhooks verification. The first case is the specification's
 * published example (secret, id, timestamp, body and signature as the
 * Standard Webhooks reference libraries test them).
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { signWebhook, verifyWebhook, WebhookVerificationError } from "../src/index.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

function headers(over: Record<string, string> = {}): Record<string, string> {
  return {
    "webhook-id": MSG_ID,
    "webhook-timestamp": String(TIMESTAMP),
    "webhook-signature": SIGNATURE,
    ...over,
  };
}

test("the published example verifies", async () => {
  assert.deepEqual(await verifyWebhook(SECRET, headers(), BODY, { now: TIMESTAMP }), { test: 2432232314 });
  assert.equal(await signWebhook(SECRET, MSG_ID, TIMESTAMP, BODY), SIGNATURE);
  const asBytes = new TextEncoder().encode(BODY);
  assert.ok(await verifyWebhook(SECRET, new Headers(headers()), asBytes, { now: TIMESTAMP }));
});

test("one of several signatures suffices", async () => {
  const h = headers({ "webhook-signature": `v1,bm90LWl0 ${SIGNATURE}` });
  assert.ok(await verifyWebhook(SECRET, h, BODY, { now: TIMESTAMP + 10 }));
});

const refused: [string, () => Promise<unknown>][] = [
  ["body", () => verifyWebhook(SECRET, headers(), '{"test": 2432232315}', { now: TIMESTAMP })],
  ["secret", () => verifyWebhook("whsec_" + btoa("another secret 1"), headers(), BODY, { now: TIMESTAMP })],
  ["id", () => verifyWebhook(SECRET, headers({ "webhook-id": "msg_other" }), BODY, { now: TIMESTAMP })],
  ["version", () => verifyWebhook(SECRET, headers({ "webhook-signature": "v2," + SIGNATURE.slice(3) }), BODY, { now: TIMESTAMP })],
  ["late", () => verifyWebhook(SECRET, headers(), BODY, { now: TIMESTAMP + 301 })],
  ["early", () => verifyWebhook(SECRET, headers(), BODY, { now: TIMESTAMP - 301 })],
  ["no timestamp", () => verifyWebhook(SECRET, { "webhook-id": MSG_ID, "webhook-signature": SIGNATURE }, BODY, { now: TIMESTAMP })],
  ["bad timestamp", () => verifyWebhook(SECRET, headers({ "webhook-timestamp": "soon" }), BODY, { now: TIMESTAMP })],
];
for (const [name, attempt] of refused) {
  test(`an altered or stale callback is refused: ${name}`, async () => {
    await assert.rejects(attempt(), WebhookVerificationError);
  });
}

test("the tolerance is the caller's", async () => {
  assert.ok(await verifyWebhook(SECRET, headers(), BODY, { tolerance: 3600, now: TIMESTAMP + 3000 }));
});
