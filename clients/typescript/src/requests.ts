/** What every request shares, independent of the operation: path segments, query strings, retry timing. */

/** 429 and 503 were not carried out, so any request may be sent again after them. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** The longest the client waits before a retry, whatever the server's `Retry-After` says. */
export const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * One path segment: `segment("customer 42") === "customer%2042"`.
 *
 * An id that could name another path (`..`, or with a slash, which servers decode even when quoted) is refused
 * before anything is sent: `segment("a/b")` throws a `RangeError`.
 */
export function segment(value: string): string {
  const text = String(value);
  if (text === "" || text === "." || text === ".." || text.includes("/") || text.includes("\\")) {
    throw new RangeError(`Not a valid id for a URL path: ${JSON.stringify(text)}`);
  }
  return encodeURIComponent(text);
}

/** A path template (`/api/v1/spaces/{external_id}`) with each `{name}` replaced by its value as one segment. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new RangeError(`No value for {${name}} in ${template}`);
    return segment(value);
  });
}

/** A query string of the values given, booleans spelled the way the API reads them (`true`/`false`). */
export function queryString(values: Record<string, unknown> | undefined): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values ?? {})) {
    if (value === undefined || value === null) continue;
    query.append(name, typeof value === "boolean" ? (value ? "true" : "false") : String(value));
  }
  const text = query.toString();
  return text ? `?${text}` : "";
}

/**
 * `Retry-After` in seconds: a number (`"5"`) or an HTTP date; `null` when absent or unreadable. Bounded to
 * 0…60 s, so a broken or hostile server cannot park the client for an hour.
 */
export function retryAfterSeconds(header: string | null | undefined, now: number = Date.now()): number | null {
  const text = header?.trim();
  if (!text) return null;
  let seconds = /^[-+]?(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isNaN(seconds)) {
    const when = Date.parse(text);
    if (Number.isNaN(when)) return null;
    seconds = (when - now) / 1000;
  }
  return Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_SECONDS);
}

/** The wait before retry `attempt` (1-based), in ms: the server's `Retry-After` when it gave one, else doubling. */
export function backoffMs(attempt: number, retryAfter: number | null, baseMs: number): number {
  if (retryAfter !== null) return retryAfter * 1000;
  return Math.min(baseMs * 2 ** (attempt - 1), MAX_RETRY_AFTER_SECONDS * 1000);
}

/** Resolves after `ms`, or rejects with the signal's reason when the caller aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
