/**
 * How an OpenAI-compatible vendor reports token usage where it differs from OpenAI's chat format
 * (issue 32 item 1: "the difference is declared in YAML"): a provider operation's `usage:`. Its own
 * module, like param-policy.ts, so that config/types and the translators both depend on it and not on
 * each other.
 */

/** A chat operation's usage dialect, compiled from the manifest (absent members: OpenAI's). */
export interface UsageDialect {
  /** on_request: the gateway asks for stream usage (stream_options.include_usage); always: the vendor sends it unasked and refuses the option. */
  stream: 'on_request' | 'always';
  /** JSON Pointers into the usage object, each overriding OpenAI's member for that count. */
  input?: string;
  output?: string;
  cachedInput?: string;
  reasoning?: string;
}
