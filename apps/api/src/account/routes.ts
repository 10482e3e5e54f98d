import { Router } from "express";
import { ApiError } from "@serp/shared";
import { resolveLimits, usageByPeriod, type EffectiveLimits } from "@serp/store";
import { z } from "zod";
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

const DAY_MS = 86_400_000;
/** A day (`2026-11-01`, midnight UTC) or an instant (`2026-11-01T12:00:00Z`). */
const instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/, "must be a date (YYYY-MM-DD) or an ISO 8601 instant with its offset")
  .transform((s, ctx) => {
    const d = new Date(s.length === 10 ? `${s}T00:00:00Z` : s);
    if (Number.isNaN(d.getTime())) ctx.addIssue({ code: "custom", message: "is not a real date" });
    return d;
  });

/** `from` inclusive, `to` exclusive; the last 30 days until now by default; at most 366 days. */
export const usageQuery = z
  .strictObject({
    from: instant.optional(),
    to: instant.optional(),
    granularity: z.enum(["day", "month"]).default("day"),
  })
  .transform(({ from, to, granularity }) => {
    const end = to ?? new Date();
    return { from: from ?? new Date(end.getTime() - 30 * DAY_MS), to: end, granularity };
  })
  .refine((q) => q.from < q.to, { message: "from must be before to", path: ["from"] })
  .refine((q) => q.to.getTime() - q.from.getTime() <= 366 * DAY_MS, { message: "a range covers at most 366 days", path: ["to"] });

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
