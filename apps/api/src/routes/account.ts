/** GET /v1/account and its usage: the caller's own account, credits, usage, limits and keys (public ids only). */
import { Router } from "express";
import { ApiError } from "@serp/shared";
import { resolveLimits, usageByPeriod, usageQuery, type EffectiveLimits } from "@serp/store";
import type { AppContext } from "../context.js";
import { limitDefaults } from "../limits/index.js";
import { bearer, errors, json } from "../openapi/responses.js";
import * as s from "../openapi/schemas.js";
import { RouteTable } from "./define.js";

export const accountRouteTable = new RouteTable();

const getAccount = accountRouteTable.define({
  method: "get",
  path: "/v1/account",
  operationId: "getAccount",
  tags: ["Account"],
  summary: "The caller's account",
  description: "Credits (balance, reserved, available), usage per endpoint, limits with their source, and the keys' public ids.",
  security: bearer,
  responses: { 200: json(s.accountView, "The account"), ...errors("unauthorized") },
});

const getUsage = accountRouteTable.define({
  method: "get",
  path: "/v1/account/usage",
  operationId: "getUsage",
  tags: ["Account"],
  summary: "Usage by day or month",
  description:
    "Jobs (completed and failed), cache hits and credits per endpoint and period (UTC), from the ledger in PostgreSQL. " +
    "`from` is inclusive and `to` exclusive; by default the last 30 days; at most 366 days. " +
    "Entries reach the ledger within about a second of each job's end, so the current period can trail by that much.",
  security: bearer,
  // The store's schema: it also turns dates into instants and checks the range.
  request: { query: usageQuery },
  responses: { 200: json(s.usageView, "Usage rows, oldest period first"), ...errors("invalid_request", "unauthorized") },
});

export function accountRoutes(ctx: AppContext): Router {
  const router = Router();
  const defaults = limitDefaults(ctx.env);

  getAccount.mount(
    router,
    getAccount.handle(async (_input, reply, req) => {
      const id = req.accountId!;
      const [account, usage, keys] = await Promise.all([ctx.accounts.get(id), ctx.accounts.usage(id), ctx.accounts.listKeys(id)]);
      if (!account) throw new ApiError("unauthorized", "The account of this key no longer exists");
      reply(200, {
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
      });
    }),
  );

  getUsage.mount(
    router,
    getUsage.handle(async ({ query }, reply, req) => {
      const { from, to, granularity } = query;
      if (!ctx.pg) throw new ApiError("unavailable", "Usage by day needs the history database (DATABASE_URL), which this deployment has not configured", undefined, 60);
      const rows = await usageByPeriod(ctx.pg, req.accountId!, { from, to }, granularity);
      reply(200, { from: from.toISOString(), to: to.toISOString(), granularity, usage: rows });
    }),
  );

  return router;
}

/** 0 (no limit) is shown as null, which reads as "unlimited" without a special number. */
function limitsView(limits: EffectiveLimits, inFlight: number): s.AccountView["limits"] {
  return {
    rate: {
      limit: limits.rate.limit || null,
      windowSeconds: limits.rate.windowSeconds,
      source: limits.rate.source,
    },
    concurrency: { limit: limits.concurrency.limit || null, inFlight, source: limits.concurrency.source },
  };
}
