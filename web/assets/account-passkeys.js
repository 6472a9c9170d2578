// /Account/Passkeys: the signed-in user's passkeys (contract 20): add, rename, remove.
import { content, startPage } from './layout.js';
import { passkeysCard } from './passkeys.js';

await startPage();
const root = content();
root.append(passkeysCard({ own: true, title: 'Your passkeys' }));
root.dataset.ready = 'true';
document.body.dataset.ready = 'true';
