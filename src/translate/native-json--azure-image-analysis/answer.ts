/**
 * Reads the vendor's `ImageAnalysisResult` (../shared/specs/azure/image-analysis/generated.json) into
 * the client's vision answer (schemas/native-json/vision-analyze-response.json): one snake_case field
 * per selected feature, boxes as `{x, y, width, height}` (the vendor's `w`/`h`, whose client names are
 * width and height). A selected feature the vendor left out is reported empty (still billed: spec 1,
 * "regardless of features returned"); a result of the wrong shape is the upstream's fault (502).
 */
import { GatewayError } from '../../errors.js';
import type { VisualFeature } from './features.js';

type Rec = Record<string, unknown>;

function malformed(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream provider sent a malformed image analysis answer.');
}

const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

function int(v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw malformed();
  return v;
}

function num(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw malformed();
  return v;
}

function str(v: unknown): string {
  if (typeof v !== 'string') throw malformed();
  return v;
}

function list(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw malformed();
  return v;
}

function rec(v: unknown): Rec {
  if (!isRecord(v)) throw malformed();
  return v;
}

/** `ImageBoundingBox {x, y, w, h}` as the gateway's box. */
function box(v: unknown): Rec {
  const b = rec(v);
  return { x: int(b.x), y: int(b.y), width: int(b.w), height: int(b.h) };
}

/** `ImagePoint[]`. */
function polygon(v: unknown): Rec[] {
  return list(v).map((p) => ({ x: int(rec(p).x), y: int(rec(p).y) }));
}

function tag(v: unknown): Rec {
  const t = rec(v);
  return { name: str(t.name), confidence: num(t.confidence) };
}

/** The `values` of a list result (`TagsResult`, `ObjectsResult`, ...); none when the result is absent. */
function values(result: unknown): unknown[] {
  return result === undefined ? [] : list(rec(result).values);
}

/** `ReadResult {blocks: [{lines}]}` as the lines read and their text, one line per row. */
function read(result: unknown): Rec {
  // The spec says one block (minItems 1); an image without text can come back with none.
  const blocks = result === undefined ? [] : list(rec(result).blocks);
  const lines = blocks.flatMap((block) => list(rec(block).lines)).map((l) => {
    const line = rec(l);
    const words = list(line.words ?? []).map((w) => ({ text: str(rec(w).text), bounding_polygon: polygon(rec(w).boundingPolygon), confidence: num(rec(w).confidence) }));
    return { text: str(line.text), bounding_polygon: polygon(line.boundingPolygon), words };
  });
  return { text: lines.map((l) => l.text).join('\n'), lines };
}

/** Each feature's client field, from the vendor's result. */
const FIELDS: Record<VisualFeature, [string, (upstream: Rec) => unknown]> = {
  caption: ['caption', (u) => (u.captionResult === undefined ? null : { text: str(rec(u.captionResult).text), confidence: num(rec(u.captionResult).confidence) })],
  read: ['read', (u) => read(u.readResult)],
  tags: ['tags', (u) => values(u.tagsResult).map(tag)],
  objects: ['objects', (u) => values(u.objectsResult).map((o) => ({ bounding_box: box(rec(o).boundingBox), tags: list(rec(o).tags).map(tag) }))],
  people: ['people', (u) => values(u.peopleResult).map((p) => ({ bounding_box: box(rec(p).boundingBox), confidence: num(rec(p).confidence) }))],
  smartCrops: ['smart_crops', (u) => values(u.smartCropsResult).map((c) => ({ aspect_ratio: num(rec(c).aspectRatio), bounding_box: box(rec(c).boundingBox) }))],
};

/** The fields of the selected features, in the answer's fixed order. */
export function featureFields(upstream: Rec, selected: readonly VisualFeature[]): Rec {
  const order = Object.keys(FIELDS) as VisualFeature[];
  return Object.fromEntries(order.filter((f) => selected.includes(f)).map((f) => [FIELDS[f][0], FIELDS[f][1](upstream)]));
}

/** `modelVersion` and `metadata {width, height}` (both required by the spec). */
export function imageFacts(upstream: Rec): { model_version: string; metadata: { width: number; height: number } } {
  const meta = rec(upstream.metadata);
  const width = int(meta.width);
  const height = int(meta.height);
  if (width < 1 || height < 1) throw malformed();
  return { model_version: str(upstream.modelVersion), metadata: { width, height } };
}
