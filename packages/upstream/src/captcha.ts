/**
 * The opt-in CAPTCHA rung's client: reads the upstream's /sorry/ page (reCAPTCHA site key, one-time
 * `data-s`, the form and its hidden fields), has a solver service solve it through the createTask /
 * getTaskResult JSON API that Anti-Captcha, 2Captcha v2 and CapMonster share, and builds the form post that
 * earns the GOOGLE_ABUSE_EXEMPTION cookie. The caller sends that post through the same exit the page came
 * from (the cookie and the token are the exit's). Off unless CAPTCHA_SOLVER_URL and CAPTCHA_SOLVER_KEY are
 * both set: solving the upstream's CAPTCHA is the operator's choice, with legal weight (the reference
 * proxies-2026.md §5 "Legal": acts named in Google v. SerpApi, N.D. Cal. 25-cv-10826).
 *
 * Neither the client key nor proxy credentials ever reach an error message or a log line.
 */
import { all, attr, first, parseHtml } from "./html/index.js";

/** What one /sorry/ page asks for. */
export interface SorryPage {
  /** The reCAPTCHA `data-sitekey`. */
  siteKey: string;
  /** The one-time `data-s` (empty when the page has none): the solver must get it before anything renders the widget. */
  dataS: string;
  /** Where the form posts, absolute. */
  action: string;
  /** The form's hidden fields (`q`, `continue`), to post back with the token. */
  fields: Record<string, string>;
}

/** The /sorry/ page's CAPTCHA, or undefined when `html` carries no reCAPTCHA form. `pageUrl`: where it was served. */
export function readSorryPage(html: string, pageUrl: string): SorryPage | undefined {
  const doc = parseHtml(html);
  const widget = first("[data-sitekey]", doc);
  const siteKey = attr(widget, "data-sitekey")?.trim();
  if (!widget || !siteKey) return undefined;
  const form = first("form#captcha-form", doc) ?? first("form", doc);
  if (!form) return undefined;
  let action: string;
  try {
    action = new URL(attr(form, "action") || pageUrl, pageUrl).href;
  } catch {
    return undefined;
  }
  const fields: Record<string, string> = {};
  for (const input of all("input[type=hidden][name]", form)) fields[attr(input, "name") ?? ""] = attr(input, "value") ?? "";
  return { siteKey, dataS: attr(widget, "data-s") ?? "", action, fields };
}

/** The form post that redeems `token` for the exemption cookie: send it through the exit that got the page. */
export function exemptionRequest(sorry: SorryPage, token: string): { url: string; method: "POST"; headers: Record<string, string>; body: string } {
  const body = new URLSearchParams({ ...sorry.fields, "g-recaptcha-response": token }).toString();
  return { url: sorry.action, method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body };
}

/** The few Redis commands the fleet-wide hourly cap uses (an ioredis client fits). */
export interface SolveCounterStore {
  get(key: string): Promise<string | null>;
  incr(key: string): Promise<number>;
  pexpire(key: string, ms: number): Promise<number>;
  decr(key: string): Promise<number>;
}

export interface CaptchaSolverOptions {
  /** The solver API's base URL (createTask and getTaskResult are under it). */
  url: string;
  /** The account key (`clientKey`). Never logged. */
  key: string;
  /** One solve, createTask to token, gives up after this. Default 180 000 (solves take 20–80 s). */
  jobTimeoutMs?: number;
  /** Solves started per clock hour, fleet-wide when `redis` is given (else per process). Default 100. */
  maxPerHour?: number;
  /** Between getTaskResult polls. Default 5 000 (the APIs ask for 3–10 s). */
  pollMs?: number;
  /** Transport failures (network, 5xx) tolerated per API call before the solve fails. Default 2. */
  retries?: number;
  /** Counts solves for `maxPerHour` across every worker. */
  redis?: SolveCounterStore;
  /** Default "captcha:solves". */
  redisKey?: string;
}

export const CAPTCHA_DEFAULTS = { jobTimeoutMs: 180_000, maxPerHour: 100, pollMs: 5_000, retries: 2 } as const;

export type CaptchaFailure = "capped" | "timeout" | "aborted" | "rejected" | "unsolvable" | "transport";

/** A failed solve. The message names the solver's error code at most: never the key or a proxy credential. */
export class CaptchaError extends Error {
  constructor(
    readonly failure: CaptchaFailure,
    message: string,
  ) {
    super(`captcha solve ${failure}: ${message}`);
    this.name = "CaptchaError";
  }
}

export interface SolveRequest {
  siteKey: string;
  dataS: string;
  /** The /sorry/ page's URL (`websiteURL`). */
  pageUrl: string;
  /** The exit the page came through: the solver works through it too. Unset: a proxyless task. */
  proxyUrl?: string;
}

export interface Solved {
  token: string;
  /** What the solver billed, USD (0 when it did not say). */
  cost: number;
  ms: number;
}

/** The task fields for the exit (`proxyType`, `proxyAddress`, …), or nothing for a proxyless task. */
function proxyFields(proxyUrl: string | undefined): Record<string, string | number> {
  if (!proxyUrl) return {};
  let url: URL;
  try {
    url = new URL(proxyUrl);
  } catch {
    throw new CaptchaError("rejected", "the exit's proxy URL is not a URL");
  }
  const type = url.protocol.replace(/:$/, "");
  if (type !== "http" && type !== "https" && type !== "socks5") throw new CaptchaError("rejected", `proxy type ${type} is not one a solver takes`);
  const port = Number(url.port || (type === "https" ? 443 : type === "http" ? 80 : 1080));
  return {
    proxyType: type,
    proxyAddress: url.hostname.replace(/^\[|\]$/g, ""),
    proxyPort: port,
    ...(url.username ? { proxyLogin: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { proxyPassword: decodeURIComponent(url.password) } : {}),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    if (signal.aborted) return fail(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      done();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      fail(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

const HOUR_MS = 3_600_000;

/** A client of one solver account, bounded per job and per hour. */
export class CaptchaSolver {
  private readonly options: Required<Omit<CaptchaSolverOptions, "redis">> & { redis?: SolveCounterStore };
  /** The per-process hourly window when no Redis is given. */
  private local = { hour: -1, count: 0 };

  constructor(options: CaptchaSolverOptions) {
    if (!/^https?:\/\//.test(options.url)) throw new Error("CaptchaSolver: url must be http(s)");
    if (!options.key) throw new Error("CaptchaSolver: key is required");
    this.options = {
      ...CAPTCHA_DEFAULTS,
      redisKey: "captcha:solves",
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
      url: options.url.replace(/\/+$/, ""),
    } as CaptchaSolver["options"];
  }

  /**
   * Solves one /sorry/ CAPTCHA: counts it against the hourly cap, createTask, then getTaskResult every
   * `pollMs` until ready, within `jobTimeoutMs` and `signal`. Throws CaptchaError.
   */
  async solve(request: SolveRequest, signal?: AbortSignal): Promise<Solved> {
    const started = performance.now();
    const fields = proxyFields(request.proxyUrl);
    await this.takeSlot();
    const timeout = AbortSignal.timeout(this.options.jobTimeoutMs);
    const bound = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const task = {
        type: request.proxyUrl ? "RecaptchaV2Task" : "RecaptchaV2TaskProxyless",
        websiteURL: request.pageUrl,
        websiteKey: request.siteKey,
        ...(request.dataS ? { recaptchaDataSValue: request.dataS } : {}),
        ...fields,
      };
      const created = await this.call("createTask", { task }, bound);
      const taskId = created.taskId;
      if (typeof taskId !== "number" && typeof taskId !== "string") throw new CaptchaError("rejected", "createTask answered no taskId");
      for (;;) {
        await sleep(this.options.pollMs, bound);
        const result = await this.call("getTaskResult", { taskId }, bound);
        if (result.status === "processing") continue;
        const token = (result.solution as { gRecaptchaResponse?: unknown } | undefined)?.gRecaptchaResponse;
        if (result.status !== "ready" || typeof token !== "string" || token === "") throw new CaptchaError("rejected", "getTaskResult answered neither processing nor a token");
        const cost = Number(result.cost ?? 0);
        return { token, cost: Number.isFinite(cost) && cost >= 0 ? cost : 0, ms: Math.round(performance.now() - started) };
      }
    } catch (error) {
      if (error instanceof CaptchaError) throw error;
      if (timeout.aborted) throw new CaptchaError("timeout", `no token within ${this.options.jobTimeoutMs} ms`);
      if (signal?.aborted) throw new CaptchaError("aborted", "the job gave up");
      throw error;
    }
  }

  /** Solves started in the current clock hour (fleet-wide with Redis). */
  async usedThisHour(now = Date.now()): Promise<number> {
    const hour = Math.floor(now / HOUR_MS);
    if (!this.options.redis) return this.local.hour === hour ? this.local.count : 0;
    return Number((await this.options.redis.get(`${this.options.redisKey}:${hour}`)) ?? 0);
  }

  private async takeSlot(now = Date.now()): Promise<void> {
    const { maxPerHour, redis, redisKey } = this.options;
    const hour = Math.floor(now / HOUR_MS);
    if (redis) {
      const key = `${redisKey}:${hour}`;
      const count = await redis.incr(key);
      if (count === 1) await redis.pexpire(key, HOUR_MS * 2);
      if (count > maxPerHour) {
        await redis.decr(key);
        throw new CaptchaError("capped", `${maxPerHour} solves this hour already`);
      }
      return;
    }
    if (this.local.hour !== hour) this.local = { hour, count: 0 };
    if (this.local.count >= maxPerHour) throw new CaptchaError("capped", `${maxPerHour} solves this hour already`);
    this.local.count += 1;
  }

  /** One API call with the client key, retried on transport failures (network, 5xx) up to `retries` times. */
  private async call(method: "createTask" | "getTaskResult", body: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    let failures = 0;
    for (;;) {
      let answer: Record<string, unknown> | undefined;
      let problem: string;
      try {
        const res = await fetch(`${this.options.url}/${method}`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ clientKey: this.options.key, ...body }),
          signal,
        });
        if (res.status >= 500) problem = `${method} answered ${res.status}`;
        else {
          const parsed = (await res.json().catch(() => undefined)) as unknown;
          if (typeof parsed === "object" && parsed !== null) answer = parsed as Record<string, unknown>;
          else if (res.status >= 400) throw new CaptchaError("rejected", `${method} answered ${res.status}`);
          problem = `${method} answered ${res.status} without a JSON object`;
        }
      } catch (error) {
        if (signal.aborted || error instanceof CaptchaError) throw error;
        problem = `${method} unreachable`;
      }
      if (answer) {
        if (answer.errorId === 0 || answer.errorId === undefined) return answer;
        const code = typeof answer.errorCode === "string" && /^[A-Z0-9_]{1,64}$/.test(answer.errorCode) ? answer.errorCode : `errorId ${String(answer.errorId)}`;
        throw new CaptchaError(code === "ERROR_CAPTCHA_UNSOLVABLE" ? "unsolvable" : "rejected", `${method}: ${code}`);
      }
      failures += 1;
      if (failures > this.options.retries) throw new CaptchaError("transport", problem);
      await sleep(Math.min(this.options.pollMs, 1_000) * failures, signal);
    }
  }
}
