/**
 * The member names of a numeric TypeScript enum by value (`{ 1: 'TenantCreated', … }`), for code tables
 * whose names are exactly the enum's: the enum is then the one place a member is written.
 */
export function enumNames(numericEnum: Record<string, string | number>): Record<number, string> {
  const names: Record<number, string> = {};
  for (const [name, value] of Object.entries(numericEnum)) if (typeof value === 'number') names[value] = name;
  return names;
}
