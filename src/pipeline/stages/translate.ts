/**
 * Stage 5, translate: builds the upstream body (and query) with the translator chosen for the first
 * deployment's operation. An attempt on another deployment translates afresh (src/pipeline/attempts.ts).
 */
import { translateFor } from '../deployment.js';
import type { Stage } from '../stage.js';

/** Translates proxy routes' requests. */
export const translateStage: Stage = {
  name: 'translate',
  compile: (route) => (route.manifest.handler === 'proxy' ? translateFor : null),
};
