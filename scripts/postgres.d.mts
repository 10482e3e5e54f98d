import type { ChildProcess } from "node:child_process";
export const DEFAULT_DATA_DIR: string;
export const URL_FILE: string;
export const DATABASE: string;
export function postgresBinDir(): string;
export function initCluster(dir: string, options?: { fast?: boolean }): void;
export function postgresProcess(port: number, dir: string, options?: { fast?: boolean }): ChildProcess;
export function isReady(port: number): boolean;
export function waitForPostgres(port: number, child: ChildProcess, dir: string): Promise<ChildProcess>;
export function createDatabase(port: number, database?: string): void;
export function databaseUrl(port: number, database?: string): string;
export interface PrivatePostgres {
  url: string;
  port: number;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}
export function startPostgres(dir: string, options?: { fast?: boolean; port?: number }): Promise<PrivatePostgres>;
export function findPostgresBinDir(options?: {
  env?: Record<string, string | undefined>;
  debian?: string;
  homebrew?: string[];
}): { dir: string; via: "PATH" | "pg_config --bindir" | "Debian" | "Homebrew" } | undefined;
