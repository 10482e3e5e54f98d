/**
 * The account's webhook signing secret (mounted after the /v1 Bearer authentication), and the
 * webhook this service sends. A job's delivery attempts are read under the job (./jobs.ts).
 */
import { Router } from "express";
import { z } from "zod";
import { WebhookStore } from "@serp/store";
import type { AppContext } from "../context.js";
import { bearer, errors, json } from "../openapi/responses.js";
import * as s from "../openapi/schemas.js";
import { RouteTable } from "./define.js";

export const webhookRouteTable = new RouteTable();

const getWebhookSecret = webhookRouteTable.define({
  method: "get",
  path: "/v1/webhooks/secret",
  operationId: "getWebhookSecret",
  tags: ["Webhooks"],
  summary: "The account's webhook signing secret",
  security: bearer,
  responses: { 200: json(s.webhookSecret, "The secret (`whsec_…`)"), ...errors("unauthorized") },
});

const rotateWebhookSecret = webhookRouteTable.define({
  method: "post",
  path: "/v1/webhooks/secret/rotate",
  operationId: "rotateWebhookSecret",
  tags: ["Webhooks"],
  summary: "Replace the webhook signing secret",
  security: bearer,
  responses: { 200: json(s.webhookSecret, "The new secret"), ...errors("unauthorized") },
});

webhookRouteTable.webhook({
  method: "post",
  path: "job.final",
  operationId: "jobFinal",
  tags: ["Webhooks"],
  summary: "A fast or regular job with a postbackUrl became final",
  description:
    "POSTed to the job's postbackUrl. Signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature " +
    "`v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>` with the account's secret). Any 2xx is delivered; otherwise " +
    "retried with growing delays for about a day; 410 stops at once.",
  request: {
    headers: z.object({
      "webhook-id": z.string().meta({ description: "The same on every retry of one job's delivery: an idempotency key" }),
      "webhook-timestamp": z.string().meta({ description: "Unix seconds of this attempt" }),
      "webhook-signature": z.string().meta({ example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=" }),
    }),
    body: { content: { "application/json": { schema: s.webhookEvent } } },
  },
  responses: { 200: { description: "Any 2xx acknowledges the delivery" }, 410: { description: "Stop delivering to this URL" } },
});

export function webhookRoutes(ctx: AppContext): Router {
  const router = Router();
  const webhooks = new WebhookStore(ctx.redis, ctx.keys, ctx.env.JOB_RETENTION_SECONDS);

  /** The secret deliveries are signed with (`whsec_…`, Standard Webhooks), made on first use. */
  getWebhookSecret.mount(
    router,
    getWebhookSecret.handle(async (_input, reply, req, res) => {
      res.set("Cache-Control", "no-store");
      reply(200, { secret: await webhooks.secret(req.accountId!) });
    }),
  );

  /** A new secret; deliveries from now on are signed with it only. */
  rotateWebhookSecret.mount(
    router,
    rotateWebhookSecret.handle(async (_input, reply, req, res) => {
      const secret = await webhooks.rotateSecret(req.accountId!);
      req.log?.info({ accountId: req.accountId }, "webhook secret rotated");
      res.set("Cache-Control", "no-store");
      reply(200, { secret });
    }),
  );

  return router;
}
