/** Permission specifications this service checks (contract 6). A landlord holds every one. */
export const Permission = {
  ReadWriteSecurityRole: 34,
  ReadWriteSecurityUser: 35,
} as const;

export const PERMISSION_NAMES: Record<number, string> = {
  [Permission.ReadWriteSecurityRole]: 'Read Write Security Role',
  [Permission.ReadWriteSecurityUser]: 'Read Write Security User',
};
