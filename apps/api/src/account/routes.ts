import { Router } from "express";
import { ApiError } from "@serp/shared";
import { resolveLimits, usageByPeriod, usageQuery, type EffectiveLimits } from "@serp/store";
import { fieldIssues, invalidRequest } from "../errors.js";
import type { AppContext } from "../context.js";
import { limitDefaults } from "../limits/index.js";
import type { AccountView } from "../openapi/schemas.js";

/** GET /v1/account: the caller's own account, credits, usage, limits and keys (public ids only). */
export function accountRoutes(ctx: AppContext): Router {
  const router = Router();
  const defaults = limitDefaults(ctx.env);

  router.get("/v1/account", async (req, res) => {
    const id = req.accountId!;
    const [account, usage, keys] = await Promise.all([ctx.accounts.get(id), ctx.accounts.usage(id), ctx.accounts.listKeys(id)]);
    if (!account) throw new ApiError("unauthorized", "The account of this key no longer exists");
    const body: AccountView = {
      id: account.id,
      name: account.name,
      createdAt: account.createdAt,
      balance: account.balance,
      reserved: account.reserved,
      available: Math.max(0, account.balance - account.reserved),
      usage,
      limits: limitsView(resolveLimits(account.limits, defaults), account.reserved),
      keys: keys
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
        .map((k) => ({ id: k.id, label: k.label, createdAt: k.createdAt, revokedAt: k.revokedAt })),
    };
    res.json(body);
  });

  router.get("/v1/account/usage", async (req, res) => {
    const parsed = usageQuery.safeParse(req.query);
    if (!parsed.success) throw invalidRequest(fieldIssues(parsed.error));
    const { from, to, granularity } = parsed.data;
    if (!ctx.pg) throw new ApiError("unavailable", "Usage by day needs the history database (DATABASE_URL), which this deployment has not configured", undefined, 60);
    const rows = await usageByPeriod(ctx.pg, req.accountId!, { from, to }, granularity);
    res.json({ from: from.toISOString(), to: to.toISOString(), granularity, usage: rows });
  });

  return router;
}

/** 0 (no limit) is shown as null, which reads as "unlimited" without a special number. */
function limitsView(limits: EffectiveLimits, inFlight: number): AccountView["limits"] {
  return {
    rate: {
      limit: limits.rate.limit || null,
      windowSeconds: limits.rate.windowSeconds,
      source: limits.rate.source,
    },
    concurrency: { limit: limits.concurrency.limit || null, inFlight, source: limits.concurrency.source },
  };
}
