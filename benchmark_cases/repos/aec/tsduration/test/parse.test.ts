import test from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/parse";

test("parses hours and minutes", () => {
  assert.equal(parseDuration("1h30m"), 5_400_000);
});

test("parses milliseconds apart from minutes", () => {
  assert.equal(parseDuration("5ms"), 5);
  assert.equal(parseDuration("2m5ms"), 120_005);
});

test("parses fractions and a sign", () => {
  assert.equal(parseDuration("1.5s"), 1_500);
  assert.equal(parseDuration("-2d"), -172_800_000);
});

test("rejects unknown units", () => {
  assert.throws(() => parseDuration("3w"), SyntaxError);
  assert.throws(() => parseDuration(""), SyntaxError);
});
