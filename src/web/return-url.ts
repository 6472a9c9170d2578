/**
 * A redirect target is accepted only as a path on this site: one leading `/`, not `//` or `/\`
 * (which browsers read as another host), no backslash, no control character, no scheme.
 */
export function isLocalReturnUrl(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= 2048 &&
    value.startsWith('/') &&
    !value.startsWith('//') &&
    !value.includes('\\') &&
    !/[\u0000-\u001f\u007f-\u009f]/.test(value)
  );
}
