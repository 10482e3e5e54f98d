/** Drill: 1,000 concurrent submissions on an account with 100 credits: exactly 100 accepted. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;

d("drill: concurrent submissions against a small balance", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      workerQueues: ["fast"],
      concurrency: 16,
      env: { RATE_LIMIT_PER_MINUTE: "1000000", MAX_JOBS_IN_FLIGHT: "1000000" },
    });
  });
  afterAll(() => stack.close());

  test("exactly 100 of 1,000 are accepted, the rest get 402, and the balance never drops below zero", async () => {
    const { key, accountId } = await stack.account(100);
    const server = createServer(stack.api.app);
    // A backlog that holds the whole burst (Node's default is 511 pending connections).
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", 2048, ok));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/jobs`;
    let lowest = Infinity;
    const watch = setInterval(async () => {
      const a = await stack.api.accounts.get(accountId);
      if (a) lowest = Math.min(lowest, a.balance, a.balance - a.reserved);
    }, 5);
    try {
      const statuses = await Promise.all(
        Array.from({ length: 1000 }, () =>
          fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
            // A query with no capture: the replay's small "no results" page (the drill is about credits, not parsing).
            body: JSON.stringify({ endpoint: "web-search", params: { query: "credits race" } }),
          }).then(async (r) => (await r.arrayBuffer(), r.status)),
        ),
      );
      expect(statuses.filter((s) => s === 202)).toHaveLength(100);
      expect(statuses.filter((s) => s === 402)).toHaveLength(900);
      // Let the accepted jobs finish: the balance must land on exactly 0.
      const by = Date.now() + 60_000;
      let acct = await stack.api.accounts.get(accountId);
      while (acct!.reserved > 0 && Date.now() < by) {
        await new Promise((r) => setTimeout(r, 200));
        acct = await stack.api.accounts.get(accountId);
      }
      expect(acct).toMatchObject({ reserved: 0 });
      const ledger = await stack.api.accounts.ledger(accountId, 1000);
      const charged = ledger.filter((e) => e.type === "charge").reduce((s, e) => s + e.credits, 0);
      expect(acct!.balance).toBe(100 - charged);
      expect(lowest).toBeGreaterThanOrEqual(0);
    } finally {
      clearInterval(watch);
      await new Promise((ok) => server.close(ok));
    }
  }, 90_000);
});
