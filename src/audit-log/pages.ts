/**
 * Page sizes of the contract 15 routes: the most one answer holds. The service enforces them and the
 * verifier relies on them (a page shorter than CHECKPOINTS_PAGE is the last), so both read them here.
 */

/** Most checkpoints one GET /api/Audit/Checkpoints answers. */
export const CHECKPOINTS_PAGE = 1000;
/** Most leaves one GET /api/Audit/Leaves answers. */
export const LEAVES_PAGE = 10_000;
