import { unitMillis } from "./units";

// "ms" before "m", so that "5ms" is not read as five minutes and an "s".
const PART = /(\d+(?:\.\d+)?)(ms|d|h|m|s)/y;

/** Milliseconds of a duration such as "1h30m", "90s" or "-2d". */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const negative = trimmed.startsWith("-");
  const body = negative ? trimmed.slice(1) : trimmed;
  if (body === "") {
    throw new SyntaxError("empty duration");
  }
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < body.length) {
    const start = PART.lastIndex;
    const match = PART.exec(body);
    if (match === null) {
      throw new SyntaxError(`bad duration at ${start}: ${text}`);
    }
    total += Number(match[1]) * unitMillis(match[2]);
  }
  return negative ? -total : total;
}
