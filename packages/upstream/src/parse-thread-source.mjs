// The parse thread's entry when the service runs from its TypeScript source (through tsx): the
// thread registers tsx's ESM loader itself, then loads the thread module as ESM.
import { register } from "tsx/esm/api";

register();
const { default: parse } = await import("./parse-thread.ts");
export default parse;
