/**
 * A route's per-parameter policy for one translation (DESIGN.md: "declare `reject`, `drop` or
 * `default` per parameter"; plus `map` and `allow` for the values a parameter accepts). Its own
 * module so that config/types and translate/types both depend on it and not on each other (issue 9,
 * point 5: no import cycles).
 */

/** What a route's YAML declares for one client parameter a translation cannot carry as is. */
export interface ParamPolicy {
  unsupported?: 'reject' | 'drop';
  default?: unknown;
  /** The accepted values and what each becomes upstream (a voice name to a vendor voice id); others are a 400. */
  map?: Readonly<Record<string, string>>;
  /**
   * The values accepted as sent (e.g. the sizes an image model takes, spec 4.14); any other is a 400
   * `unsupported_parameter` naming the parameter and these values.
   */
  allow?: readonly (string | number | boolean)[];
}
