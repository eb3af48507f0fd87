/** An error envelope `{status, data: null, msg, code}` from the service. */
export class MediaparseError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    readonly msg: string,
    readonly requestId: string | null,
    /** The answer's `Retry-After` in seconds, when it had one. */
    readonly retryAfter: number | null,
    readonly body: unknown,
  ) {
    super(`${status} ${code ?? ""}: ${msg}`);
    this.name = "MediaparseError";
  }
}
