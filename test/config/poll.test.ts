/**
 * The provider manifest's `poll` (issue 11 item 4): a job named by a header or by a JSON Pointer into
 * the first answer's body, the hosts a polling URL may name, moderated statuses, and the output a
 * finished job names by URL. Every mistake is a ManifestError naming the file and the path.
 */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { compilePoll } from '../../src/config/poll.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

const FILE = 'providers/bfl.yaml';
const AT = '/operations/flux-2-flex/poll';

async function compileWith(edit: (poll: Record<string, any>) => void): Promise<unknown> {
  const copy: ConfigCopy = await copyConfig();
  await copy.editYaml(FILE, (d) => edit(d.operations['flux-2-flex'].poll));
  return loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' }));
}

describe('poll manifests', () => {
  it('compiles the shipped BFL poll: body pointer, regional hosts, statuses, and the output to fetch', async () => {
    const gateway = await compileWith(() => undefined) as Awaited<ReturnType<typeof compileGateway>>;
    const poll = gateway.providers.get('bfl')!.operations['flux-2-flex']!.poll!;
    expect(poll).toMatchObject({
      locationHeader: null, locationPointer: ['polling_url'], hosts: ['*.bfl.ai'], statusPointer: ['status'],
      succeeded: new Set(['Ready']), failed: new Set(['Error', 'Task not found']), moderated: new Set(['Request Moderated', 'Content Moderated']),
      output: { pointer: ['result', 'sample'], hosts: ['*.bfl.ai'], maxBytes: 33_554_432, contentTypes: new Set(['image/png', 'image/jpeg']) },
    });
    // The language job keeps its header location and no output.
    expect(gateway.providers.get('azure_language')!.operations.summarize!.poll).toMatchObject({ locationHeader: 'operation-location', locationPointer: null, hosts: [], output: null });
  });

  it('refuses a pointer that is not one, a bad host pattern and a bad content type, naming file and path', async () => {
    const cases: Array<[(p: Record<string, any>) => void, string]> = [
      [(p) => { p.location_pointer = 'polling_url'; }, `${AT}/location_pointer`],
      [(p) => { p.output.pointer = 'result.sample'; }, `${AT}/output/pointer`],
      [(p) => { p.hosts = ['*.ai']; }, `${AT}/hosts/0`],
      [(p) => { p.output.hosts = ['https://x.bfl.ai']; }, `${AT}/output/hosts/0`],
      [(p) => { p.output.content_types = ['png']; }, `${AT}/output/content_types/0`],
    ];
    for (const [edit, path] of cases) {
      const error = await compileWith(edit).then(() => null, (e: unknown) => e);
      expect(error, path).toBeInstanceOf(ManifestError);
      expect(error, path).toMatchObject({ file: FILE, path });
    }
  });

  it('needs exactly one location, and each status in one list only', async () => {
    const both = await compileWith((p) => { p.location_header = 'location'; }).then(() => null, (e: unknown) => e);
    expect(both).toMatchObject({ file: FILE, path: AT, reason: expect.stringContaining('exactly one of location_header') });
    const none = await compileWith((p) => { delete p.location_pointer; }).then(() => null, (e: unknown) => e);
    expect(none).toMatchObject({ file: FILE, path: AT });
    const twice = await compileWith((p) => { p.moderated = ['Error']; }).then(() => null, (e: unknown) => e);
    expect(twice).toMatchObject({ file: FILE, path: `${AT}/moderated`, reason: 'status "Error" is also listed in failed' });
  });

  it('compilePoll defaults: interval, deadline, no hosts, no moderation, 50 MiB outputs', () => {
    const poll = compilePoll('p.yaml', '/operations/x/poll', { location_pointer: '/a~1b', status_pointer: '/s', succeeded: ['ok'], failed: ['bad'], output: { pointer: '/u', content_types: ['image/png'] } });
    expect(poll).toMatchObject({ locationPointer: ['a/b'], hosts: [], moderated: new Set(), intervalMs: 500, deadlineMs: 60_000, output: { hosts: [], maxBytes: 52_428_800 } });
  });
});
