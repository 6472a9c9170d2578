/** The members of `values` that are not undefined: what a partial update (PUT with omitted members) changes. */
export function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
