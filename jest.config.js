export default {
  extensionsToTreatAsEsm: [".ts"],
  transform: { "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } }] },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  // Node's environment, measuring each file's CPU for the slowest-files reporter.
  testEnvironment: "<rootDir>/scripts/cpu-environment.mjs",
  // The longest files first, also on a fresh clone with no timings cached.
  testSequencer: "<rootDir>/scripts/heavy-first-sequencer.mjs",
  // A bound, not a measure: a test or hook waits for what it asserts, and on a busy 2-core machine
  // starting a stack or running a few live jobs can pass Jest's 5 s default. Tests that assert a
  // duration do so themselves.
  testTimeout: 60_000,
  reporters: ["default", "<rootDir>/scripts/slowest-suites.mjs"],
  testMatch: ["<rootDir>/test/**/*.test.ts", "<rootDir>/{apps,packages}/*/src/**/*.test.ts", "<rootDir>/{apps,packages}/*/test/**/*.test.ts"],
};
