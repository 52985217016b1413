/**
 * What the tests share: the live server and keys tests/clients/test_typescript_client.py hands over in the environment,
 * the OpenAPI schema it wrote, and a local HTTP server for answers the real one does not give on demand.
 */

import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { Engram, type EngramOptions } from "../src/index.js";

/** An environment variable the test run must set; its absence fails the test rather than skipping it. */
export function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run these tests through tests/clients/test_typescript_client.py (make test)`);
  }
  return value;
}

export interface SchemaOperation {
  operationId: string;
  method: string;
  path: string;
}

/** Every operation of the OpenAPI schema the server produced for this run (ENGRAM_OPENAPI_SCHEMA). */
export function schemaOperations(): SchemaOperation[] {
  const schema = JSON.parse(readFileSync(required("ENGRAM_OPENAPI_SCHEMA"), "utf8")) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  return Object.entries(schema.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      operationId: operation.operationId,
      method: method.toUpperCase(),
      path,
    })),
  );
}

/** The schema operation a request was for: same method, path matching its template (the most literal wins). */
export function operationOf(operations: SchemaOperation[], method: string, pathname: string): string | undefined {
  const matching = operations.filter(
    (operation) =>
      operation.method === method && new RegExp(`^${operation.path.replace(/\{\w+\}/g, "[^/]+")}$`).test(pathname),
  );
  matching.sort((a, b) => a.path.split("{").length - b.path.split("{").length);
  return matching[0]?.operationId;
}

/** A `fetch` that notes the method and path of every request before sending it with the real one. */
export function recordingFetch(sent: Array<[string, string]>): typeof fetch {
  return (input, init) => {
    sent.push([init?.method ?? "GET", new URL(String(input)).pathname]);
    return fetch(input, init);
  };
}

export function liveClient(keyVariable = "ENGRAM_API_KEY", options: Partial<EngramOptions> = {}): Engram {
  return new Engram(required("ENGRAM_URL"), { apiKey: required(keyVariable), backoffMs: 50, ...options });
}

let counter = 0;
/** A space id no other test uses. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

/** A local HTTP server answering each request with `answer` (which sees every earlier request too). */
export async function localServer(
  answer: (request: Seen, response: ServerResponse, seen: Seen[]) => void,
): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry = {
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: performance.now(),
      };
      seen.push(entry);
      answer(entry, response, seen);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}
