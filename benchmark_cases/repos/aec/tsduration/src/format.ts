import { UNITS } from "./units";

/** The shortest string parseDuration reads back as ``millis``: "1h30m", "0s" for zero. */
export function formatDuration(millis: number): string {
  if (!Number.isFinite(millis)) {
    throw new RangeError("a duration must be finite");
  }
  if (millis === 0) {
    return "0s";
  }
  let rest = Math.abs(Math.round(millis));
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      parts.push(`${count}${unit}`);
      rest -= count * size;
    }
  }
  return (millis < 0 ? "-" : "") + parts.join("");
}
