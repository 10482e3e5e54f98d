/** The account store's scripts (accounts.ts). */
import { LEDGER_STREAM_MAXLEN } from "../ledger-stream.js";
import { script } from "./script.js";

/** Grants are appended to the ledger stream with the balance change in one step, like every other ledger entry. */
export const GRANT = script(
  { name: "Grant", keys: ["account", "ledger"], args: ["credits", "entry"] },
  `
if redis.call('EXISTS', account) == 0 then return -1 end
redis.call('HINCRBY', account, 'balance', credits)
redis.call('XADD', ledger, 'MAXLEN', '~', '${LEDGER_STREAM_MAXLEN}', '*', 'e', entry)
return 1`,
);

/** Sets (value) or removes ("") limit override fields, only on an account that exists. `changes`: field, value, … */
export const SET_LIMITS = script(
  { name: "SetLimits", keys: ["account"], args: [], rest: "changes" },
  `
if redis.call('EXISTS', account) == 0 then return 0 end
for i = 1, #changes, 2 do
  if changes[i + 1] == '' then redis.call('HDEL', account, changes[i]) else redis.call('HSET', account, changes[i], changes[i + 1]) end
end
return 1`,
);
