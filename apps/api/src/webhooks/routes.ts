// Placeholder until its issue lands; replaced by the real module.
import { Router } from "express";
import type { AppContext } from "../context.js";
export function webhookRoutes(_ctx: AppContext): Router {
  return Router();
}
