import type { ChildProcess } from "node:child_process";
export function redisServerBinary(): string;
export function freePort(): Promise<number>;
export function ping(port: number, timeoutMs?: number): Promise<boolean>;
export function spawnRedis(port: number, dir: string): Promise<ChildProcess>;
