/**
 * Field censoring for log lines: credential fields are replaced by "[redacted]" before a line is
 * written, whatever their value looks like (an Azure or Cohere key has no recognisable shape).
 *
 * Censored, at the top of a log object and one level down (`provider.apiKey`, `req.headers`):
 *  - fields named apiKey, api_key, key or token;
 *  - in a `headers` object: authorization, x-api-key and cookie.
 *
 * This replaces pino's `redact` option, whose implementation (@pinojs/redact) parsed its 15 paths
 * again on every call: about 20 KB allocated per log line, a fifth of everything a chat request
 * allocated. Here a line with nothing to censor allocates nothing; one with something is copied
 * (the caller's object is never changed).
 */

/** The value a censored field gets. */
export const CENSORED = '[redacted]';

const SECRET_FIELDS: ReadonlySet<string> = new Set(['apiKey', 'api_key', 'key', 'token']);
const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'cookie']);

type Fields = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Error);

/** `headers` with its secret headers censored; the same object when it has none. */
function censorHeaders(headers: Fields): Fields {
  let out: Fields | null = null;
  for (const name of Object.keys(headers)) {
    if (SECRET_HEADERS.has(name.toLowerCase())) (out ??= { ...headers })[name] = CENSORED;
  }
  return out ?? headers;
}

/** `fields` with its secret fields censored (and, below `depth`, its objects' own); the same object when nothing is. */
function censorLevel(fields: Fields, depth: number): Fields {
  let out: Fields | null = null;
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    let next = value;
    if (SECRET_FIELDS.has(name)) next = CENSORED;
    else if (name === 'headers' && isPlainObject(value)) next = censorHeaders(value);
    else if (depth > 0 && isPlainObject(value)) next = censorLevel(value, depth - 1);
    if (next !== value) (out ??= { ...fields })[name] = next;
  }
  return out ?? fields;
}

/**
 * A log object with its credential fields censored, copied only if one was (pino's `formatters.log`).
 * A child logger's bindings are not log objects (pino writes them once, unformatted): the gateway
 * binds no credential, and the key-shape redaction of whole lines still covers them.
 */
export function censorFields(fields: Fields): Fields {
  return censorLevel(fields, 1);
}
