/**
 * Compiles an operation's `poll` (provider manifest): where the first answer names the job (a header,
 * or a JSON Pointer into its body for vendors that answer 200 with a polling URL), which hosts a
 * polling URL may name, the job's statuses, and the output a finished job names by URL (downloaded and
 * kept by the gateway). Every mistake is a ManifestError naming the file and the path.
 */
import type { ProviderManifest } from '../generated/manifest-types.js';
import { manifestPointer } from '../meters/pointer.js';
import { ManifestError } from './errors.js';
import type { CompiledPoll, CompiledPollOutput } from './types.js';

type RawPoll = NonNullable<ProviderManifest['operations'][string]['poll']>;

/** Largest output a job may name when the manifest gives no `max_bytes`: 50 MiB. */
export const DEFAULT_OUTPUT_MAX_BYTES = 50 * 1024 * 1024;

function compileOutput(file: string, at: string, raw: NonNullable<RawPoll['output']>): CompiledPollOutput {
  return {
    pointer: manifestPointer(file, `${at}/pointer`, raw.pointer),
    hosts: (raw.hosts ?? []).map((h) => h.toLowerCase()),
    maxBytes: raw.max_bytes ?? DEFAULT_OUTPUT_MAX_BYTES,
    contentTypes: new Set(raw.content_types),
  };
}

/** A status listed twice would make the job's end ambiguous. */
function checkStatuses(file: string, at: string, raw: RawPoll): void {
  const seen = new Map<string, string>();
  for (const list of ['succeeded', 'failed', 'moderated'] as const) {
    for (const status of raw[list] ?? []) {
      const other = seen.get(status);
      if (other !== undefined) throw new ManifestError(file, `${at}/${list}`, `status "${status}" is also listed in ${other}`);
      seen.set(status, list);
    }
  }
}

/** One operation's poll; `at` is the manifest path of the `poll` object. */
export function compilePoll(file: string, at: string, raw: RawPoll): CompiledPoll {
  const header = raw.location_header;
  const pointer = raw.location_pointer;
  if ((header === undefined) === (pointer === undefined)) {
    throw new ManifestError(file, at, 'declare exactly one of location_header (a 202 naming the job in a header) and location_pointer (a body naming its polling URL)');
  }
  checkStatuses(file, at, raw);
  return {
    locationHeader: header?.toLowerCase() ?? null,
    locationPointer: pointer === undefined ? null : manifestPointer(file, `${at}/location_pointer`, pointer),
    hosts: (raw.hosts ?? []).map((h) => h.toLowerCase()),
    statusPointer: manifestPointer(file, `${at}/status_pointer`, raw.status_pointer),
    succeeded: new Set(raw.succeeded), failed: new Set(raw.failed), moderated: new Set(raw.moderated ?? []),
    intervalMs: raw.interval_ms ?? 500, deadlineMs: raw.deadline_ms ?? 60_000,
    output: raw.output ? compileOutput(file, `${at}/output`, raw.output) : null,
  };
}
