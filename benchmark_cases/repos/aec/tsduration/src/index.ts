import { formatDuration } from "./format";
import { parseDuration } from "./parse";

export { formatDuration, parseDuration };
export { UNITS } from "./units";

/** The sum of durations given as strings, formatted again. */
export function addDurations(...texts: string[]): string {
  return formatDuration(texts.reduce((sum, text) => sum + parseDuration(text), 0));
}
