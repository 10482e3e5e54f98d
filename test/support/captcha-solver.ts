/**
 * A fake CAPTCHA solver speaking the createTask/getTaskResult JSON shape Anti-Captcha, 2Captcha v2 and
 * CapMonster share (../shared/reference/proxies-2026.md §5). Its answer is the token the replay accepts for
 * the page's site key and data-s (`recaptchaTokenFor`), so a solve only works for a data-s the replay
 * issued, from the address it issued it to. It counts calls and can be told to fail.
 *
 *   const solver = await startFakeSolver({ clientKey: "k" });
 *   // CAPTCHA_SOLVER_URL=solver.url CAPTCHA_SOLVER_KEY=k
 *   solver.tasks(); solver.calls(); solver.setFailure("unsolvable"); await solver.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { recaptchaTokenFor } from "@serp/replay";

/**
 * - `reject`: createTask answers errorId 1 ERROR_KEY_DOES_NOT_EXIST-like error (ERROR_NO_SLOT_AVAILABLE);
 * - `unsolvable`: getTaskResult answers errorId 12 ERROR_CAPTCHA_UNSOLVABLE;
 * - `never`: the task stays "processing" forever;
 * - `http-500`: every call answers 500;
 * - `wrong-token`: "ready" with a token the replay refuses.
 */
export type SolverFailure = "reject" | "unsolvable" | "never" | "http-500" | "wrong-token";

export interface FakeSolverOptions {
  clientKey: string;
  /** getTaskResult answers "processing" this many times per task before "ready". Default 1. */
  pollsBeforeReady?: number;
  /** The cost reported per solve (as the APIs do: a number in USD). Default 0.002. */
  cost?: number;
}

export interface SolverTask {
  taskId: number;
  type: string;
  websiteURL: string;
  websiteKey: string;
  recaptchaDataSValue?: string;
  /** The proxy the caller asked the solver to use (RecaptchaV2Task), as sent. */
  proxy?: { proxyType?: string; proxyAddress?: string; proxyPort?: number; proxyLogin?: string; proxyPassword?: string };
  polls: number;
  solved: boolean;
}

export interface FakeSolver {
  url: string;
  calls(): { createTask: number; getTaskResult: number; badKey: number; invalid: number };
  tasks(): SolverTask[];
  setFailure(failure: SolverFailure | undefined): void;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 256 * 1024) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }).end(text);
}

export async function startFakeSolver(options: FakeSolverOptions): Promise<FakeSolver> {
  const counts = { createTask: 0, getTaskResult: 0, badKey: 0, invalid: 0 };
  const tasks = new Map<number, SolverTask>();
  let failure: SolverFailure | undefined;
  let nextId = 1000;
  const pollsBeforeReady = options.pollsBeforeReady ?? 1;
  const cost = options.cost ?? 0.002;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://solver.invalid").pathname;
    if (req.method !== "POST" || (path !== "/createTask" && path !== "/getTaskResult")) return reply(res, 404, { errorId: 1, errorCode: "ERROR_NOT_FOUND" });
    const body = (await readJson(req)) as Record<string, unknown> | undefined;
    if (path === "/createTask") counts.createTask += 1;
    else counts.getTaskResult += 1;
    if (failure === "http-500") return reply(res, 500, { error: "internal" });
    if (!body || typeof body !== "object") {
      counts.invalid += 1;
      return reply(res, 200, { errorId: 1, errorCode: "ERROR_BAD_REQUEST", errorDescription: "body must be JSON" });
    }
    if (body.clientKey !== options.clientKey) {
      counts.badKey += 1;
      return reply(res, 200, { errorId: 1, errorCode: "ERROR_KEY_DOES_NOT_EXIST", errorDescription: "Account authorization key not found in the system" });
    }
    if (path === "/createTask") {
      if (failure === "reject") return reply(res, 200, { errorId: 2, errorCode: "ERROR_NO_SLOT_AVAILABLE", errorDescription: "No idle workers" });
      const task = body.task as Record<string, unknown> | undefined;
      const type = task?.type;
      if (
        !task ||
        (type !== "RecaptchaV2Task" && type !== "RecaptchaV2TaskProxyless") ||
        typeof task.websiteURL !== "string" ||
        typeof task.websiteKey !== "string" ||
        (task.recaptchaDataSValue !== undefined && typeof task.recaptchaDataSValue !== "string")
      ) {
        counts.invalid += 1;
        return reply(res, 200, { errorId: 14, errorCode: "ERROR_TASK_NOT_SUPPORTED", errorDescription: "task type or fields wrong" });
      }
      const taskId = nextId++;
      const proxy =
        type === "RecaptchaV2Task"
          ? {
              proxyType: task.proxyType as string | undefined,
              proxyAddress: task.proxyAddress as string | undefined,
              proxyPort: task.proxyPort as number | undefined,
              proxyLogin: task.proxyLogin as string | undefined,
              proxyPassword: task.proxyPassword as string | undefined,
            }
          : undefined;
      tasks.set(taskId, {
        taskId,
        type,
        websiteURL: task.websiteURL,
        websiteKey: task.websiteKey,
        ...(typeof task.recaptchaDataSValue === "string" ? { recaptchaDataSValue: task.recaptchaDataSValue } : {}),
        ...(proxy ? { proxy } : {}),
        polls: 0,
        solved: false,
      });
      return reply(res, 200, { errorId: 0, taskId });
    }
    const task = tasks.get(Number(body.taskId));
    if (!task) return reply(res, 200, { errorId: 16, errorCode: "ERROR_NO_SUCH_CAPCHA_ID", errorDescription: "Task not found" });
    task.polls += 1;
    if (failure === "unsolvable") return reply(res, 200, { errorId: 12, errorCode: "ERROR_CAPTCHA_UNSOLVABLE", errorDescription: "Workers could not solve the Captcha" });
    if (failure === "never" || task.polls <= pollsBeforeReady) return reply(res, 200, { errorId: 0, status: "processing" });
    task.solved = true;
    const token = failure === "wrong-token" ? "03Anot-a-token-the-replay-issued" : recaptchaTokenFor(task.websiteKey, task.recaptchaDataSValue ?? "");
    return reply(res, 200, {
      errorId: 0,
      status: "ready",
      solution: { gRecaptchaResponse: token },
      cost: cost.toFixed(5),
      ip: "127.0.0.1",
      createTime: 0,
      endTime: 0,
      solveCount: 1,
    });
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, { error: "internal" });
      else res.destroy();
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((ready, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => ready());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => ({ ...counts }),
    tasks: () => [...tasks.values()].map((t) => structuredClone(t)),
    setFailure: (next) => {
      failure = next;
    },
    close: () => {
      closing ??= new Promise<void>((done) => {
        server.close(() => done());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
