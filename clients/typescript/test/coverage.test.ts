/**
 * The client covers every operation of the API's OpenAPI schema and nothing else: each operation is named here
 * with the client method that sends it, and calling that method sends exactly that method and path. A new API
 * operation without a client method fails here (as tests/clients/test_python_client_coverage.py does for Python).
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { Engram, OPERATIONS } from "../src/index.js";
import { schemaOperations } from "./helpers.js";

const SPACE = "customer-1";
const OTHER_ID = "6f1c2a9e-0d1b-4c4e-9a53-2b8f0c7d1e11";
const TURN_ID = "0a7d5c3e-51f2-4b7a-8c9d-3e4f5a6b7c8d";
const PATH_VALUES: Record<string, string> = {
  external_id: SPACE,
  memory_id: OTHER_ID,
  episode_id: OTHER_ID,
  turn_id: TURN_ID,
};

// operationId → how the client sends it
const CALLS: Record<string, (client: Engram) => Promise<unknown>> = {
  deletions_list: (c) => c.iterDeletions({ space: SPACE }).toArray(),
  deletions_check_create: (c) => c.checkDeletion(SPACE, "my address"),
  spaces_list: (c) => c.iterSpaces().toArray(),
  spaces_create: (c) => c.createSpace(SPACE),
  spaces_retrieve: (c) => c.getSpace(SPACE),
  spaces_partial_update: (c) => c.updateSpace(SPACE, { display_name: "Jana" }),
  spaces_destroy: (c) => c.deleteSpace(SPACE),
  spaces_episodes_list: (c) => c.iterEpisodes(SPACE).toArray(),
  spaces_episodes_create: (c) => c.createEpisode(SPACE, { inputs: { q: "x" }, output: "y", outcome: "ok" }),
  spaces_episodes_retrieve: (c) => c.getEpisode(SPACE, OTHER_ID),
  spaces_episodes_partial_update: (c) => c.updateEpisode(SPACE, OTHER_ID, { output: "z" }),
  spaces_episodes_destroy: (c) => c.deleteEpisode(SPACE, OTHER_ID),
  spaces_episodes_recall_create: (c) => c.recallEpisodes(SPACE, { question: "parcel" }),
  spaces_escalations_match_create: (c) => c.matchEscalation(SPACE, "parcel"),
  spaces_escalations_resolve_create: (c) =>
    c.resolveEscalation(SPACE, { input: "parcel", resolution_comment: "found", outcome: "found" }),
  spaces_export_retrieve: (c) => c.exportSpace(SPACE),
  spaces_forget_create: (c) => c.forget(SPACE, "Forget my address."),
  spaces_import_create: (c) => c.importSpace(SPACE, "{}"),
  spaces_ingest_create: (c) => c.ingest(SPACE, [{ role: "customer", content: "Hi" }]),
  spaces_memories_list: (c) => c.iterMemories(SPACE).toArray(),
  spaces_memories_retrieve: (c) => c.getMemory(SPACE, OTHER_ID),
  spaces_memories_partial_update: (c) => c.updateMemory(SPACE, OTHER_ID, { content: "x" }),
  spaces_memories_destroy: (c) => c.deleteMemory(SPACE, OTHER_ID),
  spaces_memories_history_list: (c) => c.memoryHistory(SPACE, OTHER_ID),
  spaces_memories_restore_create: (c) => c.restoreMemory(SPACE, OTHER_ID),
  spaces_recall_create: (c) => c.recall(SPACE, "vans"),
  spaces_turns_create: (c) => c.postTurn(SPACE, "We run four vans."),
  spaces_turns_reply_create: (c) => c.postReply(SPACE, TURN_ID, "Noted."),
  turns_retrieve: (c) => c.getTurn(TURN_ID),
  turns_retry_create: (c) => c.retryTurn(TURN_ID),
};

const schema = new Map(schemaOperations().map((operation) => [operation.operationId, operation]));

test("every operation of the schema has a client method, and no method sends an operation the API lacks", () => {
  const missing = [...schema.keys()].filter((id) => !(id in CALLS)).sort();
  assert.deepEqual(missing, [], `API operations the TypeScript client does not send: ${missing.join(", ")}`);
  const extra = Object.keys(CALLS)
    .filter((id) => !schema.has(id))
    .sort();
  assert.deepEqual(extra, [], `client calls for operations the API no longer has: ${extra.join(", ")}`);
});

test("the client's operation table is the schema's: the same operations, methods and paths", () => {
  const table = Object.entries(OPERATIONS).map(([id, spec]) => [id, spec.method, spec.path]);
  const fromSchema = [...schema.values()].map((operation) => [operation.operationId, operation.method, operation.path]);
  assert.deepEqual(table.sort(), fromSchema.sort());
});

for (const [operationId, call] of Object.entries(CALLS)) {
  test(`${operationId}: the client method sends the operation's method and path`, async () => {
    const sent: Array<[string, string]> = [];
    const answer: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      sent.push([init?.method ?? "GET", url.pathname]);
      if (url.pathname.endsWith("/export")) return new Response("{}", { status: 200 });
      if (init?.method === "DELETE") return new Response(null, { status: 204 });
      return Response.json({ results: [], next: null, count: 0 });
    };
    await call(new Engram("http://engram.test", { apiKey: "eng_x_y", fetch: answer }));
    const operation = schema.get(operationId);
    assert.ok(operation, `${operationId} is not in the schema`);
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => PATH_VALUES[name] ?? `<${name}>`);
    assert.deepEqual(sent, [[operation.method, path]]);
  });
}
