/**
 * Batch and jobs against the service's contract: POST /api/v1/batch →
 * data.items in request order; POST /api/v1/jobs → 202, data.id job_…,
 * Location; GET /api/v1/jobs/{id}?wait=N; GET …/events (SSE `item`, `done`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, type JobEvent, type Media } from "../src/index.js";
import { baseUrl, postUrl, token, UNSUPPORTED } from "./env.js";

test("a batch answers each item in order and charges the successes", async () => {
  const mp = new Client({ baseUrl, token });
  const batch = await mp.batch([postUrl, { url: postUrl, platform: "tiktok" }, UNSUPPORTED]);
  assert.deepEqual(batch.items.map((i) => i.status), [200, 200, 400]);
  assert.equal((batch.items[0].data as Media).platform, "tiktok");
  assert.ok("platformData" in (batch.items[1].data as object));
  assert.equal(batch.items[2].code, "302");
  assert.equal(batch.creditsCharged, 2);
});

test("a job is created, waited for and streamed", async () => {
  const mp = new Client({ baseUrl, token });
  const job = await mp.createJob([postUrl, UNSUPPORTED]);
  assert.match(job.id, /^job_/);
  assert.ok(["queued", "running", "done"].includes(job.state));
  assert.ok(job.location?.endsWith(`/api/v1/jobs/${job.id}`));
  const done = await mp.waitJob(job.id, { timeout: 120 });
  assert.equal(done.state, "done");
  assert.deepEqual(done.items?.map((i) => i.status), [200, 400]);
  const events: JobEvent[] = [];
  for await (const e of mp.jobEvents(job.id)) events.push(e);
  assert.equal(events.at(-1)?.event, "done");
  assert.equal(events.filter((e) => e.event === "item").length, 2);
});
