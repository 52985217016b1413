/**
 * Compile-time checks: the build (tsc) fails when a line marked `@ts-expect-error` compiles, so these hold the
 * method signatures to the schema's types. The function is never called.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import type { Engram, MemoryKindEnum, TurnOutput } from "../src/index.js";

export function typeChecks(engram: Engram): void {
  // @ts-expect-error a turn takes no `metadata` (the API answers 400 for it)
  void engram.postTurn("customer-1", "Hi", { metadata: { source: "crm" } });
  // @ts-expect-error recall's `kinds` are memory kinds
  void engram.recall("customer-1", "vans", { kinds: ["memo"] });
  // @ts-expect-error a case needs an outcome
  void engram.createEpisode("support", { inputs: { question: "parcel" }, output: "Tracked" });
  // @ts-expect-error a space's kind is end_user or shared
  void engram.createSpace("customer-2", { kind: "team" });
  // @ts-expect-error the memory list filters by the API's query parameters only
  void engram.iterMemories("customer-1", { kinds: "fact" });

  const turn: Promise<TurnOutput> = engram.postTurn("customer-1", "Hi", { wait: true, session_id: "s-1" });
  const kinds: Promise<MemoryKindEnum[]> = engram
    .iterMemories("customer-1")
    .toArray()
    .then((all) => all.map((m) => m.kind));
  const exported: Promise<Uint8Array> = engram.exportSpace("customer-1", { passphrase: "correct horse" });
  const deleted: Promise<void> = engram.deleteMemory("customer-1", "6f1c2a9e-0d1b-4c4e-9a53-2b8f0c7d1e11");
  void [turn, kinds, exported, deleted];
}

test("the signatures hold to the schema's types (checked when tsc compiles this file)", () => {
  assert.equal(typeof typeChecks, "function");
});
