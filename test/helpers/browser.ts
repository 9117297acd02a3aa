/**
 * Headless Chromium for the console's end-to-end test (issue 13): Debian's `chromium` at
 * /usr/bin/chromium driven by playwright-core, never a downloaded browser. Without it the suite is
 * skipped with a loud message; under CI it fails instead (.ci/run installs it with apt).
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe } from 'vitest';

/** Debian's Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/** The launch flags: headless, no sandbox (containers), and nothing that phones home. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Where the test run writes its screenshots (kept out of git by test/artifacts/.gitignore). */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

const missing = !existsSync(CHROMIUM);
if (missing && process.env.CI) {
  throw new Error(`The browser suite cannot run under CI: ${CHROMIUM} is missing (.ci/run installs Debian's chromium with apt).`);
}
if (missing) console.warn(`\n*** Browser suite skipped: ${CHROMIUM} is missing (apt-get install chromium) ***\n`);

/** describe; without /usr/bin/chromium (and not under CI): describe.skip with a loud warning. */
export const describeBrowser: typeof describe = missing ? (describe.skip as typeof describe) : describe;

/**
 * Launches Chromium. playwright-core gives every launch a fresh temporary profile (--user-data-dir)
 * and every `browser.newContext()` its own cookie jar, so one browser can hold a user and an operator.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
}

/**
 * Saves a full-page screenshot of `page` as test/artifacts/<name>.png. The pglite and postgres projects
 * run the browser test at the same time: each writes a file of its own and renames it into place, so
 * the last one wins whole and no image is ever half of one and half of the other.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  const partial = `${ARTIFACTS}${name}.${process.pid}.tmp`;
  await writeFile(partial, await page.screenshot({ fullPage: true }));
  await rename(partial, `${ARTIFACTS}${name}.png`);
}

/** What a page gets wrong in the basics: form controls without a label, and not exactly one h1. */
export async function pageBasics(page: Page): Promise<{ h1: number; unlabelled: string[] }> {
  return page.evaluate(() => {
    const controls = [...document.querySelectorAll('input, select, textarea')] as Array<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>;
    const unlabelled = controls
      .filter((c) => c.type !== 'hidden')
      .filter((c) => (c.labels?.length ?? 0) === 0 && !c.getAttribute('aria-label') && !c.getAttribute('aria-labelledby'))
      .map((c) => c.outerHTML);
    return { h1: document.querySelectorAll('h1').length, unlabelled };
  });
}
