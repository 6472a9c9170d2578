import { ManualClock } from '../common/clock';
import { ForegroundWork } from '../common/foreground-work';
import { AppSettings } from '../config/config.module';
import { PasswordHasher } from './password-hasher.service';

describe('PasswordHasher reports its hashes to ForegroundWork (issue 30: sink delivery yields to them)', () => {
  const settings = { passwordHashingKey: undefined } as unknown as AppSettings;

  it('counts every hash from the moment it is asked for (queued or running) until it ends', async () => {
    const work = new ForegroundWork(new ManualClock(0));
    const hasher = new PasswordHasher(settings, work);
    expect(work.waiting()).toBe(false);
    const hashes = [hasher.hash('first-Passw0rd'), hasher.hash('second-Passw0rd'), hasher.hash('third-Passw0rd')];
    expect(work.inProgress()).toBe(3);
    const [first] = await Promise.all(hashes);
    expect(work.inProgress()).toBe(0);
    expect(await hasher.verify(first, 'first-Passw0rd')).toBe(true);
    expect(work.inProgress()).toBe(0);
  });

  it('a verify that fails (malformed stored hash) still ends its count', async () => {
    const work = new ForegroundWork(new ManualClock(0));
    const hasher = new PasswordHasher(settings, work);
    expect(await hasher.verify('$argon2id$not-a-hash', 'whatever')).toBe(false);
    expect(work.inProgress()).toBe(0);
  });
});
