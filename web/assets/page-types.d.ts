/**
 * Types the page modules share that no one module owns, for the check of web/assets
 * (web/tsconfig.json). Not served.
 */

/**
 * What h() and s() (dom.js) accept as children: nodes, text (numbers written as text), nested lists,
 * and null, undefined or false for "nothing here".
 */
export type Child = Node | string | number | null | undefined | false | Child[];
