import { Router } from "express";
import { ApiError } from "@serp/shared";
import { resolveLimits, type EffectiveLimits } from "@serp/store";
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
