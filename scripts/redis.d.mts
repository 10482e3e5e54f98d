import type { ChildProcess } from "node:child_process";
export function redisServerBinary(): string;
export function freePort(): Promise<number>;
export function ping(port: number, timeoutMs?: number): Promise<boolean>;
export const DEFAULT_DATA_DIR: string;
export const URL_FILE: string;
export function redisServerProcess(port: number, dir: string): ChildProcess;
export function waitForRedis(port: number, child: ChildProcess, dir: string): Promise<ChildProcess>;
export function spawnRedis(port: number, dir: string): Promise<ChildProcess>;
