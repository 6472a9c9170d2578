/**
 * What the pages import from layout.js, declared for the check of web/assets until layout.js is
 * checked itself (see web/tsconfig.json): it is being rewritten to read the menu from the server.
 */
import type { Session } from './api-types.js';

export interface MenuItem {
  path: string;
  label: string;
  may?: (session: Session) => boolean;
}

export declare const MENU: { section: string | null; items: MenuItem[] }[];
export declare function allowedMenu(session: Session): { section: string | null; items: MenuItem[] }[];
/** Removes the signed-in frame (after sign-out). */
export declare function showSignedOut(): void;
/** Reads the session and draws the frame; `optional` answers null without a session. */
export declare function startPage(options?: { session?: 'required' }): Promise<Session>;
export declare function startPage(options: { session: 'optional' }): Promise<Session | null>;
/** The page's content element, emptied. */
export declare function content(): HTMLElement;
