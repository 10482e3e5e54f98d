/**
 * A ledger drainer that dies the hard way (SIGKILL) right after its insert committed and before it
 * trimmed the stream: the crash the ledger drill (test/drills/ledger.test.ts) recovers from.
 * Reads REDIS_URL, DATABASE_URL and SERP_PREFIX.
 */
import { LedgerDrainer, createPgPool, createRedis, keySpace } from "@serp/store";

const redis = createRedis(process.env.REDIS_URL!, "worker", "drill-drainer");
const pg = createPgPool(process.env.DATABASE_URL!, "drill-drainer");
const drainer = new LedgerDrainer(redis, keySpace(process.env.SERP_PREFIX!), pg, {
  afterInsert: () => {
    process.kill(process.pid, "SIGKILL");
  },
});
await drainer.drainOnce();
// Not reached when there was something to drain.
process.exit(3);
