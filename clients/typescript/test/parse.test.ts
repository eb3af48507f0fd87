import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Client, MediaparseError } from "../src/index.js";
import { baseUrl, postUrl, token, UNSUPPORTED } from "./env.js";

test("parse answers the typed media object and its charge", async () => {
  const mp = new Client({ baseUrl, token });
  const result = await mp.parse(postUrl);
  assert.equal(result.media?.platform, "tiktok");
  assert.ok(result.media.images.length > 0, "a photo post has images");
  assert.equal(result.creditsCharged, 1);
  assert.match(result.requestId ?? "", /^req_/);
  assert.equal(result.platform, null);
});

test("the platform endpoint adds platform data", async () => {
  const mp = new Client({ baseUrl, token });
  const result = await mp.parse(postUrl, { platform: "tiktok" });
  assert.equal(result.platform?.platformDataVersion, "1");
  assert.ok(Object.keys(result.platform.platformData).length > 0);
  assert.deepEqual(result.media, result.platform.media);
});

test("an error envelope rejects with its status and code", async () => {
  const mp = new Client({ baseUrl, token });
  await assert.rejects(mp.parse(UNSUPPORTED), (e: unknown) => {
    assert.ok(e instanceof MediaparseError);
    assert.equal(e.status, 400);
    assert.equal(e.code, "302");
    assert.ok(e.requestId);
    return true;
  });
});

test("a bad token is 401", async () => {
  const mp = new Client({ baseUrl, token: "mp_not_a_key" });
  await assert.rejects(mp.parse(postUrl), (e: unknown) => e instanceof MediaparseError && e.status === 401);
});

test("a named Idempotency-Key replays the first answer", async () => {
  const mp = new Client({ baseUrl, token });
  const key = `ts-${randomUUID()}`;
  const first = await mp.parse(postUrl, { idempotencyKey: key });
  const second = await mp.parse(postUrl, { idempotencyKey: key });
  assert.equal(first.replayed, false);
  assert.equal(second.replayed, true);
  assert.deepEqual(second.media, first.media);
});

test("capabilities and account are read", async () => {
  const mp = new Client({ baseUrl, token });
  const caps = await mp.capabilities();
  assert.ok(caps.platforms.some((p) => p.id === "tiktok"));
  const account = await mp.account();
  assert.ok(Object.keys(account).length > 0);
});
