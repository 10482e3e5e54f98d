/**
 * Jest's order, with the files that take longest started first (issue 28): a run ends when its
 * last file does, so a long file started late leaves the other cores idle at the end. Jest orders
 * by the previous run's durations when its cache has them; a fresh clone (as CI runs) has none and
 * falls back to file size, which puts the longest files anywhere. SECONDS holds the longest, as the
 * slowest-files report measured them on a fresh clone (`npm test` prints it at the end); the rest
 * keep Jest's order after them.
 *
 * `--shard=i/n` splits the files into n lanes of about equal time (heaviest first, each to the
 * lane with the least so far), not Jest's split by path hash: npm test runs the timing drills in
 * two lanes beside the rest (scripts/run.mjs).
 */
import Sequencer from "@jest/test-sequencer";

/** Wall seconds of the longest files, each run alone or among the drills (2026-11-27, 2 cores). */
const SECONDS = {
  // One file of 180 s until its two longest tests moved to browser-captured.test.ts (measured alone
  // beside a load of ~13: 70 s and 41 s where the single file took 150 s, scaled to this table).
  "packages/upstream/test/browser-captured.test.ts": 85,
  "packages/upstream/test/browser.test.ts": 50,
  "test/e2e/guarded-upstream.test.ts": 110,
  "test/drills/fuzz.test.ts": 70,
  "packages/upstream/test/conformance/conformance.test.ts": 57,
  "test/compat/raw-pages.test.ts": 53,
  "test/compat/client-defaults.test.ts": 52,
  "test/compat/raw-page-stores.test.ts": 47,
  "test/compat/search.test.ts": 46,
  "test/compat/cache.test.ts": 45,
  "test/jobs/lifecycle.test.ts": 44,
  "test/compat/python-clients.test.ts": 40,
  "packages/upstream/test/html-equivalence.test.ts": 39,
  "test/e2e/browser.test.ts": 36,
  // The timing drills (scripts/run.mjs ALONE).
  "test/drills/npm-start-kill.test.ts": 55,
  "test/ops/supervisor.test.ts": 39,
  "test/ops/shutdown.test.ts": 28,
  "test/drills/postgres-down-at-boot.test.ts": 22,
  "test/drills/fairness.test.ts": 21,
  "test/drills/worker-kill.test.ts": 20,
  "test/drills/postgres-kills.test.ts": 17,
  "test/drills/redis-kill-retries.test.ts": 14,
  "test/drills/redis-sentinel-failover.test.ts": 14,
  "test/drills/redis-restart.test.ts": 13,
  "test/exits/proof.test.ts": 13,
  "test/drills/ledger.test.ts": 11,
  "test/drills/upstream-faults.test.ts": 9,
};
/** A file not listed: shorter than every listed one. */
const UNLISTED = 5;

const secondsOf = (test) => {
  const key = Object.keys(SECONDS).find((path) => test.path.endsWith(`/${path}`));
  return key ? SECONDS[key] : UNLISTED;
};

export default class HeavyFirst extends Sequencer {
  sort(tests) {
    // Array.prototype.sort is stable: the unlisted keep Jest's order among themselves.
    return [...super.sort(tests)].sort((a, b) => secondsOf(b) - secondsOf(a));
  }

  shard(tests, { shardIndex, shardCount }) {
    const lanes = Array.from({ length: shardCount }, () => ({ seconds: 0, tests: [] }));
    const byWeight = [...tests].sort((a, b) => secondsOf(b) - secondsOf(a) || (a.path < b.path ? -1 : 1));
    for (const test of byWeight) {
      const lane = lanes.reduce((least, l) => (l.seconds < least.seconds ? l : least));
      lane.seconds += secondsOf(test);
      lane.tests.push(test);
    }
    return lanes[shardIndex - 1].tests;
  }
}
