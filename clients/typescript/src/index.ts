/** Typed TypeScript client for the Engram memory API. */

export {
  DEFAULT_BACKOFF_MS,
  DEFAULT_MAX_RETRIES,
  DEFAULT_PAGE_SIZE,
  DEFAULT_TIMEOUT_MS,
  Engram,
  PageIterator,
  type CallOptions,
  type EngramOptions,
  type Page,
  type PageOptions,
} from "./client.js";
export {
  AuthenticationFailed,
  Conflict,
  EngramError,
  errorFromResponse,
  InvalidRequest,
  NotFound,
  PermissionDenied,
  RateLimited,
  ServiceUnavailable,
  type EngramErrorInit,
} from "./errors.js";
export { backoffMs, retryAfterSeconds, segment } from "./requests.js";
export * from "./schema.js";
