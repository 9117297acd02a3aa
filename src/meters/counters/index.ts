/**
 * The local counters a route's meter may name (issue 9, "Meters are data"): one small pure module
 * each. Config checks refuse a meter naming a counter not in COUNTERS.
 */
import { audioSecondsCounter } from './audio-seconds.js';
import { characters } from './characters.js';
import type { Counter } from './counter.js';
import { documentCharactersCounter, pagesCounter } from './file-facts.js';
import { filesCounter } from './files.js';
import { imageSizeUnitsCounter } from './image-size-units.js';
import { imageUnitsCounter } from './image-units.js';
import { listItemsCounter } from './list-items.js';
import { textElementsCounter } from './text-elements.js';
import { textRecords } from './text-records.js';
import { tokens } from './tokens.js';
import { utf16Units } from './utf16-units.js';

export { CounterInputError, type Counter } from './counter.js';

/** Every local counter by the name a route manifest uses. */
export const COUNTERS: ReadonlyMap<string, Counter> = new Map(
  [characters, utf16Units, textElementsCounter, textRecords, tokens, imageUnitsCounter, imageSizeUnitsCounter, audioSecondsCounter, filesCounter, pagesCounter, documentCharactersCounter, listItemsCounter].map((c) => [c.name, c]),
);

/** The counter a manifest names, or undefined for an unknown name. */
export function counterNamed(name: string): Counter | undefined {
  return COUNTERS.get(name);
}
