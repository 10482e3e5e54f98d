import { migrate, createPgPool } from "@serp/store";
const base = process.env.DATABASE_URL!;
const url = `${base}?options=${encodeURIComponent("-c search_path=tabc")}`;
await Promise.all([migrate(url, console.log), migrate(url, console.log), migrate(base)]);
const pool = createPgPool(url, "check");
console.log((await pool.query("select current_schema(), count(*) from ledger")).rows);
console.log((await pool.query("select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog','information_schema') order by 1,2")).rows);
await pool.query("drop schema tabc cascade");
await pool.end();
