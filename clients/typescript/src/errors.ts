/**
 * The API's error answers as exceptions: `{"error": {"code", "message", "details"}}` becomes an `EngramError`,
 * of the subclass for its HTTP status (the same classes as the Python client's `engram_client.errors`).
 */

export interface EngramErrorInit {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  retryAfter?: number | null;
}

/** An error answer from the API. `code` is the API's error code (`not_found`, `rate_limited`, …). */
export class EngramError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The API's error code: `invalid_request`, `not_found`, `duplicate_found`, … (docs/api.md lists them). */
  readonly code: string;
  /** What the API says is wrong; for `invalid_request`, `details` maps each field to its messages. */
  readonly details: unknown;
  /** The server's `Retry-After`, in seconds, when it gave one. */
  readonly retryAfter: number | null;

  constructor({ status, code, message, details = null, retryAfter = null }: EngramErrorInit) {
    super(`${status} ${code}: ${message}`);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }
}

/** 400: the request was refused; `details` names each field. */
export class InvalidRequest extends EngramError {}

/** 401: missing, wrong or revoked API key. */
export class AuthenticationFailed extends EngramError {}

/** 403: the key lacks the scope, or speaks for another agent. */
export class PermissionDenied extends EngramError {}

/** 404: no such space, memory, turn or episode in this tenant (another tenant's ids are not found too). */
export class NotFound extends EngramError {}

/** 409: a duplicate space, `duplicate_found` or `conflicting_feedback`. */
export class Conflict extends EngramError {}

/** 429 after the client's retries were used up; `retryAfter` is the server's advice in seconds. */
export class RateLimited extends EngramError {}

/** 503 after the client's retries were used up. */
export class ServiceUnavailable extends EngramError {}

const BY_STATUS: Record<number, typeof EngramError> = {
  400: InvalidRequest,
  401: AuthenticationFailed,
  403: PermissionDenied,
  404: NotFound,
  409: Conflict,
  429: RateLimited,
  503: ServiceUnavailable,
};

/** The exception for an error answer; a body that is not the API's error shape still gives one, code `error`. */
export function errorFromResponse(status: number, body: unknown, retryAfter: number | null): EngramError {
  const error = isObject(body) && isObject(body["error"]) ? body["error"] : null;
  const ErrorClass = BY_STATUS[status] ?? EngramError;
  if (!error) {
    const text = typeof body === "string" ? body : body == null ? "" : JSON.stringify(body);
    return new ErrorClass({ status, code: "error", message: text.slice(0, 500) || `HTTP ${status}`, retryAfter });
  }
  return new ErrorClass({
    status,
    code: String(error["code"] ?? "error"),
    message: String(error["message"] ?? ""),
    details: error["details"] ?? null,
    retryAfter,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
