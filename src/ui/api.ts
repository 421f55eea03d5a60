/**
 * The page's only way to the server: the public HTTP API on its own origin (relative URLs), with the
 * Bearer key when the server needs one. Errors become ApiError with the API's code, message and issues.
 */

export interface Issue {
  path: string;
  message: string;
  column?: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
    readonly hint?: string,
  ) {
    super(message);
  }
}

export interface Api {
  json<T>(path: string, params?: URLSearchParams, signal?: AbortSignal): Promise<T>;
  blob(path: string, params: URLSearchParams, signal?: AbortSignal): Promise<Blob>;
}

/** `key()`: the key to send, or null (a server without keys). */
export function createApi(key: () => string | null): Api {
  const request = async (path: string, params: URLSearchParams | undefined, signal: AbortSignal | undefined): Promise<Response> => {
    const headers: Record<string, string> = { accept: "application/json" };
    const given = key();
    if (given !== null) headers.authorization = `Bearer ${given}`;
    let response: Response;
    try {
      // Same origin only: a relative URL, and no credentials of the browser's own (cookies) sent.
      response = await fetch(params ? `${path}?${params}` : path, { headers, signal, credentials: "omit", cache: "no-store", redirect: "error" });
    } catch (caught) {
      if (signal?.aborted) throw caught;
      throw new ApiError(0, "UNREACHABLE", "The server cannot be reached: is `semsearch serve` still running?");
    }
    if (response.ok) return response;
    let body: { errors?: { code?: string; message?: string; hint?: string; issues?: Issue[] }[] } = {};
    try {
      body = await response.json();
    } catch {
      // not the API's error shape: the status alone
    }
    const first = body.errors?.[0];
    if (response.status === 404 && first?.code === "NOT_FOUND" && given !== null) {
      // (a wrong key and an unknown path get the same answer by design; the page's paths are known)
      throw new ApiError(401, "KEY_REFUSED", "The server did not accept this key: it is wrong, revoked, or for another project.");
    }
    throw new ApiError(response.status, first?.code ?? `HTTP_${response.status}`, first?.message ?? `The server answered ${response.status}`, first?.issues ?? [], first?.hint);
  };
  return {
    async json<T>(path: string, params?: URLSearchParams, signal?: AbortSignal): Promise<T> {
      return (await (await request(path, params, signal)).json()) as T;
    },
    async blob(path: string, params: URLSearchParams, signal?: AbortSignal): Promise<Blob> {
      return (await request(path, params, signal)).blob();
    },
  };
}
