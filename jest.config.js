export default {
  extensionsToTreatAsEsm: [".ts"],
  transform: { "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } }] },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testEnvironment: "node",
  reporters: ["default", "<rootDir>/scripts/slowest-suites.mjs"],
  testMatch: ["<rootDir>/test/**/*.test.ts", "<rootDir>/{apps,packages}/*/src/**/*.test.ts", "<rootDir>/{apps,packages}/*/test/**/*.test.ts"],
};
