/**
 * Retries, idempotency and refusals that need answers the real server does not give on demand: a local HTTP
 * server answers 429/503 with Retry-After, or drops the connection, then succeeds.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { Engram, RateLimited, retryAfterSeconds, ServiceUnavailable } from "../src/index.js";
import { json, localServer } from "./helpers.js";

const SPACE = { external_id: "customer-1" };
const RATE_LIMITED = { error: { code: "rate_limited", message: "Too many requests.", details: null } };

test("a 429 is retried after the server's Retry-After, then the answer is the success", async () => {
  const server = await localServer((_, response, seen) => {
    if (seen.length === 1) json(response, 429, RATE_LIMITED, { "Retry-After": "1" });
    else json(response, 200, SPACE);
  });
  try {
    // backoffMs 0: any wait seen is the server's Retry-After, not the client's own backoff.
    const client = new Engram(server.url, { apiKey: "eng_x_y", backoffMs: 0 });
    assert.deepEqual(await client.getSpace("customer-1"), SPACE);
    assert.equal(server.seen.length, 2);
    const [first, second] = server.seen;
    assert.ok(first && second && second.at - first.at >= 950, "the retry came before Retry-After said");
    assert.equal(second.headers.authorization, "Bearer eng_x_y");
  } finally {
    await server.close();
  }
});

test("a 503 is retried the same way; a POST too, since the server did not carry it out", async () => {
  const server = await localServer((request, response, seen) => {
    if (seen.length <= 2) {
      json(
        response,
        503,
        { error: { code: "service_unavailable", message: "restarting", details: null } },
        {
          "Retry-After": "0",
        },
      );
    } else json(response, 201, { ...SPACE, echo: JSON.parse(request.body) });
  });
  try {
    const client = new Engram(server.url, { apiKey: "eng_x_y", backoffMs: 0 });
    const created = (await client.createSpace("customer-1")) as unknown as { echo: unknown };
    assert.deepEqual(created.echo, { external_id: "customer-1" });
    assert.deepEqual(
      server.seen.map((seen) => seen.method),
      ["POST", "POST", "POST"],
    );
  } finally {
    await server.close();
  }
});

test("when retries run out, the 429 rejects as RateLimited with its code and the server's advice", async () => {
  const server = await localServer((_, response) => json(response, 429, RATE_LIMITED, { "Retry-After": "0" }));
  try {
    const client = new Engram(server.url, { apiKey: "eng_x_y", maxRetries: 1, backoffMs: 0 });
    const error = await client.getSpace("customer-1").then(
      () => assert.fail("no error"),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof RateLimited);
    assert.equal(error.code, "rate_limited");
    assert.equal(error.status, 429);
    assert.equal(error.retryAfter, 0);
    assert.equal(server.seen.length, 2);
  } finally {
    await server.close();
  }
});

test("a dropped connection resends a turn with the same message_id, and never a reply", async () => {
  const server = await localServer((request, response, seen) => {
    const dropped = seen.filter((entry) => entry.url === request.url).length === 1;
    if (dropped) {
      response.socket?.destroy();
      return;
    }
    json(response, 201, { turn_id: "t", session_id: "s", status: "queued", message_id: "r" });
  });
  try {
    const client = new Engram(server.url, { apiKey: "eng_x_y", backoffMs: 0 });
    await client.postTurn("customer-1", "We run four vans.");
    const turns = server.seen.filter((seen) => seen.url.endsWith("/turns"));
    assert.equal(turns.length, 2);
    const [first, again] = turns.map((seen) => JSON.parse(seen.body) as { message_id: string });
    assert.match(first?.message_id ?? "", /^client-[0-9a-f]{32}$/);
    assert.equal(again?.message_id, first?.message_id);

    await assert.rejects(client.postReply("customer-1", "0a7d5c3e-51f2-4b7a-8c9d-3e4f5a6b7c8d", "Noted."), TypeError);
    assert.equal(server.seen.filter((seen) => seen.url.endsWith("/reply")).length, 1);
  } finally {
    await server.close();
  }
});

test("an error body that is not the API's shape still rejects typed, with code 'error'", async () => {
  const server = await localServer((_, response) => {
    response.writeHead(503, { "Content-Type": "text/plain" });
    response.end("upstream down");
  });
  try {
    const client = new Engram(server.url, { apiKey: "eng_x_y", maxRetries: 0 });
    await assert.rejects(client.getSpace("customer-1"), (error: unknown) => {
      assert.ok(error instanceof ServiceUnavailable);
      assert.equal(error.code, "error");
      assert.equal(error.message, "503 error: upstream down");
      return true;
    });
  } finally {
    await server.close();
  }
});

test("an id that names another path is refused before anything is sent", async () => {
  const server = await localServer((_, response) => json(response, 200, SPACE));
  try {
    const client = new Engram(server.url, { apiKey: "eng_x_y" });
    for (const [space, memoryId] of [
      ["customer-1/memories", "x"],
      ["customer-1", "../../deletions"],
      ["..", "x"],
      ["", "x"],
    ] as const) {
      await assert.rejects(client.getMemory(space, memoryId), RangeError);
    }
    assert.throws(() => client.iterMemories("a/b"), RangeError);
    assert.deepEqual(await client.getSpace("customer 1"), SPACE);
    assert.deepEqual(
      server.seen.map((seen) => seen.url),
      ["/api/v1/spaces/customer%201"],
    );
  } finally {
    await server.close();
  }
});

test("Retry-After is read as seconds or an HTTP date, and bounded", () => {
  const now = 1_800_000_000_000;
  assert.equal(retryAfterSeconds("5"), 5);
  assert.equal(retryAfterSeconds("0.5"), 0.5);
  assert.equal(retryAfterSeconds(new Date(now + 10_000).toUTCString(), now), 10);
  assert.equal(retryAfterSeconds("3600"), 60); // a hostile or broken server cannot park the client for an hour
  assert.equal(retryAfterSeconds("-4"), 0);
  assert.equal(retryAfterSeconds("soon"), null);
  assert.equal(retryAfterSeconds(null), null);
});

test("a caller's abort stops the waiting before a retry", async () => {
  const server = await localServer((_, response) => json(response, 503, RATE_LIMITED, { "Retry-After": "30" }));
  try {
    const client = new Engram(server.url, { apiKey: "eng_x_y" });
    const started = performance.now();
    await assert.rejects(client.getSpace("customer-1", { signal: AbortSignal.timeout(200) }), { name: "TimeoutError" });
    assert.ok(performance.now() - started < 5_000);
    assert.equal(server.seen.length, 1);
  } finally {
    await server.close();
  }
});
