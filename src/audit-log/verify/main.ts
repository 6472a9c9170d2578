import { USAGE, parseArgs, type VerifyOptions } from './args';
import { TransportError, VerificationFailure } from './errors';
import { summaryLine, verifyAuditLog } from './verifier';

/**
 * `npm run audit:verify -- --url <base url> --api-key <key> [--verifier-key <vkey>] [--known <file>]
 * [--retention <interval>]`: exit 0 with the summary line, 1 naming the first bad leaf or checkpoint,
 * 2 when the service cannot be asked (or the command line is wrong).
 */
export async function run(argv: readonly string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  let options: VerifyOptions;
  try {
    options = parseArgs(argv);
  } catch (error) {
    err(`audit:verify: ${(error as Error).message}`);
    err(USAGE);
    return 2;
  }
  try {
    const result = await verifyAuditLog(options, out);
    out(summaryLine(result));
    return 0;
  } catch (error) {
    if (error instanceof VerificationFailure) {
      out(`FAILED: ${error.message}`);
      return 1;
    }
    if (error instanceof TransportError) {
      err(`audit:verify: cannot verify: ${error.message}`);
      return 2;
    }
    err(`audit:verify: cannot verify: ${(error as Error).message}`);
    return 2;
  }
}

if (require.main === module) {
  run(
    process.argv.slice(2),
    (line) => process.stdout.write(`${line}\n`),
    (line) => process.stderr.write(`${line}\n`),
  ).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`audit:verify: ${(error as Error).message}\n`);
      process.exitCode = 2;
    },
  );
}
