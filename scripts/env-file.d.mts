export function readEnvFile(
  dir: string,
  env?: Record<string, string | undefined>,
): Promise<{ path: string; applied: string[]; overridden: string[] } | undefined>;
