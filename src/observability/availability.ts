/**
 * The up/down state of one dependency of the gateway (the store, the limiter backend), reported once
 * per change: an outage logs one line when it starts and one when it ends, never one per request
 * (issue 8: "errors are logged once per state change").
 */

/** What a dependency looks like to /readyz. */
export interface DependencyCheck {
  status: 'ok' | 'unavailable';
  /** What it is and where, without credentials (e.g. "redis://127.0.0.1:6379/0"). */
  target: string;
  /** The last error, while unavailable. */
  error?: string;
  /** When the current state began (ISO 8601). */
  since: string;
}

/** Called on every change of state. */
export type AvailabilityListener = (up: boolean, error: string | null) => void;

/** Tracks one dependency; cheap to call on every success and failure. */
export class Availability {
  private up = true;
  private lastError: string | null = null;
  private since = new Date();

  constructor(readonly target: string, private readonly onChange: AvailabilityListener = () => undefined) {}

  /** A call failed for a connection-class reason. */
  down(error: unknown): void {
    this.lastError = error instanceof Error ? error.message : String(error);
    if (!this.up) return;
    this.up = false;
    this.since = new Date();
    this.onChange(false, this.lastError);
  }

  /** A call succeeded. */
  ok(): void {
    if (this.up) return;
    this.up = true;
    this.lastError = null;
    this.since = new Date();
    this.onChange(true, null);
  }

  /** True unless the last call failed. */
  get isUp(): boolean {
    return this.up;
  }

  /** The state as /readyz shows it. */
  check(): DependencyCheck {
    return { status: this.up ? 'ok' : 'unavailable', target: this.target, ...(this.lastError ? { error: this.lastError } : {}), since: this.since.toISOString() };
  }
}

/** A URL with its password removed, for logs, health answers and the start line. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
