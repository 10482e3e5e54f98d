import type { Redis } from "ioredis";

type Value = string | number | Buffer;

/** A Lua script whose KEYS and ARGV have names, in the script and at each call. */
export interface LuaScript<K extends string, A extends string> {
  /**
   * Runs the script on `redis` (EVALSHA, falling back to EVAL once: the text does not travel with
   * every call). Keys and args are passed by name; `rest`, for a script declared with one, follows them.
   */
  run<R = unknown>(redis: Redis, named: Record<K | A, Value>, rest?: readonly Value[]): Promise<R>;
  /** The same, with bulk replies as Buffers (a gzipped value). */
  runBuffer<R = unknown>(redis: Redis, named: Record<K | A, Value>, rest?: readonly Value[]): Promise<R>;
}

export interface ScriptSpec<K extends string, A extends string> {
  /** Names the command on each connection (`serp` + name): unique among the scripts. */
  name: string;
  /** KEYS, in order: each becomes a Lua local of that name. */
  keys: readonly K[];
  /** ARGV, in order: each becomes a Lua local of that name (a string, as Redis passes it). */
  args: readonly A[];
  /** A Lua local holding, as a table, the ARGV that follow the named ones (a list of fields). */
  rest?: string;
}

/**
 * Declares a script with named arguments: the body reads `job`, `price`… instead of KEYS[1],
 * ARGV[2], and a caller passes `{ job, price }` instead of positional values that must line up.
 */
export function script<const K extends string, const A extends string>(spec: ScriptSpec<K, A>, body: string): LuaScript<K, A> {
  const command = `serp${spec.name}`;
  const locals = (names: readonly string[], table: string) =>
    names.length ? `local ${names.join(", ")} = ${names.map((_, i) => `${table}[${i + 1}]`).join(", ")}\n` : "";
  // The source as Redis runs it: the named locals first, then the body.
  const lua =
    locals(spec.keys, "KEYS") + locals(spec.args, "ARGV") + (spec.rest ? `local ${spec.rest} = { unpack(ARGV, ${spec.args.length + 1}) }\n` : "") + body.trim();
  const argv = (named: Record<string, Value>, rest: readonly Value[] = []) => {
    if (rest.length && !spec.rest) throw new Error(`script ${spec.name} takes no further arguments`);
    return [...spec.keys.map((k) => named[k]!), ...spec.args.map((a) => named[a]!), ...rest];
  };
  const call = (redis: Redis, name: string, args: Value[]) => {
    const r = redis as unknown as Record<string, ((...a: Value[]) => Promise<unknown>) | undefined>;
    if (!r[command]) redis.defineCommand(command, { numberOfKeys: spec.keys.length, lua });
    return r[name]!.apply(redis, args);
  };
  return {
    run: async (redis, named, rest) => (await call(redis, command, argv(named, rest))) as never,
    runBuffer: async (redis, named, rest) => (await call(redis, `${command}Buffer`, argv(named, rest))) as never,
  };
}
