import { Queue, Worker, type Job, type JobsOptions, type WorkerOptions } from "bullmq";
import type { Redis } from "ioredis";
import type { z } from "zod";
import type { Closers } from "@serp/shared";
import { createRedis, type RedisTarget } from "./redis.js";

/** A queue as declared once: its name, what its jobs carry, and how BullMQ keeps and retries them. */
export interface QueueSpec<S extends z.ZodType> {
  name: string;
  /** Every job's data, checked on the way in (`enqueue`) and on the way out (`work`). */
  payload: S;
  /** The BullMQ options of every job (attempts, back-off, how long finished jobs are kept). */
  jobOptions: JobsOptions;
  /** A job's BullMQ id, from its payload: enqueueing the same id again while the queue holds it is a no-op. */
  jobId: (payload: z.output<S>) => string;
  /** A job's name when `enqueue` is not told one. */
  jobName?: string;
}

/** Where a process's queues live, and who closes what they open. */
export interface QueueHost {
  /** Workers each open their own worker-role connection here (BullMQ blocks on it): REDIS_URL, or the Sentinel set. */
  redisUrl: RedisTarget;
  /** BullMQ's key prefix (`keySpace(prefix).bullPrefix`). */
  prefix: string;
  closers: Closers;
  /** Told of producer and worker errors (a Redis outage): the process logs them; they are never thrown. */
  onError?: (err: Error, from: { queue: string; side: "producer" | "worker" }) => void;
}

/** A producer needs no connection of its own: it is handed the process's. */
export type ProducerHost = Omit<QueueHost, "redisUrl">;

/** The producer side of a queue, opened on a connection the process owns. */
export interface Producer<S extends z.ZodType> {
  /** The BullMQ queue (job states, counts, removal, the dashboard). */
  readonly queue: Queue;
  /** Checks `payload` with the queue's schema, then adds it under its BullMQ id with the queue's job options (`opts` add to them). */
  enqueue(payload: z.input<S>, opts?: Omit<JobsOptions, "jobId"> & { name?: string }): Promise<Job>;
}

/** A job's processor, given its data as the queue's schema parsed it. */
export type QueueProcessor<S extends z.ZodType> = (job: Job, payload: z.output<S>, token?: string, signal?: AbortSignal) => Promise<void>;

export type QueueDefinition<S extends z.ZodType> = QueueSpec<S> & {
  /**
   * A producer on `connection`, which the process shares among its producers and closes itself (the
   * API's fail-fast command connection, so a submission errors at once while Redis is down).
   */
  open(host: ProducerHost, connection: Redis): Producer<S>;
  /**
   * A BullMQ worker on its own worker-role connection; each job's data is parsed with this queue's
   * schema before `processor` sees it. The worker, then its connection, close with `host.closers`.
   */
  work(host: QueueHost, processor: QueueProcessor<S>, options: Omit<WorkerOptions, "connection" | "prefix">): Worker;
};

/** Declares a queue: the one place its name, payload schema and job options are written. */
export function defineQueue<S extends z.ZodType>(spec: QueueSpec<S>): QueueDefinition<S> {
  return {
    ...spec,
    open(host, connection) {
      const queue = new Queue(spec.name, { connection, prefix: host.prefix });
      queue.on("error", (err) => host.onError?.(err, { queue: spec.name, side: "producer" }));
      host.closers.add(`queue ${spec.name}`, () => queue.close());
      return {
        queue,
        async enqueue(payload, { name, ...opts } = {}) {
          const data = spec.payload.parse(payload);
          return queue.add(name ?? spec.jobName ?? spec.name, data, { ...spec.jobOptions, ...opts, jobId: spec.jobId(data) });
        },
      };
    },
    work(host, processor, options) {
      // BullMQ never closes a connection it was handed: it gets its own closer, run after the worker's.
      const connection = createRedis(host.redisUrl, "worker", `worker-${spec.name}`);
      connection.on("error", () => undefined);
      host.closers.add(`redis worker-${spec.name}`, () => connection.quit().catch(() => connection.disconnect()));
      const worker = new Worker(spec.name, (job, token, signal) => processor(job, spec.payload.parse(job.data), token, signal), {
        ...options,
        connection,
        prefix: host.prefix,
      });
      worker.on("error", (err) => host.onError?.(err, { queue: spec.name, side: "worker" }));
      host.closers.add(`worker ${spec.name}`, () => worker.close());
      return worker;
    },
  };
}
