/**
 * How a profile's request goes out, one entry per transport, each written in its own file: `http`
 * (got over Node's TLS, fetch.ts), `impersonate` (impit with a browser's TLS, impersonate.ts) and
 * `browser` (a real Chromium, browser.ts). A profile names its transport (profiles.ts); scrape.ts
 * sends every try through this table.
 */
import type { JobParams } from "@serp/shared";
import type { BrowserPool } from "./browser.js";
import { browserTransport } from "./browser.js";
import { httpTransport, type DirectAgents, type FetchResult, type FetchSettings } from "./fetch.js";
import { impersonateTransport, type ImpersonatingClients } from "./impersonate.js";
import type { Profile, TransportName } from "./profiles.js";
import type { Proxy } from "./proxies.js";

/** One try's request, as every transport takes it. */
export interface TransportRequest {
  url: string;
  profile: Profile;
  params: JobParams;
  /** The profile's headers (agent, language, cookie, its own), without the session's cookies. */
  headers: Record<string, string>;
  proxy?: Proxy;
  signal?: AbortSignal;
  /** The cookies the try's session holds (an exemption a solved /sorry/ page earned). */
  jar?: ReadonlyMap<string, string>;
}

/** What the transports of one upstream share: its settings and its clients, each made once. */
export interface TransportClients {
  settings: FetchSettings;
  direct: DirectAgents;
  impersonating: ImpersonatingClients;
  /** The browser pool, launched (or connected) when a browser profile is first used. */
  browsers(): BrowserPool;
}

export interface Transport {
  /** How a try record names the transport a profile went over. */
  label(profile: Profile): string;
  /** Sends one request; resolves with a response or a failure, rejects only on abort. */
  send(req: TransportRequest, clients: TransportClients): Promise<FetchResult>;
}

export const TRANSPORTS: Record<TransportName, Transport> = {
  http: httpTransport,
  impersonate: impersonateTransport,
  browser: browserTransport,
};
