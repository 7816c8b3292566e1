// Errors in the shape current vLLM returns: {"error": {message, type, param, code}} with the HTTP
// status as `code` and a type named after the openai client's error classes.

export class SimHttpError extends Error {
  readonly status: number;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    param: string | null = null,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = status;
    this.param = param;
    this.headers = headers;
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

export function errorBody(status: number, message: string, param: string | null = null): string {
  return JSON.stringify({ error: { message, type: errorType(status), param, code: status } });
}
