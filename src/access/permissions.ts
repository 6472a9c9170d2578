/** Permission specifications this service checks (contract 6). A landlord holds every one. */
export const Permission = {
  ReadWriteSecurityRole: 34,
  ReadWriteSecurityUser: 35,
} as const;

export const PERMISSION_NAMES: Record<number, string> = {
  [Permission.ReadWriteSecurityRole]: 'Read Write Security Role',
  [Permission.ReadWriteSecurityUser]: 'Read Write Security User',
};

/** What each permission lets a user do, in the words of the pages it opens (shown on the Roles page). */
export const PERMISSION_NOTES: Record<number, string> = {
  [Permission.ReadWriteSecurityRole]: 'Manage roles and the permissions they grant (the Roles page).',
  [Permission.ReadWriteSecurityUser]:
    'Manage users, their API keys and sessions, and read the sign-in and sign-out history (the Users, User Login and User Logout pages).',
};
