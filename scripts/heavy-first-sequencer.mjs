/**
 * Jest's order, with the files that take longest started first (issue 28): a run ends when its
 * last file does, so a long file started late leaves the other cores idle at the end. Jest orders
 * by the previous run's durations when its cache has them; a fresh clone (as CI runs) has none and
 * falls back to file size, which puts the longest files anywhere. These are the longest as the
 * slowest-files report measured them (`npm test` prints it at the end); the rest keep Jest's order.
 */
import Sequencer from "@jest/test-sequencer";

const HEAVIEST = [
  "packages/upstream/test/browser.test.ts",
  "test/e2e/guarded-upstream.test.ts",
  "test/drills/fuzz.test.ts",
  "packages/upstream/test/conformance/conformance.test.ts",
  "test/compat/raw-pages.test.ts",
  "test/compat/client-defaults.test.ts",
  "test/compat/raw-page-stores.test.ts",
  "test/compat/search.test.ts",
  "test/compat/cache.test.ts",
  "test/jobs/lifecycle.test.ts",
  "test/compat/python-clients.test.ts",
  "packages/upstream/test/html-equivalence.test.ts",
  "test/e2e/browser.test.ts",
];

export default class HeavyFirst extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = HEAVIEST.findIndex((path) => test.path.endsWith(`/${path}`));
      return i < 0 ? HEAVIEST.length : i;
    };
    const ordered = super.sort(tests);
    // Array.prototype.sort is stable: the rest keep Jest's order among themselves.
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
