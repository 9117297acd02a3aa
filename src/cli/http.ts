/** A minimal client for the admin API (global fetch); errors carry the server's message. */

/** The server answered with an error status, or could not be reached (`status` 0). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Default request timeout. */
const TIMEOUT_MS = 30_000;

/** Calls `/admin/...` routes with the admin bearer token. */
export class AdminClient {
  private readonly base: string;
  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    const url = new URL(baseUrl); // throws TypeError on a malformed GATEWAY_URL
    this.base = url.toString().replace(/\/+$/, '');
  }

  /** Sends one request; resolves to the parsed JSON body (undefined for 204), throws HttpError otherwise. */
  async call<T>(method: 'GET' | 'POST' | 'DELETE' | 'PATCH', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new HttpError(0, null, `cannot reach the gateway at ${this.base}: ${cause}`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
      const message = typeof error?.message === 'string' ? error.message : `HTTP ${res.status} ${res.statusText}`;
      throw new HttpError(res.status, typeof error?.code === 'string' ? error.code : null, message);
    }
    if (text && parsed === undefined) throw new HttpError(res.status, null, 'the server answered with invalid JSON');
    return parsed as T;
  }
}
