/**
 * Imported first by every entry point, before anything that could fail on an older Node.js: refuses
 * to start on a Node.js outside package.json's `engines.node` (">=X.Y[.Z]") with one line, instead of
 * a stack trace from deep inside a dependency.
 */
function requiredNode(): string {
  try {
    return (require('../package.json') as { engines?: { node?: string } }).engines?.node ?? '>=20.19';
  } catch {
    return '>=20.19';
  }
}

/** Whether `version` ("20.20.2") satisfies `range` (">=20.19"); only the ">=" form is used here. */
export function satisfiesMinimum(version: string, range: string): boolean {
  const wanted = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(range);
  if (!wanted) return true;
  const have = version.replace(/^v/, '').split('.').map(Number);
  const need = [Number(wanted[1]), Number(wanted[2] ?? 0), Number(wanted[3] ?? 0)];
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) !== need[i]) return (have[i] ?? 0) > need[i];
  }
  return true;
}

const range = requiredNode();
if (!satisfiesMinimum(process.versions.node, range)) {
  process.stderr.write(`Refusing to start: Node.js ${range.replace(/\s/g, '')} is required, this is ${process.version} (${process.execPath})\n`);
  process.exit(78);
}
