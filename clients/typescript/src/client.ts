/**
 * `Engram`: every operation of the API over the platform's `fetch`, with retries and pagination.
 *
 * ```ts
 * const engram = new Engram("http://127.0.0.1:8000", { apiKey: "eng_..." });
 * const turn = await engram.postTurn("customer-42", "I moved to Lyon last month.");
 * ```
 *
 * Each method names the operation it sends (`OPERATIONS` in schema.ts, generated from the OpenAPI schema), so
 * its path, body and answer types are the schema's: a body the API would not take does not compile.
 */

import { errorFromResponse } from "./errors.js";
import { backoffMs, fillPath, queryString, RETRYABLE_STATUSES, retryAfterSeconds, sleep } from "./requests.js";
import {
  OPERATIONS,
  type DeletionOutput,
  type EpisodeOutput,
  type MemoryOutput,
  type OperationId,
  type Operations,
  type SpaceOutput,
  type TranscriptMessageInputRequest,
} from "./schema.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_BACKOFF_MS = 500;
export const DEFAULT_PAGE_SIZE = 100;

export interface EngramOptions {
  /** An API key, `eng_<prefix>_<secret>`. */
  apiKey: string;
  /** The most one attempt may take, answer included (default 30 s). */
  timeoutMs?: number;
  /** Retries after a 429 or 503 (any request) or a dropped connection (requests safe to resend); default 3. */
  maxRetries?: number;
  /** The first wait before a retry when the server gives no `Retry-After`; it doubles each time (default 0.5 s). */
  backoffMs?: number;
  /** The `fetch` to send with (default: the platform's). */
  fetch?: typeof fetch;
}

/** Per call: an `AbortSignal` that cancels the request and any wait before a retry. */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface PageOptions {
  /** Items asked for per request (the API takes 1–200; default 100). */
  pageSize?: number;
}

type Body<K extends OperationId> = Operations[K]["body"];
type Answer<K extends OperationId> = Operations[K]["response"];
type Query<K extends OperationId> = Operations[K]["query"];
type Without<T, K extends keyof T> = Omit<T, K>;

/** A page of a list operation, as the API answers it. */
export interface Page<T> {
  count: number;
  next?: string | null;
  previous?: string | null;
  results: T[];
}

/**
 * A paginated list: `for await (const item of list)` walks every item, `for await (const page of list.pages())`
 * every page; nothing is asked for until then. Each page is asked for with `?limit=&offset=`.
 */
export class PageIterator<T, P extends Page<T> = Page<T>> implements AsyncIterable<T> {
  constructor(
    private readonly load: (limit: number, offset: number) => Promise<P>,
    readonly pageSize: number = DEFAULT_PAGE_SIZE,
  ) {}

  /** Every page in turn, until one says there is no next. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let offset = 0;
    while (true) {
      const page = await this.load(this.pageSize, offset);
      yield page;
      offset += page.results.length;
      if (!page.next || page.results.length === 0) return;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.results;
  }

  /** Every item of every page, in one array. */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}

interface Prepared<K extends OperationId> {
  operation: K;
  path: string;
  query?: Partial<Query<K>> & { limit?: number; offset?: number };
  headers?: Operations[K]["headers"];
  body?: Body<K>;
  /** Safe to resend after a dropped connection: reads, deletes, and writes the server de-duplicates. */
  idempotent: boolean;
  signal?: AbortSignal | undefined;
}

type Send<K extends OperationId> = Without<Prepared<K>, "operation" | "path">;

/** The client. Methods resolve to the API's JSON (typed from the schema); errors reject with `EngramError`. */
export class Engram {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoffMs: number;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;

  constructor(baseUrl: string, options: EngramOptions) {
    if (!options?.apiKey) throw new TypeError("Engram needs an apiKey");
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // Spaces

  /** The tenant's spaces. */
  iterSpaces(options: PageOptions = {}, call: CallOptions = {}): PageIterator<SpaceOutput> {
    return this.#paginate("spaces_list", {}, {}, options, call);
  }

  /** Create a space (admin scope); `kind: "shared"` for episodes and escalations. A duplicate id is a `Conflict`. */
  createSpace(
    externalId: string,
    options: Without<Body<"spaces_create">, "external_id"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_create">> {
    return this.#send(
      "spaces_create",
      {},
      { body: { ...options, external_id: externalId }, idempotent: false, signal: call.signal },
    );
  }

  getSpace(space: string, call: CallOptions = {}): Promise<Answer<"spaces_retrieve">> {
    return this.#send("spaces_retrieve", { external_id: space }, { idempotent: true, signal: call.signal });
  }

  /** Change the name or settings (admin scope); a setting set to `null` drops its override. */
  updateSpace(
    space: string,
    changes: Body<"spaces_partial_update">,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_partial_update">> {
    return this.#send(
      "spaces_partial_update",
      { external_id: space },
      { body: changes, idempotent: true, signal: call.signal },
    );
  }

  /** Erase the space: every row and its key (admin scope). */
  deleteSpace(space: string, call: CallOptions = {}): Promise<void> {
    return this.#send("spaces_destroy", { external_id: space }, { idempotent: true, signal: call.signal });
  }

  // The turn loop

  /**
   * Store the customer's message; the answer carries what is recalled for it (`memories`, `prompt`; `max_chars`:
   * the room for them). `wait: true` derives the memories before answering (`created`, `merged`, …).
   *
   * Without `message_id` the client makes one, so a retry after a lost answer stores the message once: the
   * server answers a replay with the turn it created the first time.
   */
  postTurn(
    space: string,
    message: string,
    options: Without<Body<"spaces_turns_create">, "message"> & Query<"spaces_turns_create"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_turns_create">> {
    const { wait, ...fields } = options;
    const body = { ...fields, message, message_id: fields.message_id || clientMessageId() };
    return this.#send(
      "spaces_turns_create",
      { external_id: space },
      { body, query: wait ? { wait: true } : {}, idempotent: true, signal: call.signal },
    );
  }

  /** Record the agent's reply to a turn (context only, never mined). */
  postReply(
    space: string,
    turnId: string,
    content: string,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_turns_reply_create">> {
    return this.#send(
      "spaces_turns_reply_create",
      { external_id: space, turn_id: turnId },
      { body: { content }, idempotent: false, signal: call.signal },
    );
  }

  /** Ingest a transcript (`[{role, content, id?, at?}]`) as one turn; idempotent. */
  ingest(
    space: string,
    messages: TranscriptMessageInputRequest[],
    options: Without<Body<"spaces_ingest_create">, "messages"> & Query<"spaces_ingest_create"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_ingest_create">> {
    const { wait, ...fields } = options;
    return this.#send(
      "spaces_ingest_create",
      { external_id: space },
      { body: { ...fields, messages }, query: wait ? { wait: true } : {}, idempotent: true, signal: call.signal },
    );
  }

  getTurn(turnId: string, call: CallOptions = {}): Promise<Answer<"turns_retrieve">> {
    return this.#send("turns_retrieve", { turn_id: turnId }, { idempotent: true, signal: call.signal });
  }

  /** Queue a failed turn again with fresh attempts (admin scope); the turn, `queued`. */
  retryTurn(turnId: string, call: CallOptions = {}): Promise<Answer<"turns_retry_create">> {
    return this.#send("turns_retry_create", { turn_id: turnId }, { idempotent: false, signal: call.signal });
  }

  // Memories

  /** The space's memories, newest first; `kind`, `topic` and `include_superseded` filter them. */
  iterMemories(
    space: string,
    options: Without<Query<"spaces_memories_list">, "limit" | "offset"> & PageOptions = {},
    call: CallOptions = {},
  ): PageIterator<MemoryOutput> {
    const { pageSize, ...filters } = options;
    return this.#paginate("spaces_memories_list", { external_id: space }, filters, { pageSize }, call);
  }

  getMemory(space: string, memoryId: string, call: CallOptions = {}): Promise<Answer<"spaces_memories_retrieve">> {
    return this.#send(
      "spaces_memories_retrieve",
      { external_id: space, memory_id: memoryId },
      { idempotent: true, signal: call.signal },
    );
  }

  /** The memory's versions, newest first: the current one, then those it superseded. */
  memoryHistory(
    space: string,
    memoryId: string,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_memories_history_list">> {
    return this.#send(
      "spaces_memories_history_list",
      { external_id: space, memory_id: memoryId },
      { idempotent: true, signal: call.signal },
    );
  }

  /** Edit a memory (admin scope); a changed content or topic keeps the earlier version as its history. */
  updateMemory(
    space: string,
    memoryId: string,
    changes: Body<"spaces_memories_partial_update">,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_memories_partial_update">> {
    return this.#send(
      "spaces_memories_partial_update",
      { external_id: space, memory_id: memoryId },
      { body: changes, idempotent: true, signal: call.signal },
    );
  }

  /** Delete a memory and the versions it superseded (admin scope; audited). */
  deleteMemory(space: string, memoryId: string, call: CallOptions = {}): Promise<void> {
    return this.#send(
      "spaces_memories_destroy",
      { external_id: space, memory_id: memoryId },
      { idempotent: true, signal: call.signal },
    );
  }

  /**
   * Make an earlier, superseded version current again (admin scope); the restored memory. Not resent after a
   * dropped connection: a second restore of the same version is a `Conflict`.
   */
  restoreMemory(
    space: string,
    memoryId: string,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_memories_restore_create">> {
    return this.#send(
      "spaces_memories_restore_create",
      { external_id: space, memory_id: memoryId },
      { idempotent: false, signal: call.signal },
    );
  }

  /**
   * What is close enough to `query`; `provenance: true` adds each memory's `source`; `max_chars`: the room for
   * prompt lines, filled best first (`left_out` counts what did not fit).
   */
  recall(
    space: string,
    query: string,
    options: Without<Body<"spaces_recall_create">, "query"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_recall_create">> {
    return this.#send(
      "spaces_recall_create",
      { external_id: space },
      { body: { ...options, query }, idempotent: true, signal: call.signal },
    );
  }

  /** Forget what the utterance asks to be forgotten; `dry_run: true` only says what would go. */
  forget(
    space: string,
    utterance: string,
    options: Without<Body<"spaces_forget_create">, "utterance"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_forget_create">> {
    const body = { utterance, dry_run: options.dry_run ?? false };
    return this.#send(
      "spaces_forget_create",
      { external_id: space },
      { body, idempotent: body.dry_run, signal: call.signal },
    );
  }

  // Shared spaces: episodes and escalations

  iterEpisodes(
    space: string,
    options: Without<Query<"spaces_episodes_list">, "limit" | "offset"> & PageOptions = {},
    call: CallOptions = {},
  ): PageIterator<EpisodeOutput> {
    const { pageSize, ...filters } = options;
    return this.#paginate("spaces_episodes_list", { external_id: space }, filters, { pageSize }, call);
  }

  /** Store a case: `inputs`, `output`, `outcome`; optionally `feedback`, `agent`, `on_duplicate`… */
  createEpisode(
    space: string,
    episode: Body<"spaces_episodes_create">,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_episodes_create">> {
    return this.#send(
      "spaces_episodes_create",
      { external_id: space },
      { body: episode, idempotent: false, signal: call.signal },
    );
  }

  getEpisode(space: string, episodeId: string, call: CallOptions = {}): Promise<Answer<"spaces_episodes_retrieve">> {
    return this.#send(
      "spaces_episodes_retrieve",
      { external_id: space, episode_id: episodeId },
      { idempotent: true, signal: call.signal },
    );
  }

  /** Change a case's output, outcome, feedback or resolution comment (its inputs cannot change). */
  updateEpisode(
    space: string,
    episodeId: string,
    changes: Body<"spaces_episodes_partial_update">,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_episodes_partial_update">> {
    return this.#send(
      "spaces_episodes_partial_update",
      { external_id: space, episode_id: episodeId },
      { body: changes, idempotent: true, signal: call.signal },
    );
  }

  deleteEpisode(space: string, episodeId: string, call: CallOptions = {}): Promise<void> {
    return this.#send(
      "spaces_episodes_destroy",
      { external_id: space, episode_id: episodeId },
      { idempotent: true, signal: call.signal },
    );
  }

  /** Past cases close to these inputs, scored argument by argument. */
  recallEpisodes(
    space: string,
    inputs: Body<"spaces_episodes_recall_create">["inputs"],
    options: Without<Body<"spaces_episodes_recall_create">, "inputs"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_episodes_recall_create">> {
    return this.#send(
      "spaces_episodes_recall_create",
      { external_id: space },
      { body: { ...options, inputs }, idempotent: true, signal: call.signal },
    );
  }

  /** Store a person's resolution: `input`, `resolution_comment`, `outcome`, `agent`?… */
  resolveEscalation(
    space: string,
    resolution: Body<"spaces_escalations_resolve_create">,
    call: CallOptions = {},
  ): Promise<Answer<"spaces_escalations_resolve_create">> {
    return this.#send(
      "spaces_escalations_resolve_create",
      { external_id: space },
      { body: resolution, idempotent: false, signal: call.signal },
    );
  }

  /** Whether a past resolution applies to this input: `{apply: true, outcome, …}` or `{apply: false, best_score}`. */
  matchEscalation(
    space: string,
    input: string,
    options: Without<Body<"spaces_escalations_match_create">, "input"> = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_escalations_match_create">> {
    return this.#send(
      "spaces_escalations_match_create",
      { external_id: space },
      { body: { ...options, input }, idempotent: true, signal: call.signal },
    );
  }

  // Export and import

  /** The space as NDJSON bytes (admin scope); every line after the header sealed when `passphrase` is given. */
  exportSpace(space: string, options: { passphrase?: string } = {}, call: CallOptions = {}): Promise<Uint8Array> {
    const headers = options.passphrase ? { "X-Engram-Passphrase": options.passphrase } : {};
    return this.#send(
      "spaces_export_retrieve",
      { external_id: space },
      { headers, idempotent: true, signal: call.signal },
    );
  }

  /** Import an export file into this space (admin scope); importing the same file again skips every record. */
  importSpace(
    space: string,
    data: Uint8Array | string,
    options: { passphrase?: string } = {},
    call: CallOptions = {},
  ): Promise<Answer<"spaces_import_create">> {
    const headers = options.passphrase ? { "X-Engram-Passphrase": options.passphrase } : {};
    return this.#send(
      "spaces_import_create",
      { external_id: space },
      { body: data, headers, idempotent: true, signal: call.signal },
    );
  }

  // Deletion audit

  /** Audited deletions (admin scope): who, when, why; never the content. */
  iterDeletions(
    options: Without<Query<"deletions_list">, "limit" | "offset" | "format"> & PageOptions = {},
    call: CallOptions = {},
  ): PageIterator<DeletionOutput> {
    const { pageSize, ...filters } = options;
    return this.#paginate("deletions_list", {}, filters, { pageSize }, call);
  }

  /** Was this exact text (after normalising case and spaces) deleted from this space? */
  checkDeletion(space: string, text: string, call: CallOptions = {}): Promise<Answer<"deletions_check_create">> {
    return this.#send("deletions_check_create", {}, { body: { space, text }, idempotent: true, signal: call.signal });
  }

  // Sending

  #paginate<K extends PaginatedId>(
    operation: K,
    pathParams: Operations[K]["pathParams"],
    filters: Partial<Query<K>>,
    options: PageOptions,
    call: CallOptions,
  ): PageIterator<Item<K>> {
    const path = fillPath(OPERATIONS[operation].path, pathParams as Record<string, string>); // refuses a bad id now
    const load = (limit: number, offset: number) =>
      this.#sendPrepared({
        operation,
        path,
        query: { ...filters, limit, offset },
        idempotent: true,
        signal: call.signal,
      }) as Promise<Page<Item<K>>>;
    return new PageIterator<Item<K>>(load, options.pageSize ?? DEFAULT_PAGE_SIZE);
  }

  #send<K extends OperationId>(
    operation: K,
    pathParams: Operations[K]["pathParams"],
    request: Send<K>,
  ): Promise<Answer<K>> {
    try {
      const path = fillPath(OPERATIONS[operation].path, pathParams as Record<string, string>);
      return this.#sendPrepared({ ...request, operation, path });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #sendPrepared<K extends OperationId>(request: Prepared<K>): Promise<Answer<K>> {
    const spec: OperationSpec = OPERATIONS[request.operation];
    const url = `${this.baseUrl}${request.path}${queryString(request.query as Record<string, unknown>)}`;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      Accept: "application/json",
      "User-Agent": "engram-client-ts/0.1",
      ...(request.headers as Record<string, string> | undefined),
    };
    let body: string | Uint8Array | undefined;
    if (spec.body === "json" && request.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(request.body);
    } else if (spec.body === "bytes" && request.body !== undefined) {
      headers["Content-Type"] = spec.contentType ?? "application/octet-stream";
      body = request.body as string | Uint8Array;
    }
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await this.#fetch(url, { method: spec.method, headers, body: body ?? null, signal });
      } catch (error) {
        // A dropped connection or a timeout: resent only when the server would not act on it twice.
        if (request.signal?.aborted || !this.#shouldRetry(request.idempotent, attempt, null)) throw error;
        await sleep(backoffMs(attempt, null, this.backoffMs), request.signal);
        continue;
      }
      if (!this.#shouldRetry(request.idempotent, attempt, response.status)) {
        return (await answerOf(spec, response)) as Answer<K>;
      }
      const retryAfter = retryAfterSeconds(response.headers.get("Retry-After"));
      await response.body?.cancel().catch(() => {});
      await sleep(backoffMs(attempt, retryAfter, this.backoffMs), request.signal);
    }
  }

  /** A 429/503 was not carried out, so any request may be resent; a lost connection only an idempotent one. */
  #shouldRetry(idempotent: boolean, attempt: number, status: number | null): boolean {
    if (attempt > this.maxRetries) return false;
    return status === null ? idempotent : RETRYABLE_STATUSES.has(status);
  }
}

interface OperationSpec {
  method: string;
  path: string;
  body: "json" | "bytes" | "none";
  contentType?: string;
  response: "json" | "bytes" | "none";
}

type PaginatedId = {
  [K in OperationId]: Answer<K> extends { results: unknown[] } ? K : never;
}[OperationId];
type Item<K extends OperationId> = Answer<K> extends { results: Array<infer T> } ? T : never;

async function answerOf(spec: OperationSpec, response: Response): Promise<unknown> {
  if (response.status >= 400) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    throw errorFromResponse(response.status, body, retryAfterSeconds(response.headers.get("Retry-After")));
  }
  if (spec.response === "none") {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  if (spec.response === "bytes") return new Uint8Array(await response.arrayBuffer());
  return response.json();
}

/** A `message_id` for a turn the caller gave none: a retry of the same call sends the same one. */
function clientMessageId(): string {
  // Web Crypto is global in browsers, Deno, Bun and Node 19+; Node 18 has it only behind a flag.
  const random =
    globalThis.crypto?.randomUUID?.().replaceAll("-", "") ??
    Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join("");
  return `client-${random}`;
}
