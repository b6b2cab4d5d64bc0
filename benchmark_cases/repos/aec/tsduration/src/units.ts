/** Milliseconds in each unit a duration string may use, largest first. */
export const UNITS: ReadonlyArray<readonly [string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
  ["ms", 1],
];

export function unitMillis(unit: string): number {
  const found = UNITS.find(([name]) => name === unit);
  if (found === undefined) {
    throw new RangeError(`unknown unit: ${unit}`);
  }
  return found[1];
}
