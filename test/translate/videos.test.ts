/** The OpenAI videos translator's job reading and reference-image check (spec 4.16). */
import { describe, expect, it } from 'vitest';
import { createNativeJsonToOpenaiVideos, videoJobStatus } from '../../src/translate/native-json--openai-videos/index.js';
import { png } from '../helpers/images.js';

const dataUrl = (w: number, h: number): string => `data:image/png;base64,${png(w, h).toString('base64')}`;

describe('videoJobStatus', () => {
  it('reads queued, running, completed and failed jobs', () => {
    expect(videoJobStatus({ id: 'v1', status: 'queued' })).toEqual({ vendorId: 'v1', state: 'queued', progress: 0 });
    expect(videoJobStatus({ id: 'v1', status: 'in_progress', progress: 42.7 })).toEqual({ vendorId: 'v1', state: 'in_progress', progress: 42 });
    expect(videoJobStatus({ id: 'v1', status: 'completed', progress: 100, seconds: '8' })).toEqual({ vendorId: 'v1', state: 'completed', progress: 100, seconds: 8 });
    expect(videoJobStatus({ id: 'v1', status: 'failed', error: { code: 'moderation_blocked', message: 'Blocked.' } }))
      .toMatchObject({ state: 'failed', error: { code: 'moderation_blocked', message: 'Blocked.' } });
    expect(videoJobStatus({ id: 'v1', status: 'failed' }).error).toEqual({ code: 'video_generation_failed', message: 'The video generation failed.' });
  });

  it('refuses a job without an id or with an unknown status (502)', () => {
    expect(() => videoJobStatus({ status: 'queued' })).toThrow(expect.objectContaining({ code: 'upstream_error' }));
    expect(() => videoJobStatus({ id: 'v1', status: 'cancelled' })).toThrow(expect.objectContaining({ code: 'upstream_error' }));
  });
});

describe('the reference image', () => {
  it('must have exactly the requested size', () => {
    expect(() => createNativeJsonToOpenaiVideos({ prompt: 'x', size: '1280x720', image: dataUrl(1280, 720) })).not.toThrow();
    expect(() => createNativeJsonToOpenaiVideos({ prompt: 'x', size: '1280x720', image: dataUrl(1280, 721) }))
      .toThrow(expect.objectContaining({ code: 'invalid_request', extra: { param: 'image' } }));
  });
});
