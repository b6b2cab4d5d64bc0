import test from "node:test";
import assert from "node:assert/strict";
import { addDurations, formatDuration, parseDuration } from "../src/index";

test("formats zero as 0s", () => {
  assert.equal(formatDuration(0), "0s");
});

test("formats the largest units first", () => {
  assert.equal(formatDuration(93_784_005), "1d2h3m4s5ms");
});

test("format and parse round-trip", () => {
  for (const text of ["1h30m", "-45s", "2d", "999ms"]) {
    assert.equal(formatDuration(parseDuration(text)), text);
  }
});

test("adds durations", () => {
  assert.equal(addDurations("45m", "30m", "-15m"), "1h");
});
