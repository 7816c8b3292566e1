// Errors in the shape current vLLM returns: {"error": {message, type, param, code}} with the HTTP
// status as `code` and a type named after the openai client's error classes (or the one vLLM names,
// e.g. "InvalidUserInput" for a bad LoRA load).

export class SimHttpError extends Error {
  readonly status: number;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  /** The `type` vLLM writes when it is not the one derived from the status. */
  readonly type: string | null;

  constructor(
    status: number,
    message: string,
    param: string | null = null,
    headers: Record<string, string> = {},
    type: string | null = null,
  ) {
    super(message);
    this.status = status;
    this.param = param;
    this.headers = headers;
    this.type = type;
  }
}

const TYPES: Record<number, string> = {
  400: "BadRequestError",
  401: "AuthenticationError",
  403: "PermissionDeniedError",
  404: "NotFoundError",
  413: "BadRequestError",
  422: "UnprocessableEntityError",
  429: "RateLimitError",
};

export function errorType(status: number): string {
  return TYPES[status] ?? (status >= 500 ? "InternalServerError" : "BadRequestError");
}

export interface ErrorObject {
  error: { message: string; type: string; param: string | null; code: number };
}

export function errorObject(
  status: number,
  message: string,
  param: string | null = null,
  type: string | null = null,
): ErrorObject {
  return { error: { message, type: type ?? errorType(status), param, code: status } };
}
