/**
 * One MCP server per request, bound to the authenticated account: job tools submit live jobs
 * through JobService (validated, reserved and billed exactly like POST /v1/jobs), get_job reads one.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { z } from "zod";
import { ApiError, ENDPOINTS, safeText, type Endpoint, type JobResponse } from "@serp/shared";
import type { AppContext } from "../context.js";
import { isStorageDown, resultError } from "../errors.js";
import type { Submitter } from "../submitter.js";
import { jobRequestOf } from "../jobs/service.js";
import { jobMarkdown } from "../compat/markdown.js";
import {
  GET_JOB_DESCRIPTION,
  GET_JOB_TOOL,
  JOB_TOOLS,
  TOOL_INPUT_SCHEMAS,
  getJobInputSchema,
  jobResponseSchema,
  toolNameOf,
} from "./tools.js";

const INSTRUCTIONS =
  "Search-engine results: each search tool runs one job and returns {job, result} as structuredContent, and a compact " +
  "markdown rendering (headings per block, numbered results with title, link and snippet) as its text. Jobs run live " +
  "(waited for) unless queue is fast or regular; " +
  "it costs 1 credit (web_shopping_product: 1 per 10 sellers), and a failed job costs nothing. " +
  "get_job reads a job again by its id.";

/** Big enough for any valid arguments object; bounds the work a hostile one can cause. */
const MAX_TOOL_INPUT_ELEMENTS = 64;

export function buildMcpServer(ctx: AppContext, by: Submitter, logger: Logger): McpServer {
  const server = new McpServer(
    { name: "serp", title: "Search results API", version: "1.0.0" },
    { instructions: INSTRUCTIONS, maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS },
  );
  server.server.onerror = (err) => logger.debug({ err: err.message }, "mcp protocol error");

  for (const endpoint of ENDPOINTS) {
    const tool = toolNameOf(endpoint);
    server.registerTool(
      tool,
      {
        ...JOB_TOOLS[endpoint],
        inputSchema: TOOL_INPUT_SCHEMAS[endpoint],
        outputSchema: jobResponseSchema,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      (params) => runJob(ctx, by, endpoint, params, logger.child({ tool })),
    );
  }

  server.registerTool(
    GET_JOB_TOOL,
    {
      title: "Read a job",
      description: GET_JOB_DESCRIPTION,
      inputSchema: getJobInputSchema,
      outputSchema: jobResponseSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ jobId }) => {
      try {
        return jobResult(await ctx.jobService.get(by.accountId, jobId));
      } catch (err) {
        if (err instanceof ApiError && err.code === "not_found") {
          return toolError(`No job ${jobId} for this account: the id is unknown, expired, or belongs to another account.`);
        }
        return failure(err, logger.child({ tool: GET_JOB_TOOL }));
      }
    },
  );
  return server;
}

async function runJob(ctx: AppContext, by: Submitter, endpoint: Endpoint, args: Record<string, unknown>, log: Logger): Promise<CallToolResult> {
  const { queue = "live", ...params } = args;
  let body: JobResponse;
  try {
    const outcome = await ctx.jobService.submit(by, jobRequestOf({ endpoint, params, queue }));
    // A queued job (fast, regular) comes back pending, without its result yet.
    body = outcome.status === 200 ? outcome.body : { job: outcome.body.job, result: null };
  } catch (err) {
    return failure(err, log);
  }
  const { job } = body;
  log.info({ jobId: job.id, status: job.status, credits: job.credits, queue: job.queue }, "mcp tool call");
  if (job.status !== "failed") return jobResult(body);
  return { ...jobResult(body), isError: true };
}

/**
 * A job tool's result: its structuredContent must fit the tools' declared outputSchema (the SDK
 * checks it when the tool answers; this type when the code is built).
 */
type JobToolResult = CallToolResult & { structuredContent: z.input<typeof jobResponseSchema> };

/** structuredContent is the job response; the text an agent reads is its markdown rendering (compat/markdown.ts). */
function jobResult(body: JobResponse): JobToolResult {
  return { content: [{ type: "text", text: jobMarkdown(body) }], structuredContent: { job: body.job, result: body.result } };
}

/** A tool error's text may echo an argument: no control or bidi characters reach the agent. */
function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: safeText(text) }] };
}

/** Service errors become tool errors in the customer's words; anything else is logged, not shown. */
function failure(thrown: unknown, log: Logger): CallToolResult {
  const err = resultError(thrown) ?? thrown;
  if (err instanceof ApiError) {
    if (err.code === "invalid_request" && err.details?.length) {
      // Fields are named as the tool's arguments, not as members of a POST /v1/jobs body.
      const fields = err.details.map((d) => `${d.field.replace(/^params\./, "")} ${d.message}`);
      return toolError(`Invalid arguments: ${fields.join("; ")}`);
    }
    const retry = err.retryAfterSeconds !== undefined ? ` Retry after ${err.retryAfterSeconds} s.` : "";
    return toolError(`${err.message} (${err.code}).${retry}`);
  }
  if (isStorageDown(err)) return toolError("Storage is unavailable; try again shortly (unavailable).");
  log.error({ err }, "mcp tool failed");
  return toolError("Internal error; try again later (internal_error).");
}
