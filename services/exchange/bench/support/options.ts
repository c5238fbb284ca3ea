/** `--name value` from the command line, or `fallback`. */
export function stringOption(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1]! : fallback;
}

/** `--name <number>` from the command line, or `fallback`. */
export function numberOption(name: string, fallback: number): number {
  return Number(stringOption(name, String(fallback)));
}
