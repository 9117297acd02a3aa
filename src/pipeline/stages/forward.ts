/** Stage 6, forward: to the upstream (JSON or stream), or to a handler the gateway answers itself. */
import type { RouteManifest } from '../../generated/manifest-types.js';
import type { StageHandler } from '../context.js';
import { forwardWithAttempts } from '../attempts.js';
import { forwardJson } from '../forward/json.js';
import { forwardStream } from '../forward/stream.js';
import { getModel, listModels } from '../local/models.js';
import { authorizeUpload, finalizeUpload } from '../local/temp-files.js';
import { listSkills } from '../local/skills.js';
import { getVideoJob } from '../local/videos.js';
import { deleteStoredResponse, getStoredResponse, listStoredInputItems } from '../local/responses.js';
import { deleteMessageFile, downloadMessageFile, getMessageFile, listMessageFilesRoute, uploadMessageFile } from '../local/message-files.js';
import type { RequestContext } from '../context.js';
import type { Runtime, Stage } from '../stage.js';

/** A route the gateway answers itself. */
type LocalHandler = (ctx: RequestContext, runtime: Runtime) => Promise<void>;

const LOCAL: Record<Exclude<RouteManifest['handler'], 'proxy'>, LocalHandler> = {
  'models-list': listModels,
  'models-get': getModel,
  'temp-files-authorize': authorizeUpload,
  'temp-files-finalize': finalizeUpload,
  'message-files-upload': uploadMessageFile,
  'message-files-list': listMessageFilesRoute,
  'message-files-get': getMessageFile,
  'message-files-delete': deleteMessageFile,
  'message-files-content': downloadMessageFile,
  'skills-list': listSkills,
  'videos-get': getVideoJob,
  'responses-get': getStoredResponse,
  'responses-delete': deleteStoredResponse,
  'responses-input-items': listStoredInputItems,
};

/** Forwards every route. */
export const forwardStage: Stage = {
  name: 'forward',
  compile: (route, runtime: Runtime) => {
    const handler = route.manifest.handler;
    if (handler !== 'proxy') {
      const local = LOCAL[handler];
      return (ctx) => local(ctx, runtime);
    }
    // One attempt loop around the forward (issue 29): deployments, retries and fallbacks.
    return (ctx) => forwardWithAttempts(ctx, runtime, ctx.stream ? forwardStream : forwardJson);
  },
};
