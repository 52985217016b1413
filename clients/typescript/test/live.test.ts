/**
 * The client against the real server: tests/clients/test_typescript_client.py starts pytest-django's live server on the
 * test database and hands over its URL and two tenants' admin keys (each tenant has a space "customer-1").
 * The tests run in order; the last checks that every operation of the schema reached the server.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AuthenticationFailed,
  Conflict,
  Engram,
  EngramError,
  InvalidRequest,
  NotFound,
  type TurnInputRequest,
} from "../src/index.js";
import { liveClient, operationOf, recordingFetch, schemaOperations, uniqueId } from "./helpers.js";

const FACT = "Hi! We run a fleet of four vans. Can you check my invoice?";
const VANS = "We run a fleet of four vans.";

const sent: Array<[string, string]> = [];
const alice = liveClient("ENGRAM_API_KEY", { fetch: recordingFetch(sent) });
const bob = liveClient("ENGRAM_OTHER_API_KEY");

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail("the call succeeded"),
    (error: unknown) => error,
  );
}

async function newSpace(prefix: string, kind: "end_user" | "shared" = "end_user"): Promise<string> {
  const space = uniqueId(prefix);
  const created = await alice.createSpace(space, { kind, display_name: `Test ${prefix}` });
  assert.equal(created.external_id, space);
  return space;
}

test("a turn stored with wait is recalled, with its provenance; the turn and a reply round-trip", async () => {
  const space = await newSpace("turn");
  const turn = await alice.postTurn(space, FACT, { wait: true });
  assert.equal(turn.status, "done");
  assert.ok(turn.created?.some((memory) => memory.kind === "fact" && memory.content === VANS));

  const recalled = await alice.recall(space, "How many vans does the customer have?", { provenance: true });
  const vans = recalled.memories.find((memory) => memory.content === VANS);
  assert.ok(vans, `recall did not find the fact: ${JSON.stringify(recalled.memories)}`);
  assert.equal(vans.source?.turn_id, turn.turn_id);
  assert.match(vans.source?.message_id ?? "", /^client-/);
  assert.notEqual(vans.score.distance, null);
  assert.match(recalled.prompt, /four vans/);

  assert.equal((await alice.getTurn(turn.turn_id)).turn_id, turn.turn_id);
  const reply = await alice.postReply(space, turn.turn_id, "Four vans, noted.");
  assert.equal(reply.session_id, turn.session_id);

  const next = await alice.postTurn(space, "How many vans do we have again?", { max_chars: 200 });
  assert.equal(next.left_out, 0);
  assert.match(next.prompt ?? "", /four vans/);
});

test("the same message_id twice stores one turn", async () => {
  const space = await newSpace("idempotent");
  const first = await alice.postTurn(space, FACT, { message_id: "m-1", wait: true });
  const again = await alice.postTurn(space, FACT, { message_id: "m-1", wait: true });
  assert.equal(again.turn_id, first.turn_id);
  const facts = await alice.iterMemories(space, { kind: "fact" }).toArray();
  assert.deepEqual(
    facts.map((memory) => memory.content),
    [VANS],
  );
});

test("pages: a list longer than a page is walked page by page, each item once", async () => {
  const ids = [];
  for (let n = 0; n < 5; n++) ids.push(await newSpace("paged"));
  const pages = [];
  for await (const page of alice.iterSpaces({ pageSize: 2 }).pages()) pages.push(page);
  assert.ok(pages.length >= 3, `${pages.length} page(s)`);
  assert.ok(pages.every((page) => page.results.length <= 2));
  assert.equal(pages[0]?.count, pages.flatMap((page) => page.results).length);
  const listed = [];
  for await (const space of alice.iterSpaces({ pageSize: 2 })) listed.push(space.external_id);
  assert.equal(new Set(listed).size, listed.length);
  for (const id of ["customer-1", ...ids]) assert.ok(listed.includes(id), `${id} was not listed`);
});

test("a 4xx rejects as the typed error carrying the API's code and details", async () => {
  const space = await newSpace("errors");
  const tooMany = await rejection(alice.recall(space, "vans", { limit: 500 }));
  assert.ok(tooMany instanceof InvalidRequest, String(tooMany));
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.code, "invalid_request");
  assert.ok(typeof tooMany.details === "object" && tooMany.details !== null && "limit" in tooMany.details);

  // A field the schema does not have does not compile; sent anyway, the server names it.
  const withMetadata = { message: "Hi", metadata: { source: "crm" } } as unknown as TurnInputRequest;
  const unknownField = await rejection(alice.postTurn(space, withMetadata.message, withMetadata));
  assert.ok(unknownField instanceof InvalidRequest);
  assert.ok(JSON.stringify(unknownField.details).includes("metadata"));

  const duplicate = await rejection(alice.createSpace(space));
  assert.ok(duplicate instanceof Conflict && duplicate.code === "conflict", String(duplicate));

  const stranger = new Engram(alice.baseUrl, { apiKey: "eng_wrong_key", maxRetries: 0 });
  const refused = await rejection(stranger.iterSpaces().toArray());
  assert.ok(refused instanceof AuthenticationFailed && refused instanceof EngramError);
  assert.equal(refused.status, 401);
});

test("another tenant's key finds nothing of this tenant's: its ids are not found", async () => {
  const space = await newSpace("alices-only");
  const turn = await alice.postTurn(space, FACT, { wait: true });
  const memoryId = turn.created?.[0]?.id;
  assert.ok(memoryId);

  for (const attempt of [
    () => bob.getSpace(space),
    () => bob.iterMemories(space).toArray(),
    () => bob.getMemory(space, memoryId),
    () => bob.recall(space, "How many vans?"),
    () => bob.getTurn(turn.turn_id),
  ]) {
    const error = await rejection(attempt());
    assert.ok(error instanceof NotFound, String(error));
    assert.equal(error.code, "not_found");
    assert.equal(error.status, 404);
  }
  // Bob's tenant has a "customer-1" of its own: a memory id of Alice's is not found in it either.
  const crossed = await rejection(bob.getMemory("customer-1", memoryId));
  assert.ok(crossed instanceof NotFound);
  assert.deepEqual(
    (await alice.iterMemories(space, { kind: "fact" }).toArray()).map((memory) => memory.id),
    [memoryId],
  );
});

test("memories: ingested, edited, their history, restored, deleted; retrying a done turn is a conflict", async () => {
  const space = await newSpace("memories");
  const lines = [
    { role: "agent" as const, content: "How can I help?" },
    { role: "customer" as const, content: FACT, id: "line-2" },
  ];
  const turn = await alice.ingest(space, lines, { session_id: "import-1", wait: true });
  assert.equal(turn.status, "done");
  assert.equal((await alice.ingest(space, lines, { session_id: "import-1" })).turn_id, turn.turn_id);

  const [fact] = await alice.iterMemories(space, { kind: "fact" }).toArray();
  assert.ok(fact);
  assert.equal((await alice.getMemory(space, fact.id)).content, VANS);
  const edited = await alice.updateMemory(space, fact.id, { content: "We run a fleet of five vans." });
  assert.equal(edited.content, "We run a fleet of five vans.");
  const history = await alice.memoryHistory(space, edited.id);
  const earlier = history.find((version) => version.superseded_by === edited.id);
  assert.ok(earlier);
  assert.deepEqual([earlier.content, earlier.superseded_reason], [VANS, "edited"]);

  const restored = await alice.restoreMemory(space, earlier.id);
  assert.deepEqual([restored.content, restored.superseded_by], [VANS, null]);
  assert.ok((await rejection(alice.restoreMemory(space, restored.id))) instanceof Conflict);

  assert.equal(await alice.deleteMemory(space, restored.id), undefined);
  assert.deepEqual(await alice.iterMemories(space, { kind: "fact" }).toArray(), []);

  const notFailed = await rejection(alice.retryTurn(turn.turn_id));
  assert.ok(notFailed instanceof Conflict, String(notFailed));
});

test("forget: a dry run deletes nothing, the real one is audited and checkable", async () => {
  const space = await newSpace("forget");
  await alice.postTurn(space, FACT, { wait: true });
  const dry = await alice.forget(space, "Please forget that we have four vans.", { dry_run: true });
  assert.equal(dry.dry_run, true);
  assert.ok(dry.candidates.length > 0);
  assert.equal((await alice.iterMemories(space, { kind: "fact" }).toArray()).length, 1);

  const done = await alice.forget(space, "Please forget that we have four vans.");
  assert.ok(done.forgotten.some((memory) => memory.content === VANS));
  assert.deepEqual(await alice.iterMemories(space, { kind: "fact" }).toArray(), []);
  assert.equal((await alice.checkDeletion(space, VANS)).deleted, true);
  const deletions = await alice.iterDeletions({ space, cause: "customer_request" }).toArray();
  assert.equal(deletions.length, done.forgotten.length);
  assert.ok(deletions.every((deletion) => deletion.space === space && deletion.cause === "customer_request"));
});

test("a space exported and imported into another, sealed under a passphrase too; renamed; erased", async () => {
  const space = await newSpace("export");
  await alice.postTurn(space, FACT, { wait: true });
  const copy = await newSpace("copy");
  const exported = await alice.exportSpace(space);
  assert.ok(exported instanceof Uint8Array);
  assert.equal(new TextDecoder().decode(exported.subarray(0, 1)), "{");
  const imported = await alice.importSpace(copy, exported);
  assert.ok(imported.memories >= 1);
  assert.equal((await alice.importSpace(copy, exported)).memories, 0); // the same file again: all skipped
  assert.deepEqual(
    (await alice.iterMemories(copy, { kind: "fact" }).toArray()).map((memory) => memory.content),
    [VANS],
  );

  const sealed = await alice.exportSpace(space, { passphrase: "correct horse battery" });
  const sealedCopy = await newSpace("sealed-copy");
  const withoutPassphrase = await rejection(alice.importSpace(sealedCopy, sealed));
  assert.ok(withoutPassphrase instanceof InvalidRequest, String(withoutPassphrase));
  const unsealed = await alice.importSpace(sealedCopy, sealed, { passphrase: "correct horse battery" });
  assert.ok(unsealed.memories >= 1);

  const renamed = await alice.updateSpace(copy, { display_name: "First customer" });
  assert.equal(renamed.display_name, "First customer");
  assert.equal((await alice.getSpace(copy)).display_name, "First customer");
  assert.equal(await alice.deleteSpace(copy), undefined);
  assert.ok((await rejection(alice.getSpace(copy))) instanceof NotFound);
});

test("shared spaces: cases and escalations", async () => {
  const space = await newSpace("support-agents", "shared");
  const refund = "The customer wants a refund because the parcel arrived damaged.";
  const stored = await alice.resolveEscalation(space, {
    input: refund,
    resolution_comment: "Refund under 50 EUR",
    outcome: "refund",
  });
  const match = await alice.matchEscalation(space, refund);
  assert.equal(match.apply, true);
  assert.equal(match.episode_id, stored.episode.id);
  assert.deepEqual(
    (await alice.iterEpisodes(space, { kind: "resolution" }).toArray()).map((episode) => episode.id),
    [stored.episode.id],
  );

  const created = await alice.createEpisode(space, {
    inputs: { question: "Where is my parcel?" },
    output: "Tracked",
    outcome: "resolved",
  });
  assert.equal(created.action, "created");
  const recalled = await alice.recallEpisodes(space, { question: "Where is my parcel?" });
  assert.deepEqual(
    recalled.episodes.map((episode) => episode.id),
    [created.episode.id],
  );
  const id = created.episode.id;
  assert.equal((await alice.getEpisode(space, id)).output, "Tracked");
  assert.equal((await alice.updateEpisode(space, id, { output: "Tracked it" })).output, "Tracked it");
  assert.equal(await alice.deleteEpisode(space, id), undefined);
  assert.ok((await rejection(alice.getEpisode(space, id))) instanceof NotFound);
});

test("every operation of the schema reached the live server in the tests above", () => {
  const operations = schemaOperations();
  const reached = new Set(sent.map(([method, path]) => operationOf(operations, method, path)));
  const missing = operations.map((operation) => operation.operationId).filter((id) => !reached.has(id));
  assert.deepEqual(missing, [], `operations no live test sent: ${missing.join(", ")}`);
});
